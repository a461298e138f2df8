import type { AddressInfo } from 'node:net';
import { createDatabase } from '@scrapejobs/db';
import { RunStore, requeueLostRuns } from '@scrapejobs/domain';
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
import { PageExtractor } from './extract/extractor.ts';
import { JobRateLimiter } from './rate-limiter.ts';
import type { Renderer } from './render/index.ts';
import { type ExecutorDeps, executeRun, type StopReason } from './run/executor.ts';
import { runsToHandBack } from './run/fairness.ts';
import { UrlLeases } from './run/url-leases.ts';

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
const extractionThreadEnds = new Counter({
  name: 'scraper_extraction_threads_ended_total',
  help: 'Extraction threads ended by the worker, by limit (time, memory) or crash.',
  labelNames: ['limit'] as const,
  registers: [registry],
});
const extractor = new PageExtractor({
  threads: config.EXTRACTION_THREADS,
  timeLimitMs: config.EXTRACTION_TIME_LIMIT_MS,
  memoryMb: config.EXTRACTION_MEMORY_MB,
  onThreadEnd: (limit) => extractionThreadEnds.inc({ limit }),
});
const leases = new UrlLeases(redis, config.QUEUE_PREFIX, { maxPerUser: config.MAX_RUNNING_URLS_PER_USER });
const store = new RunStore(db, config.PUBLIC_BASE_URL);
const deps: ExecutorDeps = {
  store,
  limiter: new JobRateLimiter(redis, config.QUEUE_PREFIX),
  extractor,
  leases,
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
const active = new Map<string, { controller: AbortController; since: number }>();
const stopRun = (runId: string, reason: StopReason) => active.get(runId)?.controller.abort(reason);
await subscriber.subscribe(runCancelChannel(config.QUEUE_PREFIX));
subscriber.on('message', (_channel, runId: string) => stopRun(runId, 'cancel'));

const worker = new Worker(
  catalog.scrapeRuns.name,
  async (job, token) => {
    const { runId, jobId } = catalog.scrapeRuns.payload.parse(job.data);
    const controller = new AbortController();
    if (stopping) controller.abort('shutdown' satisfies StopReason);
    active.set(runId, { controller, since: Date.now() });
    log.info({ run_id: runId, job_id: jobId }, 'run started');
    try {
      const end = stopping ? { handBackAt: Date.now() } : await executeRun(deps, runId, controller.signal);
      if (typeof end === 'object') {
        // Back to the queue, for any worker; the run resumes there without duplicates.
        await job.moveToDelayed(end.handBackAt, token);
        log.info({ run_id: runId, resumes_at: new Date(end.handBackAt).toISOString() }, 'run handed back');
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
    // attemptsMade is 1 after the first failure.
    settings: {
      backoffStrategy: (attemptsMade: number) => config.RUN_RETRY_DELAY_MS * 2 ** (attemptsMade - 1),
    },
  },
);
worker.on('failed', (job, err) => {
  log.error({ run_id: job?.data.runId, err: err.message, attempt: job?.attemptsMade }, 'run crashed');
  // Its last attempt: the run ends failed rather than running forever.
  if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) {
    const failure = {
      code: 'EXTRACTION_ERROR',
      message: `The run could not go on after ${job.attemptsMade} attempts: ${err.message}`,
    };
    store.finish(job.data.runId, failure).then(
      () => leases.forget(job.data.runId),
      (finishErr: Error) =>
        log.warn({ run_id: job.data.runId, err: finishErr.message }, 'could not end a crashed run'),
    );
  }
});
// A run whose lock could not be renewed (this process was held up past RUN_LOCK_MS) belongs to
// whichever worker takes it over: stop working on it here.
worker.on('lockRenewalFailed', (runIds) => {
  for (const runId of runIds) stopRun(runId, 'lost');
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
const renewLeases = setInterval(() => {
  leases.renew().catch((err: Error) => log.warn({ err: err.message }, 'could not renew URL leases'));
}, leases.renewEveryMs);
renewLeases.unref();

// When every place here is taken and a user none of whose runs this worker holds is waiting, the
// user holding the most places hands runs back to the end of the queue (run/fairness.ts).
const FAIRNESS_EVERY_MS = 1_000;
const MIN_TURN_MS = 2_000;
async function shareFairly(): Promise<void> {
  if (stopping || active.size < config.SCRAPER_CONCURRENCY) return;
  const waiting = await runsQueue.getWaiting(0, 19);
  if (waiting.length === 0) return;
  const waitingIds = waiting.map((job) => job.data.runId);
  const owners = await store.ownersOf([...active.keys(), ...waitingIds]);
  const held = [...active].flatMap(([runId, { since }]) => {
    const userId = owners.get(runId);
    return userId ? [{ runId, userId, since }] : [];
  });
  const waitingUsers = waitingIds.flatMap((runId) => owners.get(runId) ?? []);
  for (const runId of runsToHandBack(held, waitingUsers, Date.now(), MIN_TURN_MS)) {
    log.info({ run_id: runId }, "handing a run back: another user's run waits for a place");
    stopRun(runId, 'yield');
  }
}
const fairness = setInterval(() => {
  shareFairly().catch((err: Error) => log.warn({ err: err.message }, 'fairness check failed'));
}, FAIRNESS_EVERY_MS);
fairness.unref();
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
  clearInterval(fairness);
  const deadline = setTimeout(() => {
    log.warn('shutdown deadline reached');
    process.exit(1);
  }, config.SHUTDOWN_TIMEOUT_MS);
  deadline.unref();
  // Stop fetching first, so a run handed back here is not taken again by this process.
  const closed = worker.close();
  for (const runId of active.keys()) stopRun(runId, 'shutdown');
  await closed;
  clearInterval(renewLeases);
  ops.close();
  await Promise.allSettled([
    runsQueue.close(),
    renderer?.then((r) => r.close()),
    extractor.close(),
    db.$disconnect(),
  ]);
  redis.disconnect();
  subscriber.disconnect();
  log.info('stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
