import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDatabase } from '@scrapejobs/db';
import { RunStore, requeueLostRuns } from '@scrapejobs/domain';
import { createLogger, type Logger } from '@scrapejobs/logging';
import {
  Counter,
  check,
  createRegistry,
  Gauge,
  Histogram,
  registerQueueMetrics,
  repeat,
  startOpsServer,
} from '@scrapejobs/observability';
import { createQueue, runCancelChannel } from '@scrapejobs/queues';
import { Redis } from 'ioredis';
import type { WorkerConfig } from './config.ts';
import { PageExtractor } from './extract/extractor.ts';
import { JobRateLimiter } from './rate-limiter.ts';
import type { Renderer } from './render/index.ts';
import { RunConsumer } from './run/consumer.ts';
import type { ExecutorDeps } from './run/executor.ts';
import { UrlLeases } from './run/url-leases.ts';

export interface ScraperRuntime {
  readonly log: Logger;
  /** Takes runs from the queue and serves /metrics, /health and /ready on METRICS_PORT. */
  start(): Promise<{ metricsPort: number }>;
  /** Takes no more runs, hands those in progress back to the queue, and closes everything. */
  stop(): Promise<void>;
}

const LOST_RUNS_EVERY_MS = 60_000;
const FAIRNESS_EVERY_MS = 1_000;

/** A scraper worker process: every part built once. */
export function createScraperRuntime(config: WorkerConfig): ScraperRuntime {
  const log = createLogger('scraper-worker', config.LOG_LEVEL);
  const db = createDatabase({ url: config.DATABASE_URL, max: config.SCRAPER_CONCURRENCY * 2 + 2 });
  const connections: Redis[] = [];
  const connect = (name: string) => {
    const redis = new Redis(config.REDIS_URL, {
      maxRetriesPerRequest: null,
      connectionName: `scraper-worker:${name}`,
    });
    redis.on('error', (err) => log.warn({ err: err.message, connection: name }, 'redis connection error'));
    connections.push(redis);
    return redis;
  };
  const redis = connect('commands');
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
  const extractionThreadEnds = new Counter({
    name: 'scraper_extraction_threads_ended_total',
    help: 'Extraction threads ended by the worker, by limit (time, memory) or crash.',
    labelNames: ['limit'] as const,
    registers: [registry],
  });

  // Loaded on first use, so processes that never render never load puppeteer or Chromium.
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

  const extractor = new PageExtractor({
    threads: config.EXTRACTION_THREADS,
    timeLimitMs: config.EXTRACTION_TIME_LIMIT_MS,
    memoryMb: config.EXTRACTION_MEMORY_MB,
    onThreadEnd: (limit) => extractionThreadEnds.inc({ limit }),
  });
  const leases = new UrlLeases(redis, config.QUEUE_PREFIX, { maxPerUser: config.MAX_RUNNING_URLS_PER_USER });
  const deps: ExecutorDeps = {
    store: new RunStore(db, config.PUBLIC_BASE_URL),
    limiter: new JobRateLimiter(redis, config.QUEUE_PREFIX),
    extractor,
    leases,
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
  const consumer = new RunConsumer(deps, {
    connection: connect('worker'),
    prefix: config.QUEUE_PREFIX,
    concurrency: config.SCRAPER_CONCURRENCY,
    lockMs: config.RUN_LOCK_MS,
    retryDelayMs: config.RUN_RETRY_DELAY_MS,
    log,
  });
  const runsQueue = createQueue('scrapeRuns', redis, config.QUEUE_PREFIX);
  registerQueueMetrics(registry, [runsQueue]);

  const timers: (() => void)[] = [];
  const every = (ms: number, task: () => Promise<unknown>, failure: string) =>
    timers.push(repeat(ms, task, (err) => log.warn({ err: err.message }, failure)));
  let ops: Server | null = null;

  return {
    log,

    async start() {
      // Pause and delete publish the run id: the worker holding it stops it at once.
      const subscriber = connect('cancel');
      await subscriber.subscribe(runCancelChannel(config.QUEUE_PREFIX));
      subscriber.on('message', (_channel, runId: string) => consumer.stop(runId, 'cancel'));
      consumer.start();
      every(
        LOST_RUNS_EVERY_MS,
        async () => {
          const ids = await requeueLostRuns(db, runsQueue);
          if (ids.length) log.warn({ run_ids: ids }, 're-queued runs that had no queue entry');
        },
        'sweep failed',
      );
      every(leases.renewEveryMs, () => leases.renew(), 'could not renew URL leases');
      every(FAIRNESS_EVERY_MS, () => consumer.shareFairly(runsQueue), 'fairness check failed');
      ops = await startOpsServer({
        port: config.METRICS_PORT,
        registry,
        ready: async () => ({
          postgres: await check(() => db.$queryRaw`SELECT 1`),
          redis: await check(() => redis.ping()),
        }),
      });
      const metricsPort = (ops.address() as AddressInfo).port;
      log.info(
        { concurrency: config.SCRAPER_CONCURRENCY, metrics_port: metricsPort },
        'scraper worker started',
      );
      return { metricsPort };
    },

    async stop() {
      for (const stopTimer of timers) stopTimer();
      await consumer.close();
      ops?.close();
      await Promise.allSettled([
        runsQueue.close(),
        renderer?.then((r) => r.close()),
        extractor.close(),
        db.$disconnect(),
      ]);
      for (const connection of connections) connection.disconnect();
    },
  };
}
