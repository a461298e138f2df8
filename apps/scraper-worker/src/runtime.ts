import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDatabase } from '@scrapejobs/db';
import { Frontier, RetentionSweep, RunAnalysis, RunStore, TrackedPages } from '@scrapejobs/domain';
import { ExtractionError } from '@scrapejobs/extraction';
import { ChatModel, modelSettings, TokenLedger } from '@scrapejobs/llm';
import { createLogger } from '@scrapejobs/logging';
import { createRegistry, repeat, startOpsServer, type WorkerRuntime } from '@scrapejobs/observability';
import { secretBoxOf } from '@scrapejobs/outbound';
import {
  hostCountsKey,
  InteractSessionStore,
  redisConnections,
  runCancelChannel,
  runEndChannel,
  runStartChannel,
} from '@scrapejobs/queues';
import type { WorkerConfig } from './config.ts';
import { PageExtractor } from './extract/extractor.ts';
import { HostCounts, HostGate } from './hosts/index.ts';
import { startInteractConsumer } from './interact/consumer.ts';
import { scraperMetrics } from './metrics.ts';
import { PageModel } from './model/page-model.ts';
import { JobRateLimiter } from './rate-limiter.ts';
import type { Renderer } from './render/index.ts';
import { Analyst } from './run/analyst.ts';
import { Dispatcher } from './run/dispatcher.ts';
import { RunFetching } from './run/page-loader.ts';
import { RenderLearning } from './run/render-learning.ts';
import { UrlLeases } from './run/url-leases.ts';

/** How often a worker looks for ended runs to analyse (changes and health, docs/api.md §13). */
const ANALYSIS_POLL_MS = 1_000;
/** A run's analysis (one statement) may take this long: 1,000,000 records against as many take about 5 s. */
const ANALYSIS_TIMEOUT_MS = 10 * 60_000;
/** How often a worker deletes runs past their retention (any worker; they skip each other's runs). */
const RETENTION_EVERY_MS = 10 * 60_000;

/** Characters of console output one interact call keeps (docs/api.md §18). */
const INTERACT_MAX_OUTPUT = 64 * 1024;
/** Characters of one interact call's result kept. */
const INTERACT_MAX_RESULT = 64 * 1024;

/** Whose share of the extraction threads change tracking's diffs take. */
const ANALYSIS_OWNER = 'analysis';

/**
 * A scraper worker process, every part built once: start takes URLs from the frontier; stop
 * gives those in flight back for other workers.
 */
export function createScraperRuntime(config: WorkerConfig): WorkerRuntime {
  const log = createLogger('scraper-worker', config.LOG_LEVEL);
  const db = createDatabase({ url: config.DATABASE_URL, max: config.SCRAPER_CONCURRENCY * 2 + 4 });
  const connections = redisConnections(config.REDIS_URL, 'scraper-worker', log, {
    maxRetriesPerRequest: null,
  });
  const redis = connections.open('commands');
  const registry = createRegistry('scraper-worker');
  // Loaded on first use, so processes that never render never load puppeteer or Chromium.
  let renderer: Promise<Renderer> | null = null;
  let rendererReady: Renderer | null = null;
  const { pages, runDuration, extractionThreadEnds, retentionRows, retentionBytes, modelCalls, modelTokens } =
    scraperMetrics(registry, () => rendererReady?.stats());

  const extractor = new PageExtractor({
    threads: config.EXTRACTION_THREADS,
    timeLimitMs: config.EXTRACTION_TIME_LIMIT_MS,
    memoryMb: config.EXTRACTION_MEMORY_MB,
    onThreadEnd: (limit) => extractionThreadEnds.inc({ limit }),
  });
  const model = modelSettings(config);
  const pageModel =
    model &&
    new PageModel({
      model: new ChatModel(model),
      settings: model,
      ledger: new TokenLedger(redis, config.QUEUE_PREFIX, model.tokensPerDay),
      extractor,
      observer: {
        used: (calls, tokens) => {
          modelCalls.inc(calls);
          modelTokens.inc(tokens);
        },
      },
    });
  // Fleet-wide counts for the API's /metrics (docs/api.md §19): every worker adds to the same ones.
  const hostCounts = new HostCounts(redis, hostCountsKey(config.QUEUE_PREFIX), 1_000, (err) => {
    log.warn({ err: err.message }, 'could not add to the host counts; they are kept for the next try');
  });
  const hosts = new HostGate(
    redis,
    connections.open('hosts'),
    config.QUEUE_PREFIX,
    {
      maxConcurrency: config.HOST_MAX_CONCURRENCY,
      maxPerSecond: config.HOST_MAX_REQUESTS_PER_SECOND,
      retryAfterCapMs: config.HOST_RETRY_AFTER_CAP_S * 1000,
      leaseMs: config.RUN_LOCK_MS,
    },
    {
      waited: () => hostCounts.add('waits'),
      backoff: (reason) => hostCounts.add(`backoffs:${reason}`),
      failed: (err) => log.warn({ err: err.message }, 'host places: a call to Redis failed'),
    },
  );
  // A killed worker's places come back with its URLs' leases, not later (docs/api.md §16.2).
  const leases = new UrlLeases(redis, config.QUEUE_PREFIX, {
    maxPerUser: config.MAX_RUNNING_URLS_PER_USER,
    leaseMs: config.RUN_LOCK_MS,
  });
  const pageDeps = {
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
    userAgent: config.SCRAPER_USER_AGENT,
    box: secretBoxOf(config),
  };
  const runStore = new RunStore(db, config.PUBLIC_BASE_URL);
  const dispatcher = new Dispatcher(
    {
      store: runStore,
      frontier: new Frontier(db),
      limiter: new JobRateLimiter(redis, config.QUEUE_PREFIX),
      hosts,
      renderLearning: new RenderLearning(redis, config.QUEUE_PREFIX),
      extractor,
      pageModel,
      trackedPages: new TrackedPages(db.pool),
      leases,
      announceEnd: (runId) => {
        redis.publish(runEndChannel(config.QUEUE_PREFIX), runId).catch((err: Error) => {
          log.warn({ err: err.message, run_id: runId }, 'run end not announced to the API');
        });
      },
      ...pageDeps,
      robotsToken: config.SCRAPER_USER_AGENT.split('/')[0]!.trim(),
      runTimeoutMs: config.RUN_TIMEOUT_MS,
      log,
      observer: {
        page: (outcome) => pages.inc({ outcome }),
        run: (status, seconds) => runDuration.observe({ status }, seconds),
      },
    },
    {
      concurrency: config.SCRAPER_CONCURRENCY,
      urlConcurrency: config.RUN_URL_CONCURRENCY,
      leaseMs: config.RUN_LOCK_MS,
      retryDelayMs: config.RUN_RETRY_DELAY_MS,
      maxAttempts: config.RUN_MAX_ATTEMPTS,
    },
  );

  // The comparison of a big run is one long statement: its own pool, beyond the usual 10 s bound.
  const analysisDb = createDatabase({
    url: config.DATABASE_URL,
    max: 2,
    queryTimeoutMs: ANALYSIS_TIMEOUT_MS,
  });
  const analyst = new Analyst(
    new RunAnalysis(analysisDb, config.PUBLIC_BASE_URL, (before, after) =>
      extractor.diff(ANALYSIS_OWNER, { before, after }).catch((err: unknown) => {
        // A diff past the threads' limits is noted in its place; any other failure retries the analysis.
        if (!(err instanceof ExtractionError)) throw err;
        return `(no diff: ${err.message})`;
      }),
    ),
    log,
  );
  const retention = new RetentionSweep(db, { defaultDays: config.RESULTS_RETENTION_DAYS });
  const sweep = async () => {
    const { runs, deleted } = await retention.sweep();
    for (const { table, rows, bytes } of deleted) {
      retentionRows.inc({ table }, rows);
      retentionBytes.inc({ table }, bytes);
    }
    if (runs > 0) log.info({ runs, deleted }, 'deleted runs past their retention');
  };

  let interact: ReturnType<typeof startInteractConsumer> | null = null;
  const startInteract = () =>
    startInteractConsumer(
      {
        store: new InteractSessionStore(redis, config.QUEUE_PREFIX),
        blocking: () => redis.duplicate({ connectionName: 'scraper-worker:interact' }),
        renderer: pageDeps.renderer,
        pageRequest: async (scrapeId, userId) => {
          const run = await runStore.settingsOf(scrapeId, userId);
          if (!run) return null;
          const fetching = new RunFetching(pageDeps, run.jobId, run.settings);
          return fetching.sessionRequest(run.settings.source);
        },
        limits: {
          idleMs: config.INTERACT_IDLE_TIMEOUT_S * 1000,
          maxLifeMs: config.INTERACT_MAX_LIFE_S * 1000,
          maxOutput: INTERACT_MAX_OUTPUT,
          maxResult: INTERACT_MAX_RESULT,
        },
        log,
      },
      {
        connection: connections.open('interact-sessions'),
        prefix: config.QUEUE_PREFIX,
        sessions: config.INTERACT_SESSIONS_PER_WORKER,
        log,
      },
    );

  const timers: (() => void)[] = [];
  const every = (ms: number, task: () => Promise<unknown>, failure: string) =>
    timers.push(repeat(ms, task, (err) => log.warn({ err: err.message }, failure)));
  let ops: Server | null = null;

  return {
    log,

    async start() {
      // A run start wakes the worker; pause and delete stop the run's URLs here at once.
      const subscriber = connections.open('runs');
      await subscriber.subscribe(runCancelChannel(config.QUEUE_PREFIX), runStartChannel(config.QUEUE_PREFIX));
      subscriber.on('message', (channel, runId: string) => {
        if (channel === runStartChannel(config.QUEUE_PREFIX)) dispatcher.wake();
        else dispatcher.cancel(runId);
      });
      dispatcher.start();
      if (config.INTERACT_SESSIONS_PER_WORKER > 0) {
        interact = startInteract();
        await interact.ready();
      }
      every(
        Math.max(100, Math.floor(config.RUN_LOCK_MS / 3)),
        () => dispatcher.renew(),
        'could not renew URL leases',
      );
      every(leases.renewEveryMs, () => leases.renew(), 'could not renew places');
      every(ANALYSIS_POLL_MS, () => analyst.work(), 'could not look for runs to analyse');
      every(RETENTION_EVERY_MS, sweep, 'could not delete runs past their retention');
      sweep().catch((err: Error) =>
        log.warn({ err: err.message }, 'could not delete runs past their retention'),
      );
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
      await Promise.all([dispatcher.close(), analyst.stop(), interact?.close()]);
      await hosts.close();
      await hostCounts.flush();
      ops?.close();
      await Promise.allSettled([
        renderer?.then((r) => r.close()),
        extractor.close(),
        db.$disconnect(),
        analysisDb.$disconnect(),
      ]);
      connections.disconnectAll();
    },
  };
}
