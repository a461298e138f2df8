import type { ProxyEntry } from '@scrapejobs/config';
import type { Database } from '@scrapejobs/db';
import {
  JobsService,
  KeysService,
  QueueScheduler,
  type RunDispatcher,
  redisKeyChanges,
  subscribedKeyCache,
} from '@scrapejobs/domain';
import { createLogger } from '@scrapejobs/logging';
import { createRegistry, registerQueueMetrics } from '@scrapejobs/observability';
import { createQueue, runCancelChannel } from '@scrapejobs/queues';
import { Redis } from 'ioredis';
import { createApp } from '../../apps/api/src/app.ts';
import { QueryCompiler } from '../../apps/api/src/jobs/query-compiler.ts';
import { REDIS_URL } from './redis.ts';

export interface TestApiOptions {
  db: Database;
  prefix: string;
  redisUrl?: string;
  rateLimit?: number;
  proxies?: ProxyEntry[];
  adminToken?: string;
  /** The query compiler's limits (defaults: production's). */
  compiler?: ConstructorParameters<typeof QueryCompiler>[0];
  /** Webhook settings read by webhooksServiceFor (loopback receivers need private targets allowed). */
  webhooks?: { WEBHOOK_SECRET_KEY?: Buffer; ALLOW_PRIVATE_NETWORK_TARGETS?: boolean };
}

/** The real app wired to a real database, Redis and BullMQ queue, as main.ts does. */
export function buildTestApi(opts: TestApiOptions) {
  const redisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 1_000,
    commandTimeout: 1_000,
    lazyConnect: false,
  };
  const url = opts.redisUrl ?? REDIS_URL;
  const redis = new Redis(url, redisOptions);
  redis.on('error', () => {});
  const { cache: keyCache, subscriber: keySubscriber } = subscribedKeyCache(redis, opts.prefix);
  const queueRedis = new Redis(url, redisOptions);
  queueRedis.on('error', () => {});
  const runs = createQueue('scrapeRuns', queueRedis, opts.prefix);
  runs.on('error', () => {});
  const cancelled: string[] = [];
  const dispatcher: RunDispatcher = {
    async enqueue(runId, jobId) {
      await runs.add('run', { runId, jobId }, { jobId: runId });
    },
    async cancel(runId) {
      cancelled.push(runId);
      await redis.publish(runCancelChannel(opts.prefix), runId);
    },
  };
  const ticks = createQueue('scheduleTicks', queueRedis, opts.prefix);
  ticks.on('error', () => {});
  const scheduler = new QueueScheduler(ticks);
  const jobs = new JobsService(opts.db, dispatcher, scheduler);
  const registry = createRegistry('api');
  registerQueueMetrics(registry, [runs, ticks]);
  const compiler = new QueryCompiler(opts.compiler);
  const app = createApp(
    {
      config: {
        ...opts.webhooks,
        API_RATE_LIMIT_PER_MINUTE: opts.rateLimit ?? 100_000,
        QUEUE_PREFIX: opts.prefix,
        PROXY_URLS: opts.proxies ?? [],
        TRUST_PROXY: 'loopback',
        ADMIN_TOKEN: opts.adminToken,
      },
      db: opts.db,
      redis,
      keyCache,
      dispatcher,
      scheduler,
      log: createLogger('api-test', 'silent'),
      registry,
      queues: [runs, ticks],
      compiler,
    },
    jobs,
  );
  return {
    app,
    runs,
    ticks,
    scheduler,
    jobs,
    redis,
    cancelled,
    keyCache,
    keySubscriber,
    keys: new KeysService(
      opts.db,
      redisKeyChanges(redis, opts.prefix, {
        local: keyCache,
        onError: () => {}, // this process's cache is emptied either way
      }),
    ),
    async close() {
      await compiler.close();
      await runs.close().catch(() => {});
      await ticks.close().catch(() => {});
      redis.disconnect();
      keySubscriber.disconnect();
      queueRedis.disconnect();
    },
  };
}
