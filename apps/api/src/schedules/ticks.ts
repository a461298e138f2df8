import type { JobsService, TickOutcome } from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';
import { counter, type Registry } from '@scrapejobs/observability';
import { catalog } from '@scrapejobs/queues';
import { type ConnectionOptions, Worker } from 'bullmq';

/** Handles one planned time of a job (JobsService.tick), and logs a tick skipped while the job runs. */
export async function handleTick(
  deps: { jobs: JobsService; log: Logger },
  jobId: string,
  now?: Date,
): Promise<TickOutcome> {
  const outcome = await deps.jobs.tick(jobId, now);
  if (outcome === 'skipped-running')
    deps.log.info({ job_id: jobId }, 'schedule tick skipped: the previous run is still running');
  return outcome;
}

/** Ticks one API process handles at once: no more than its database pool has connections. */
export const TICK_CONCURRENCY = 16;

/**
 * Consumes schedule ticks; any number of API processes can run it, each tick is handled once.
 * Every tick's outcome is counted in `schedule_ticks_total` (and kept as the tick's result).
 */
export function startTickWorker(
  deps: { jobs: JobsService; log: Logger; registry: Registry },
  connection: ConnectionOptions,
  prefix: string,
): Worker {
  const outcomes = counter(
    deps.registry,
    'schedule_ticks_total',
    'Schedule ticks handled, by outcome (started, skipped-running, skipped-paused, orphan, error).',
    ['outcome'],
  );
  const worker = new Worker(
    catalog.scheduleTicks.name,
    async (tick) => handleTick(deps, catalog.scheduleTicks.payload.parse(tick.data).jobId),
    { connection, prefix, concurrency: TICK_CONCURRENCY },
  );
  worker.on('completed', (_tick, outcome: TickOutcome) => outcomes.inc({ outcome }));
  worker.on('failed', () => outcomes.inc({ outcome: 'error' }));
  worker.on('error', (err) => deps.log.warn({ err: err.message }, 'tick worker error'));
  return worker;
}
