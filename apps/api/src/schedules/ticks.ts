import type { Scheduling } from '@scrapejobs/contracts';
import type { Database, Mode } from '@scrapejobs/db';
import { AppError, type JobsService, nextRunAt, type Scheduler } from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';
import { Counter, type Registry } from '@scrapejobs/observability';
import { catalog } from '@scrapejobs/queues';
import { type ConnectionOptions, Worker } from 'bullmq';

export type TickOutcome = 'started' | 'skipped-running' | 'skipped-paused' | 'orphan';

/**
 * Handles one planned time of a job: the same `run` path as a manual run (trigger
 * `schedule`), skipped (and logged) while the previous run is still running or the job is paused.
 */
export async function handleTick(
  deps: { db: Database; jobs: JobsService; scheduler: Scheduler; log: Logger },
  jobId: string,
  now = new Date(),
): Promise<TickOutcome> {
  const { rows } = await deps.db.pool.query<{
    user_id: string;
    mode: Mode;
    status: string;
    scheduling: Scheduling | null;
  }>({
    name: 'ticks-job',
    text: 'SELECT user_id, mode::text AS mode, status::text AS status, scheduling FROM jobs WHERE id = $1',
    values: [jobId],
  });
  const job = rows[0];
  if (!job?.scheduling) {
    await deps.scheduler.disarm(jobId);
    return 'orphan';
  }
  if (job.status === 'paused') return 'skipped-paused';
  const next = nextRunAt(job.scheduling, now);
  try {
    await deps.jobs.run({ userId: job.user_id, mode: job.mode }, jobId, 'schedule', next);
    return 'started';
  } catch (err) {
    if (!(err instanceof AppError && err.status === 409)) throw err;
  }
  await deps.db.pool.query({
    name: 'ticks-next-run',
    text: `UPDATE jobs SET next_run_at = $2 WHERE id = $1 AND status <> 'paused'`,
    values: [jobId, next.toISOString()],
  });
  deps.log.info({ job_id: jobId }, 'schedule tick skipped: the previous run is still running');
  return 'skipped-running';
}

/** Ticks one API process handles at once: no more than its database pool has connections. */
export const TICK_CONCURRENCY = 16;

/**
 * Consumes schedule ticks; any number of API processes can run it, each tick is handled once.
 * Every tick's outcome is counted in `schedule_ticks_total` (and kept as the tick's result).
 */
export function startTickWorker(
  deps: { db: Database; jobs: JobsService; scheduler: Scheduler; log: Logger; registry: Registry },
  connection: ConnectionOptions,
  prefix: string,
): Worker {
  const outcomes = new Counter({
    name: 'schedule_ticks_total',
    help: 'Schedule ticks handled, by outcome (started, skipped-running, skipped-paused, orphan, error).',
    labelNames: ['outcome'] as const,
    registers: [deps.registry],
  });
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
