import { hostname } from 'node:os';
import type { Logger } from '@scrapejobs/logging';
import { catalog, type Payload } from '@scrapejobs/queues';
import { type ConnectionOptions, type Job, Worker } from 'bullmq';
import { type SessionDeps, serveSession } from './session.ts';

export interface InteractConsumerOptions {
  connection: ConnectionOptions;
  prefix: string;
  /** INTERACT_SESSIONS_PER_WORKER: sessions this worker serves at once (each holds a page). */
  sessions: number;
  log: Logger;
}

/**
 * Takes interact sessions off their queue (docs/api.md §18), `sessions` at once, each served here
 * until it ends. A session whose worker dies is not moved to another worker (no stalled job is
 * taken again): its page and state died with it, and the scrape's next call says so.
 */
export function startInteractConsumer(
  deps: Omit<SessionDeps, 'worker'>,
  opts: InteractConsumerOptions,
): { ready(): Promise<void>; close(): Promise<void> } {
  const shutdown = new AbortController();
  const worker = new Worker(
    catalog.interactSessions.name,
    async (job: Job<Payload<'interactSessions'>>) => {
      const ticket = catalog.interactSessions.payload.parse(job.data);
      await serveSession({ ...deps, worker: `${hostname()}:${process.pid}` }, ticket, shutdown.signal);
    },
    {
      connection: opts.connection,
      prefix: opts.prefix,
      concurrency: opts.sessions,
      maxStalledCount: 0,
      autorun: false,
    },
  );
  worker.on('error', (err) => opts.log.warn({ err: err.message }, 'interact session queue error'));
  worker.on('failed', (job, err) =>
    opts.log.warn({ err: err.message, session: job?.id }, 'interact session failed'),
  );
  void worker.run();
  return {
    ready: () => worker.waitUntilReady().then(() => {}),
    async close() {
      // Sessions end within their poll, answering what is left; then the worker stops.
      shutdown.abort();
      await worker.close();
    },
  };
}
