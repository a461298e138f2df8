import type { Server } from 'node:http';
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
  createRegistry,
  registerQueueMetrics,
  repeat,
  startOpsServer,
  type WorkerRuntime,
} from '@scrapejobs/observability';
import { secretBoxOf } from '@scrapejobs/outbound';
import { catalog, createQueue, redisConnections } from '@scrapejobs/queues';
import { Worker } from 'bullmq';
import type { WebhookWorkerConfig } from './config.ts';
import { DeliveryProcessor, retryBackoff } from './delivery.ts';
import { WebhookPoster } from './http-post.ts';
import { webhookMetrics } from './metrics.ts';

const SWEEP_EVERY_MS = 60_000;
const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * A webhook worker process, every part built once: start fans outbox events out into deliveries
 * and delivers them; stop lets attempts in flight finish.
 */
export function createWebhookRuntime(config: WebhookWorkerConfig): WorkerRuntime {
  const log = createLogger('webhook-worker', config.LOG_LEVEL);
  if (!config.WEBHOOK_SECRET_KEY)
    log.warn(
      'WEBHOOK_SECRET_KEY is not set: webhook secrets are opened with the public development key, which protects nothing; set the same 32-byte key as the API outside development',
    );
  const box = secretBoxOf(config);
  const db = createDatabase({ url: config.DATABASE_URL, max: Math.min(config.WEBHOOK_CONCURRENCY, 40) + 4 });
  const connections = redisConnections(config.REDIS_URL, 'webhook-worker', log, {
    maxRetriesPerRequest: null,
  });

  // The producer fails fast while Redis is away, so a fan-out pass rolls back instead of hanging.
  const producer = connections.open('producer', { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  const queue = createQueue('webhookDeliveries', producer, config.QUEUE_PREFIX);
  queue.on('error', (err) => log.warn({ err: err.message }, 'queue connection error'));
  const poster = new WebhookPoster({
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS,
    maxSockets: config.WEBHOOK_CONCURRENCY,
  });

  const registry = createRegistry('webhook-worker');
  const metrics = webhookMetrics(registry, async () => {
    const { rows } = await db.pool.query<{ age: string | null }>(
      `SELECT extract(epoch FROM (now() AT TIME ZONE 'UTC') - min(created_at)) AS age
       FROM events WHERE dispatched_at IS NULL`,
    );
    return Math.max(0, Number(rows[0]?.age ?? 0));
  });
  registerQueueMetrics(registry, [queue]);

  const processor = new DeliveryProcessor(new DeliveryStore(db.pool), poster, box, log, {
    observe: (outcome, durationMs) => {
      metrics.attempts.inc({ outcome });
      metrics.attemptSeconds.observe(durationMs / 1000);
    },
  });
  const worker = new Worker(catalog.webhookDeliveries.name, (job, token) => processor.process(job, token), {
    connection: connections.open('worker'),
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WEBHOOK_CONCURRENCY,
    autorun: false,
    settings: { backoffStrategy: retryBackoff(config.WEBHOOK_RETRY_DELAYS_MS) },
  });
  worker.on('error', (err) => log.warn({ err: err.message }, 'worker error'));
  const lost = new LostDeliverySweep(db.pool, queue, { retryDelays: config.WEBHOOK_RETRY_DELAYS_MS });
  const retentionDays = config.WEBHOOK_OUTBOX_RETENTION_DAYS;
  const prune = async () => {
    const n = await pruneEvents(db.pool, { retentionDays });
    if (n === 0) return;
    metrics.pruned.inc(n);
    log.info({ deleted: n, retention_days: retentionDays }, 'pruned outbox events');
  };

  const timers: (() => void)[] = [];
  let fanOut: ReturnType<typeof startFanOutLoop> | null = null;
  let ops: Server | null = null;

  return {
    log,

    async start() {
      void worker.run();
      await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
      fanOut = startFanOutLoop(new OutboxFanOut(db.pool, queue, config.WEBHOOK_OUTBOX_BATCH), {
        pollMs: config.WEBHOOK_OUTBOX_POLL_MS,
        batchSize: config.WEBHOOK_OUTBOX_BATCH,
        log,
      });
      timers.push(
        repeat(
          SWEEP_EVERY_MS,
          async () => {
            const ids = await lost.runOnce();
            if (ids.length === 0) return;
            metrics.requeued.inc(ids.length);
            log.warn({ delivery_ids: ids }, 're-queued pending deliveries that had no queue entry');
          },
          (err) => log.warn({ err: err.message }, 'delivery sweep failed'),
        ),
      );
      // 0 keeps every event.
      if (retentionDays > 0) {
        const onError = (err: Error) => log.warn({ err: err.message }, 'outbox pruning failed');
        timers.push(repeat(PRUNE_EVERY_MS, prune, onError));
        prune().catch(onError);
      }
      ops = await startOpsServer({
        port: config.METRICS_PORT,
        registry,
        ready: { postgres: () => db.pool.query('SELECT 1'), redis: () => producer.ping() },
      });
      const metricsPort = (ops.address() as AddressInfo).port;
      log.info(
        {
          concurrency: config.WEBHOOK_CONCURRENCY,
          metrics_port: metricsPort,
          retry_delays_ms: config.WEBHOOK_RETRY_DELAYS_MS,
          outbox_retention_days: config.WEBHOOK_OUTBOX_RETENTION_DAYS,
          timeout_ms: config.WEBHOOK_TIMEOUT_MS,
        },
        'webhook worker started',
      );
      return { metricsPort };
    },

    async stop() {
      for (const stopTimer of timers) stopTimer();
      // Stop taking work first: no new fan-out pass, no new queue entry; then let attempts finish.
      await fanOut?.stop();
      await worker.close();
      poster.close();
      ops?.close();
      await Promise.allSettled([queue.close(), db.$disconnect()]);
      await db.pool.end().catch(() => {});
      connections.disconnectAll();
    },
  };
}
