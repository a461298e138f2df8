import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDatabase } from '@scrapejobs/db';
import { RunStore, requeueLostRuns } from '@scrapejobs/domain';
import { createLogger } from '@scrapejobs/logging';
import {
  createRegistry,
  registerQueueMetrics,
  repeat,
  startOpsServer,
  type WorkerRuntime,
} from '@scrapejobs/observability';
import { createQueue, redisConnections, runCancelChannel } from '@scrapejobs/queues';
import type { WorkerConfig } from './config.ts';
import { PageExtractor } from './extract/extractor.ts';
import { scraperMetrics } from './metrics.ts';
import { JobRateLimiter } from './rate-limiter.ts';
import type { Renderer } from './render/index.ts';
import { RunConsumer } from './run/consumer.ts';
import type { ExecutorDeps } from './run/executor.ts';
import { UrlLeases } from './run/url-leases.ts';

const LOST_RUNS_EVERY_MS = 60_000;
const FAIRNESS_EVERY_MS = 1_000;

/**
 * A scraper worker process, every part built once: start takes runs from the queue; stop hands
 * those in progress back to the queue for other workers.
 */
export function createScraperRuntime(config: WorkerConfig): WorkerRuntime {
  const log = createLogger('scraper-worker', config.LOG_LEVEL);
  const db = createDatabase({ url: config.DATABASE_URL, max: config.SCRAPER_CONCURRENCY * 2 + 2 });
  const connections = redisConnections(config.REDIS_URL, 'scraper-worker', log, {
    maxRetriesPerRequest: null,
  });
  const redis = connections.open('commands');
  const registry = createRegistry('scraper-worker');
  // Loaded on first use, so processes that never render never load puppeteer or Chromium.
  let renderer: Promise<Renderer> | null = null;
  let rendererReady: Renderer | null = null;
  const { pages, runDuration, extractionThreadEnds } = scraperMetrics(registry, () => rendererReady?.stats());

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
    connection: connections.open('worker'),
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
      const subscriber = connections.open('cancel');
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
        ready: { postgres: () => db.$queryRaw`SELECT 1`, redis: () => redis.ping() },
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
      connections.disconnectAll();
    },
  };
}
