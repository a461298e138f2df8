import type { AddressInfo } from 'node:net';
import { createDatabase } from '@scrapejobs/db';
import {
  DeliveryStore,
  LostDeliverySweep,
  OutboxFanOut,
  pruneEvents,
  startFanOutLoop,
} from '@scrapejobs/domain';
import { createLogger } from '@scrapejobs/logging';
import {
  Counter,
  check,
  createRegistry,
  Gauge,
  Histogram,
  registerQueueMetrics,
  startOpsServer,
} from '@scrapejobs/observability';
import { DEVELOPMENT_SECRET_KEY, SecretBox } from '@scrapejobs/outbound';
import { catalog, createQueue } from '@scrapejobs/queues';
import { Worker } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { loadWebhookWorkerConfig } from './config.ts';
import { DeliveryProcessor, retryBackoff } from './delivery.ts';
import { WebhookPoster } from './http-post.ts';

const config = loadWebhookWorkerConfig(process.env);
const log = createLogger('webhook-worker', config.LOG_LEVEL);
if (!config.WEBHOOK_SECRET_KEY)
  log.warn(
    'WEBHOOK_SECRET_KEY is not set: webhook secrets are opened with the public development key, which protects nothing; set the same 32-byte key as the API outside development',
  );
const box = new SecretBox(
  config.WEBHOOK_SECRET_KEY ?? DEVELOPMENT_SECRET_KEY,
  config.WEBHOOK_SECRET_KEY_PREVIOUS,
);
const db = createDatabase({ url: config.DATABASE_URL, max: Math.min(config.WEBHOOK_CONCURRENCY, 40) + 4 });

const redisFor = (name: string, extra: RedisOptions = {}) => {
  const r = new Redis(config.REDIS_URL, {
    maxRetriesPerRequest: null,
    connectionName: `webhook-worker:${name}`,
    ...extra,
  });
  r.on('error', (err) => log.warn({ err: err.message, connection: name }, 'redis connection error'));
  return r;
};

// The producer fails fast while Redis is away, so a fan-out pass rolls back instead of hanging.
const producer = redisFor('producer', { maxRetriesPerRequest: 1, enableOfflineQueue: false });
const queue = createQueue('webhookDeliveries', producer, config.QUEUE_PREFIX);
queue.on('error', (err) => log.warn({ err: err.message }, 'queue connection error'));

const poster = new WebhookPoster({
  timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS,
  maxSockets: config.WEBHOOK_CONCURRENCY,
});
const registry = createRegistry('webhook-worker');
const attempts = new Counter({
  name: 'webhook_attempts_total',
  help: 'Delivery attempts by outcome: succeeded, retrying (failed, retried later) or failed (for good).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
const attemptSeconds = new Histogram({
  name: 'webhook_attempt_duration_seconds',
  help: 'Time from sending an attempt to its answer or failure.',
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});
new Gauge({
  name: 'webhook_outbox_oldest_seconds',
  help: 'Age of the oldest event not yet fanned out into deliveries (0 when none waits).',
  registers: [registry],
  async collect() {
    const { rows } = await db.pool.query<{ age: string | null }>(
      `SELECT extract(epoch FROM (now() AT TIME ZONE 'UTC') - min(created_at)) AS age
       FROM events WHERE dispatched_at IS NULL`,
    );
    this.set(Math.max(0, Number(rows[0]?.age ?? 0)));
  },
});
registerQueueMetrics(registry, [queue]);

const processor = new DeliveryProcessor(new DeliveryStore(db.pool), poster, box, log, {
  observe: (outcome, durationMs) => {
    attempts.inc({ outcome });
    attemptSeconds.observe(durationMs / 1000);
  },
});
const worker = new Worker(catalog.webhookDeliveries.name, (job, token) => processor.process(job, token), {
  connection: redisFor('worker'),
  prefix: config.QUEUE_PREFIX,
  concurrency: config.WEBHOOK_CONCURRENCY,
  settings: { backoffStrategy: retryBackoff(config.WEBHOOK_RETRY_DELAYS_MS) },
});
worker.on('error', (err) => log.warn({ err: err.message }, 'worker error'));

await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
const fanOut = startFanOutLoop(new OutboxFanOut(db.pool, queue, config.WEBHOOK_OUTBOX_BATCH), {
  pollMs: config.WEBHOOK_OUTBOX_POLL_MS,
  batchSize: config.WEBHOOK_OUTBOX_BATCH,
  log,
});
const requeuedTotal = new Counter({
  name: 'webhook_deliveries_requeued_total',
  help: 'Pending deliveries the sweep queued again because no queue entry could still attempt them.',
  registers: [registry],
});
const prunedTotal = new Counter({
  name: 'webhook_outbox_events_pruned_total',
  help: 'Outbox events deleted after WEBHOOK_OUTBOX_RETENTION_DAYS.',
  registers: [registry],
});
const lost = new LostDeliverySweep(db.pool, queue, { retryDelays: config.WEBHOOK_RETRY_DELAYS_MS });
const sweep = setInterval(() => {
  lost.runOnce().then(
    (ids) => {
      if (ids.length === 0) return;
      requeuedTotal.inc(ids.length);
      log.warn({ delivery_ids: ids }, 're-queued pending deliveries that had no queue entry');
    },
    (err: Error) => log.warn({ err: err.message }, 'delivery sweep failed'),
  );
}, 60_000);
sweep.unref();
const retentionDays = config.WEBHOOK_OUTBOX_RETENTION_DAYS;
const prune = () =>
  pruneEvents(db.pool, { retentionDays }).then(
    (n) => {
      if (n === 0) return;
      prunedTotal.inc(n);
      log.info({ deleted: n, retention_days: retentionDays }, 'pruned outbox events');
    },
    (err: Error) => log.warn({ err: err.message }, 'outbox pruning failed'),
  );
// 0 keeps every event.
const pruning = retentionDays > 0 ? setInterval(prune, 10 * 60_000) : undefined;
pruning?.unref();
if (pruning) void prune();
const ops = await startOpsServer({
  port: config.METRICS_PORT,
  registry,
  ready: async () => ({
    postgres: await check(() => db.pool.query('SELECT 1')),
    redis: await check(() => producer.ping()),
  }),
});
log.info(
  {
    concurrency: config.WEBHOOK_CONCURRENCY,
    metrics_port: (ops.address() as AddressInfo).port,
    retry_delays_ms: config.WEBHOOK_RETRY_DELAYS_MS,
    outbox_retention_days: config.WEBHOOK_OUTBOX_RETENTION_DAYS,
    timeout_ms: config.WEBHOOK_TIMEOUT_MS,
  },
  'webhook worker started',
);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down: finishing attempts in flight');
  const deadline = setTimeout(() => {
    log.warn('shutdown deadline reached; attempts still in flight are retried by another worker');
    process.exit(1);
  }, config.SHUTDOWN_TIMEOUT_MS);
  deadline.unref();
  clearInterval(sweep);
  clearInterval(pruning);
  // Stop taking work first: no new fan-out pass, no new queue entry; then let attempts finish.
  await fanOut.stop();
  await worker.close();
  poster.close();
  ops.close();
  await Promise.allSettled([queue.close(), db.$disconnect()]);
  await db.pool.end().catch(() => {});
  log.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
