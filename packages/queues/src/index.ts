import { type ConnectionOptions, type JobsOptions, Queue } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { z } from 'zod';
import { LuaScript, REDIS_NOW } from './lua.ts';

export {
  type InteractAnswer,
  type InteractCommand,
  type InteractRun,
  InteractSessionStore,
  SESSION_HEARTBEAT_MS,
  type SessionClaim,
  type SessionLook,
} from './interact.ts';
export { LuaScript, REDIS_NOW } from './lua.ts';

/**
 * The one catalog of queues shared by producers and consumers: name, payload schema and
 * default job options. Nothing else in the code base names a queue.
 */
export const catalog = {
  scheduleTicks: {
    name: 'schedule-ticks',
    // One job per planned time, made by the job scheduler whose id is the job id.
    payload: z.object({ jobId: z.string() }),
    // A retried tick that finds its run started answers skipped-running, so retrying is safe.
    options: {
      attempts: 3,
      backoff: { type: 'fixed', delay: 1_000 },
      removeOnComplete: { count: 1_000, age: 24 * 3600 },
      removeOnFail: { count: 1_000, age: 7 * 24 * 3600 },
    },
  },
  webhookDeliveries: {
    name: 'webhook-deliveries',
    payload: z.object({ deliveryId: z.string() }),
    options: {
      attempts: 6,
      backoff: { type: 'custom' },
      removeOnComplete: { count: 1_000, age: 24 * 3600 },
      removeOnFail: { count: 10_000, age: 7 * 24 * 3600 },
    },
  },
  interactSessions: {
    name: 'interact-sessions',
    // One job per interact session (docs/api.md §18), its id the session's: the worker that takes
    // it serves the session until it ends. Never tried again: a session's page and state die with
    // its worker, and its next call says so instead of finding a fresh page in its place.
    payload: z.object({ sessionId: z.string(), scrapeId: z.string(), userId: z.string() }),
    options: {
      attempts: 1,
      removeOnComplete: { count: 1_000, age: 3600 },
      removeOnFail: { count: 1_000, age: 24 * 3600 },
    },
  },
} as const satisfies Record<string, { name: string; payload: z.ZodType; options: JobsOptions }>;

export type QueueKey = keyof typeof catalog;
export type Payload<K extends QueueKey> = z.infer<(typeof catalog)[K]['payload']>;

/** A typed producer for one catalog queue; `prefix` isolates deployments and test files. */
export function createQueue<K extends QueueKey>(
  key: K,
  connection: ConnectionOptions,
  prefix: string,
): Queue<Payload<K>, unknown, string> {
  const entry = catalog[key];
  return new Queue<Payload<K>, unknown, string>(entry.name, {
    connection,
    prefix,
    defaultJobOptions: entry.options,
  });
}

/**
 * Redis pub/sub channel on which the API tells scraper workers that a run started (payload: run
 * id), so that they look at the frontier at once instead of at their next poll.
 */
export const runStartChannel = (prefix: string): string => `${prefix}:run-start`;

/** Redis pub/sub channel on which the API asks workers to stop a run at once (payload: run id). */
export const runCancelChannel = (prefix: string): string => `${prefix}:run-cancel`;

/**
 * Redis pub/sub channel on which scraper workers announce that a run ended (payload: run id), so
 * that an API process waiting for it (a Firecrawl-compatible scrape) answers at once.
 */
export const runEndChannel = (prefix: string): string => `${prefix}:run-end`;

/** Announcements of runs' ends: `ended` resolves when the run's end is heard, or never. */
export interface RunEnds {
  watch(runId: string): { ended: Promise<void>; stop(): void };
}

/**
 * The runs' ends announced on `runEndChannel`, heard on `subscriber` (a connection of its own):
 * `watch(runId)` resolves `ended` when that run's end is announced, and never otherwise (a lost
 * announcement, a run ended by the API); its caller still looks at the run now and then.
 */
export function runEndsHeard(subscriber: Redis, prefix: string, failed: (err: Error) => void): RunEnds {
  const channel = runEndChannel(prefix);
  const waiting = new Map<string, Set<() => void>>();
  subscriber.on('message', (from: string, runId: string) => {
    if (from !== channel) return;
    for (const heard of waiting.get(runId) ?? []) heard();
    waiting.delete(runId);
  });
  // On each connection: a subscription made while Redis was unreachable was never made.
  const subscribe = () => void subscriber.subscribe(channel).catch(failed);
  subscriber.on('ready', subscribe);
  if (subscriber.status === 'ready') subscribe();
  return {
    watch(runId) {
      let heard = () => {};
      const ended = new Promise<void>((resolve) => {
        heard = resolve;
      });
      const set = waiting.get(runId) ?? new Set();
      set.add(heard);
      waiting.set(runId, set);
      return {
        ended,
        stop() {
          set.delete(heard);
          if (set.size === 0 && waiting.get(runId) === set) waiting.delete(runId);
        },
      };
    },
  };
}

/** Politeness toward target hosts (docs/api.md §19), fleet-wide: hosts paused now (host → end of the pause). */
export const pausedHostsKey = (prefix: string): string => `${prefix}:hosts-paused`;
const PAUSED = new LuaScript(`${REDIS_NOW}
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')`);

/** Target hosts paused now, fleet-wide, by Redis's clock (the pauses' ends are in it). */
export async function pausedHosts(redis: Redis, prefix: string): Promise<number> {
  return Number(await PAUSED.run(redis, 1, pausedHostsKey(prefix)));
}

/** Fleet-wide counts of host waits and pauses: fields `waits`, `backoffs:429`, `backoffs:503`. */
export const hostCountsKey = (prefix: string): string => `${prefix}:host-counts`;

/**
 * The Redis connections of one process: each named after the process and its use (CLIENT LIST
 * shows them), each logging its errors, all closed by `disconnectAll`.
 */
export function redisConnections(
  url: string,
  process: string,
  log: { warn(obj: object, msg: string): void },
  defaults: RedisOptions = {},
): { open(name: string, options?: RedisOptions): Redis; disconnectAll(): void } {
  const opened: Redis[] = [];
  return {
    open(name, options) {
      const redis = new Redis(url, { ...defaults, ...options, connectionName: `${process}:${name}` });
      redis.on('error', (err) => log.warn({ err: err.message, connection: name }, 'redis connection error'));
      opened.push(redis);
      return redis;
    },
    disconnectAll() {
      for (const redis of opened.splice(0)) redis.disconnect();
    },
  };
}
