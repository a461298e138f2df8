import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase, type Database } from '@scrapejobs/db';
import {
  Accounts,
  CompatService,
  JobsService,
  type KeyCache,
  KeysService,
  QueueScheduler,
  ResultsService,
  type RunAnnouncer,
  redisKeyChanges,
  subscribedKeyCache,
  WebhooksService,
} from '@scrapejobs/domain';
import { createLogger, type Logger } from '@scrapejobs/logging';
import {
  Counter,
  createRegistry,
  Gauge,
  type Registry,
  registerQueueMetrics,
} from '@scrapejobs/observability';
import { secretBoxOf } from '@scrapejobs/outbound';
import {
  createQueue,
  hostCountsKey,
  InteractSessionStore,
  pausedHosts,
  redisConnections,
  runCancelChannel,
  runEndsHeard,
  runStartChannel,
} from '@scrapejobs/queues';
import { Redis } from 'ioredis';
import { type ApiApp, type ApiServices, createApp } from './app.ts';
import type { ApiConfig } from './config.ts';
import { FileParser } from './firecrawl/file-parser.ts';
import { InteractService } from './firecrawl/interact.ts';
import { QueryCompiler } from './jobs/query-compiler.ts';
import { startTickWorker } from './schedules/ticks.ts';

export interface ApiRuntime {
  readonly app: ApiApp;
  readonly services: ApiServices;
  readonly db: Database;
  /** Fails fast while Redis is away (no offline queue), so requests get 503 instead of hanging. */
  readonly redis: Redis;
  readonly queues: {
    readonly ticks: ReturnType<typeof createQueue<'scheduleTicks'>>;
  };
  readonly scheduler: QueueScheduler;
  readonly keyCache: KeyCache;
  readonly registry: Registry;
  readonly log: Logger;
  /** Serves HTTP on PORT, consumes schedule ticks and reconciles schedules with PostgreSQL. */
  start(): Promise<{ port: number }>;
  /**
   * Lets requests in flight finish (cut after SHUTDOWN_TIMEOUT_MS), then closes every connection
   * the runtime opened. Without start(), it only closes.
   */
  stop(): Promise<void>;
}

export interface ApiRuntimeOptions {
  /** A database client to use instead of one made from DATABASE_URL (tests share one per file); not closed by stop(). */
  db?: Database;
  log?: Logger;
}

// No offline queue: while Redis is away a command fails at once and the request gets 503.
const REDIS_OPTIONS = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  connectTimeout: 1_500,
  commandTimeout: 1_500,
};

/** The API process: every service built once, shared by the API's routes and the console. */
export function createApiRuntime(config: ApiConfig, options: ApiRuntimeOptions = {}): ApiRuntime {
  const log = options.log ?? createLogger('api', config.LOG_LEVEL);
  const db =
    options.db ??
    createDatabase({ url: config.DATABASE_URL, max: 20, queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS });
  // Every connection opened here is closed by stop() (a queue does not close one it was given).
  const connections = redisConnections(config.REDIS_URL, 'api', log);
  const connect = (name: string) => connections.open(name, REDIS_OPTIONS);
  const redis = connect('commands');
  const { cache: keyCache, subscriber: keySubscriber } = subscribedKeyCache(redis, config.QUEUE_PREFIX);
  const ticks = createQueue('scheduleTicks', connect('ticks'), config.QUEUE_PREFIX);
  ticks.on('error', (err) => log.warn({ err: err.message, queue: ticks.name }, 'queue connection error'));
  const interactQueue = createQueue('interactSessions', connect('interact'), config.QUEUE_PREFIX);
  interactQueue.on('error', (err) =>
    log.warn({ err: err.message, queue: interactQueue.name }, 'queue connection error'),
  );

  const announcer: RunAnnouncer = {
    // The run is in PostgreSQL already, where workers find it within a second; this only
    // spares them that second.
    async started(runId, jobId) {
      await redis.publish(runStartChannel(config.QUEUE_PREFIX), runId).catch((err: Error) => {
        log.warn({ err: err.message, run_id: runId, job_id: jobId }, 'run start not announced to workers');
      });
    },
    async cancel(runId) {
      await redis.publish(runCancelChannel(config.QUEUE_PREFIX), runId);
    },
  };
  const scheduler = new QueueScheduler(ticks, config.SCHEDULE_UNIT);
  if (!config.WEBHOOK_SECRET_KEY)
    log.warn(
      'WEBHOOK_SECRET_KEY is not set: webhook secrets and job request secrets are sealed with the public development key, which protects nothing; set a 32-byte key outside development',
    );
  // Webhook secrets and the secrets of jobs' requests are sealed with the same keys.
  const box = secretBoxOf(config);
  const jobs = new JobsService(db, announcer, scheduler, {
    box,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    scheduleUnit: config.SCHEDULE_UNIT,
  });
  // One for the API and the console: its cap on downloads counts both.
  const results = new ResultsService(db);
  const webhooks = new WebhooksService(db, {
    box,
    allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS,
  });
  const services: ApiServices = {
    jobs,
    keys: new KeysService(
      db,
      redisKeyChanges(redis, config.QUEUE_PREFIX, {
        local: keyCache,
        onError: (err, keyId) =>
          log.warn({ err: err.message, key_id: keyId }, 'key change not announced to other API processes'),
      }),
    ),
    results,
    compat: new CompatService(db, jobs, results, {
      retentionHours: config.FIRECRAWL_RETENTION_HOURS,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      allowPrivateTargets: config.ALLOW_PRIVATE_NETWORK_TARGETS,
      runEnds: runEndsHeard(connect('run-ends'), config.QUEUE_PREFIX, (err) =>
        log.warn({ err: err.message }, 'not listening for the ends of runs; scrapes wait by looking'),
      ),
      ensureWebhookSecret: (owner) => webhooks.ensureFirecrawlSecret(owner),
    }),
    webhooks,
    accounts: new Accounts(db),
    interact: new InteractService({
      store: new InteractSessionStore(redis, config.QUEUE_PREFIX),
      queue: interactQueue,
      // Its own connection for each wait: a blocking read holds it, for longer than the command timeout.
      blocking: () => {
        const waiting = new Redis(config.REDIS_URL, {
          connectionName: 'api:interact-wait',
          maxRetriesPerRequest: 1,
          connectTimeout: REDIS_OPTIONS.connectTimeout,
        });
        waiting.on('error', (err) => log.warn({ err: err.message }, 'interact wait: redis connection error'));
        return waiting;
      },
      sessionsPerUser: config.INTERACT_SESSIONS_PER_USER,
    }),
  };
  const registry = createRegistry('api');
  registerQueueMetrics(registry, [ticks]);
  registerFrontierMetrics(registry, db);
  registerHostMetrics(registry, redis, config.QUEUE_PREFIX);
  const compiler = new QueryCompiler();
  const files = new FileParser({
    timeLimitMs: config.PARSE_TIME_LIMIT_MS,
    memoryMb: config.PARSE_MEMORY_MB,
    threads: config.PARSE_THREADS,
  });
  const app = createApp({
    config,
    db,
    redis,
    keyCache,
    services,
    log,
    registry,
    queues: [ticks],
    compiler,
    files,
  });

  let server: Server | null = null;
  let tickWorker: ReturnType<typeof startTickWorker> | null = null;

  return {
    app,
    services,
    db,
    redis,
    queues: { ticks },
    scheduler,
    keyCache,
    registry,
    log,

    async start() {
      tickWorker = startTickWorker(
        { jobs: services.jobs, log, registry },
        connections.open('tick-worker', { maxRetriesPerRequest: null }),
        config.QUEUE_PREFIX,
      );
      // Schedules live in Redis and PostgreSQL: put back any that Redis lost, drop orphans.
      scheduler.reconcile(db).then(
        (r) => (r.armed.length || r.removed.length) && log.info(r, 'schedules reconciled'),
        (err: Error) =>
          log.warn({ err: err.message }, 'schedule reconciliation failed; it runs again at the next start'),
      );
      // Commands fail at once while Redis connects (no offline queue), so wait for it briefly
      // before taking requests; if it stays away the API still starts and answers 503 until it is back.
      if (redis.status !== 'ready') await Promise.race([once(redis, 'ready'), sleep(3_000)]);
      const listening = app.listen(config.PORT);
      listening.on('upgrade', app.upgrade);
      await once(listening, 'listening');
      listening.keepAliveTimeout = 65_000;
      server = listening;
      const { port } = listening.address() as AddressInfo;
      log.info({ port }, 'api listening');
      return { port };
    },

    async stop() {
      if (server) {
        const open = server;
        const deadline = setTimeout(() => {
          log.warn('shutdown deadline reached; closing remaining connections');
          open.closeAllConnections();
        }, config.SHUTDOWN_TIMEOUT_MS);
        deadline.unref();
        await new Promise<void>((resolve) => {
          open.close(() => resolve());
          open.closeIdleConnections();
        });
        clearTimeout(deadline);
      }
      await Promise.allSettled([
        tickWorker?.close(),
        ticks.close(),
        interactQueue.close(),
        compiler.close(),
        files.close(),
      ]);
      connections.disconnectAll();
      keySubscriber.disconnect();
      if (!options.db) {
        await db.$disconnect();
        await db.pool.end().catch(() => {});
      }
    },
  };
}

/**
 * URLs of running runs waiting for a worker (pending) or in a worker's hands (active), fleet-wide;
 * and the disk the stored runs take.
 */
function registerFrontierMetrics(registry: Registry, db: Database): void {
  new Gauge({
    name: 'scrape_urls',
    help: 'URLs of running runs, by state: pending (waiting for a worker) or active (claimed by one).',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const { rows } = await db.pool.query<{ status: string; count: string }>(
        `SELECT u.status, count(*) AS count FROM runs r JOIN run_urls u ON u.run_id = r.id
          WHERE r.status = 'running' AND u.status IN ('pending', 'active') GROUP BY u.status`,
      );
      const counts = new Map(rows.map((row) => [row.status, Number(row.count)]));
      for (const state of ['pending', 'active']) this.set({ state }, counts.get(state) ?? 0);
    },
  });
  new Gauge({
    name: 'scrape_results_bytes',
    help: "Disk used by stored runs' data, by table (with its indexes and TOAST): result_pages, run_urls, run_changes, run_screenshots, run_documents, and page_validators (what jobs keep to tell unchanged pages).",
    labelNames: ['table'] as const,
    registers: [registry],
    async collect() {
      const { rows } = await db.pool.query<{ name: string; bytes: string }>(
        `SELECT t AS name, pg_total_relation_size(t::regclass)::text AS bytes
           FROM unnest(ARRAY['result_pages', 'run_urls', 'run_changes', 'run_screenshots', 'run_documents',
                             'page_validators']) AS t`,
      );
      for (const row of rows) this.set({ table: row.name }, Number(row.bytes));
    },
  });
}

/** Politeness toward target hosts across the fleet (docs/api.md §19), as the workers count it in Redis. */
function registerHostMetrics(registry: Registry, redis: Redis, prefix: string): void {
  // Redis unreachable: the last values stay, and the rest of /metrics is still served.
  const counts = async () => {
    const fields = await redis.hgetall(hostCountsKey(prefix)).catch(() => null);
    return fields && ((field: string) => Number(fields[field] ?? 0));
  };
  new Counter({
    name: 'host_waits_total',
    help: 'Requests that waited for a place at their target host or for its pause to end, fleet-wide.',
    registers: [registry],
    async collect() {
      const count = await counts();
      if (!count) return;
      this.reset();
      this.inc(count('waits'));
    },
  });
  new Counter({
    name: 'host_backoffs_total',
    help: 'Answers 429 or 503 that paused their target host for the fleet, by status.',
    labelNames: ['reason'] as const,
    registers: [registry],
    async collect() {
      const count = await counts();
      if (!count) return;
      this.reset();
      for (const reason of ['429', '503']) this.inc({ reason }, count(`backoffs:${reason}`));
    },
  });
  new Gauge({
    name: 'host_backoff_hosts',
    help: 'Target hosts paused now after a 429 or 503 answer, fleet-wide.',
    registers: [registry],
    async collect() {
      const paused = await pausedHosts(redis, prefix).catch(() => null);
      if (paused !== null) this.set(paused);
    },
  });
}
