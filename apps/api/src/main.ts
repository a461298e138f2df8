import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '@scrapejobs/db';
import { JobsService, QueueScheduler, type RunDispatcher, subscribedKeyCache } from '@scrapejobs/domain';
import { createLogger } from '@scrapejobs/logging';
import { createRegistry, registerQueueMetrics } from '@scrapejobs/observability';
import { createQueue, runCancelChannel } from '@scrapejobs/queues';
import { Redis } from 'ioredis';
import { createApp } from './app.ts';
import { loadApiConfig } from './config.ts';
import { QueryCompiler } from './jobs/query-compiler.ts';
import { startTickWorker } from './schedules/ticks.ts';

const config = loadApiConfig(process.env);
const log = createLogger('api', config.LOG_LEVEL);
const db = createDatabase({
  url: config.DATABASE_URL,
  max: 20,
  queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
});

// No offline queue: while Redis is away a command fails at once and the request gets 503.
const redisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  connectTimeout: 1_500,
  commandTimeout: 1_500,
};
const redis = new Redis(config.REDIS_URL, redisOptions);
redis.on('error', (err) => log.warn({ err: err.message }, 'redis connection error'));
const { cache: keyCache, subscriber: keySubscriber } = subscribedKeyCache(redis, config.QUEUE_PREFIX);
const runs = createQueue('scrapeRuns', new Redis(config.REDIS_URL, redisOptions), config.QUEUE_PREFIX);
runs.on('error', (err) => log.warn({ err: err.message }, 'queue connection error'));

const dispatcher: RunDispatcher = {
  async enqueue(runId, jobId) {
    await runs.add('run', { runId, jobId }, { jobId: runId });
  },
  async cancel(runId) {
    await redis.publish(runCancelChannel(config.QUEUE_PREFIX), runId);
  },
};

const ticks = createQueue('scheduleTicks', new Redis(config.REDIS_URL, redisOptions), config.QUEUE_PREFIX);
ticks.on('error', (err) => log.warn({ err: err.message }, 'queue connection error'));
const scheduler = new QueueScheduler(ticks);
const jobs = new JobsService(db, dispatcher, scheduler);
const registry = createRegistry('api');
registerQueueMetrics(registry, [runs, ticks]);
const compiler = new QueryCompiler();
const app = createApp(
  { config, db, redis, keyCache, dispatcher, scheduler, log, registry, queues: [runs, ticks], compiler },
  jobs,
);
const tickWorker = startTickWorker(
  { db, jobs, scheduler, log, registry },
  new Redis(config.REDIS_URL, { maxRetriesPerRequest: null }),
  config.QUEUE_PREFIX,
);
// Schedules live in Redis and PostgreSQL: put back any that Redis lost, drop orphans.
scheduler.reconcile(db).then(
  (r) => (r.armed.length || r.removed.length) && log.info(r, 'schedules reconciled'),
  (err: Error) =>
    log.warn({ err: err.message }, 'schedule reconciliation failed; it runs again at the next start'),
);
// Commands fail at once while Redis connects (no offline queue), so wait for it briefly before
// taking requests; if it stays away the API still starts and answers 503 until it is back.
await Promise.race([once(redis, 'ready'), sleep(3_000)]);
const server: Server = app.listen(config.PORT, () => {
  log.info({ port: (server.address() as AddressInfo).port }, 'api listening');
});
server.keepAliveTimeout = 65_000;

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down: finishing in-flight requests');
  const deadline = setTimeout(() => {
    log.warn('shutdown deadline reached; closing remaining connections');
    server.closeAllConnections();
  }, config.SHUTDOWN_TIMEOUT_MS);
  deadline.unref();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  clearTimeout(deadline);
  await Promise.allSettled([
    tickWorker.close(),
    runs.close(),
    ticks.close(),
    compiler.close(),
    db.$disconnect(),
  ]);
  redis.disconnect();
  keySubscriber.disconnect();
  await db.pool.end().catch(() => {});
  log.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
