import type { AddressInfo } from 'node:net';
import { createDatabase } from '@scrapejobs/db';
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
import { catalog, createQueue, runCancelChannel } from '@scrapejobs/queues';
import { DelayedError, WaitingError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { loadWorkerConfig } from './config.ts';
import { JobRateLimiter } from './rate-limiter.ts';
import type { Renderer } from './render/index.ts';
import { type ExecutorDeps, executeRun, type StopReason } from './run/executor.ts';
import { RunStore } from './run/store.ts';
import { requeueLostRuns } from './run/sweep.ts';

const config = loadWorkerConfig(process.env);
const log = createLogger('scraper-worker', config.LOG_LEVEL);
const db = createDatabase({ url: config.DATABASE_URL, max: config.SCRAPER_CONCURRENCY * 2 + 2 });
const redisFor = (name: string) => {
  const r = new Redis(config.REDIS_URL, {
    maxRetriesPerRequest: null,
    connectionName: `scraper-worker:${name}`,
  });
  r.on('error', (err) => log.warn({ err: err.message, connection: name }, 'redis connection error'));
  return r;
};
const redis = redisFor('commands');
const subscriber = redisFor('cancel');

const registry = createRegistry('scraper-worker');
const pages = new Counter({
  name: 'scraper_pages_total',
  help: 'Pages fetched or rendered, by outcome (success or an error code).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
const runDuration = new Histogram({
  name: 'scraper_run_duration_seconds',
  help: 'Duration of runs from trigger to end, by final status.',
  labelNames: ['status'] as const,
  buckets: [1, 5, 15, 60, 300, 900, 1800, 3600],
  registers: [registry],
});

let renderer: Promise<Renderer> | null = null;
let rendererReady: Renderer | null = null;
new Gauge({
  name: 'scraper_browser_pages',
  help: 'Browser pool: pages rendering now (busy) and the pool size (capacity); 0 before the first render.',
  labelNames: ['kind'] as const,
  registers: [registry],
  collect() {
    const stats = rendererReady?.stats();
    this.set({ kind: 'busy' }, stats?.busy ?? 0);
    this.set({ kind: 'capacity' }, stats?.concurrency ?? 0);
  },
});
const deps: ExecutorDeps = {
  store: new RunStore(db, config.PUBLIC_BASE_URL),
  limiter: new JobRateLimiter(redis, config.QUEUE_PREFIX),
  // Loaded on first use, so processes that never render never load puppeteer or Chromium.
  renderer: () =>
    (renderer ??= import('./render/index.ts').then(({ Renderer }) =>
      Renderer.start({
        concurrency: config.BROWSER_CONCURRENCY,
        executablePath: config.CHROMIUM_PATH,
        allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS,
      }).then((r) => (rendererReady = r)),
    )),
  proxies: config.PROXY_URLS,
  allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS,
  urlConcurrency: config.RUN_URL_CONCURRENCY,
  runTimeoutMs: config.RUN_TIMEOUT_MS,
  log,
  observer: {
    page: (outcome) => pages.inc({ outcome }),
    run: (status, seconds) => runDuration.observe({ status }, seconds),
  },
};

let stopping = false;
// Runs in progress here, so a cancel message (pause, delete) or SIGTERM can stop them at once.
const active = new Map<string, AbortController>();
const stopAll = (reason: StopReason) => {
  for (const controller of active.values()) controller.abort(reason);
};
await subscriber.subscribe(runCancelChannel(config.QUEUE_PREFIX));
subscriber.on('message', (_channel, runId: string) =>
  active.get(runId)?.abort('cancel' satisfies StopReason),
);

const worker = new Worker(
  catalog.scrapeRuns.name,
  async (job, token) => {
    const { runId, jobId } = catalog.scrapeRuns.payload.parse(job.data);
    const controller = new AbortController();
    if (stopping) controller.abort('shutdown' satisfies StopReason);
    active.set(runId, controller);
    log.info({ run_id: runId, job_id: jobId }, 'run started');
    try {
      const end = stopping ? 'handed-back' : await executeRun(deps, runId, controller.signal);
      if (end === 'handed-back') {
        // Back to the queue for another worker; the run resumes there without duplicates.
        await job.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      }
      // Moved back to waiting by the stalled-job check and taken by another worker: BullMQ must
      // not try to finish it with this worker's stale lock.
      if (end === 'lost') throw new WaitingError();
      return end;
    } finally {
      active.delete(runId);
    }
  },
  {
    connection: redisFor('worker'),
    prefix: config.QUEUE_PREFIX,
    concurrency: config.SCRAPER_CONCURRENCY,
    lockDuration: config.RUN_LOCK_MS,
    stalledInterval: config.RUN_LOCK_MS,
    maxStalledCount: 10,
  },
);
worker.on('failed', (job, err) => log.error({ run_id: job?.data.runId, err: err.message }, 'run crashed'));
// A run whose lock could not be renewed (this process was held up past RUN_LOCK_MS) belongs to
// whichever worker takes it over: stop working on it here.
worker.on('lockRenewalFailed', (runIds) => {
  for (const runId of runIds) active.get(runId)?.abort('lost' satisfies StopReason);
  log.warn({ run_ids: runIds }, 'lost the lock of runs; another worker takes them over');
});
worker.on('error', (err) => log.warn({ err: err.message }, 'worker error'));

const runsQueue = createQueue('scrapeRuns', redis, config.QUEUE_PREFIX);
const sweep = setInterval(() => {
  requeueLostRuns(db, runsQueue).then(
    (ids) => ids.length && log.warn({ run_ids: ids }, 're-queued runs that had no queue entry'),
    (err: Error) => log.warn({ err: err.message }, 'sweep failed'),
  );
}, 60_000);
sweep.unref();
registerQueueMetrics(registry, [runsQueue]);
const ops = await startOpsServer({
  port: config.METRICS_PORT,
  registry,
  ready: async () => ({
    postgres: await check(() => db.$queryRaw`SELECT 1`),
    redis: await check(() => redis.ping()),
  }),
});
log.info(
  { concurrency: config.SCRAPER_CONCURRENCY, metrics_port: (ops.address() as AddressInfo).port },
  'scraper worker started',
);

async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal, active: active.size }, 'shutting down: handing runs back to the queue');
  clearInterval(sweep);
  const deadline = setTimeout(() => {
    log.warn('shutdown deadline reached');
    process.exit(1);
  }, config.SHUTDOWN_TIMEOUT_MS);
  deadline.unref();
  // Stop fetching first, so a run handed back here is not taken again by this process.
  const closed = worker.close();
  stopAll('shutdown');
  await closed;
  ops.close();
  await Promise.allSettled([runsQueue.close(), renderer?.then((r) => r.close()), db.$disconnect()]);
  redis.disconnect();
  subscriber.disconnect();
  log.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
