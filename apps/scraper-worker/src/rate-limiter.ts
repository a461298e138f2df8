import { LuaScript, REDIS_NOW } from '@scrapejobs/queues';
import type { Redis } from 'ioredis';

// Hands out start slots spaced `interval` apart, from Redis's clock, so every worker of the
// fleet draws from one budget per job and requests never come in bursts. A slot further away
// than the caller will wait (ARGV[2]) is not taken: the answer is only how far it is.
const SCRIPT = new LuaScript(`${REDIS_NOW}
local interval = tonumber(ARGV[1])
local nextSlot = tonumber(redis.call('GET', KEYS[1]) or '0')
local slot = math.max(now, nextSlot)
if slot - now > tonumber(ARGV[2]) then return {0, slot - now} end
redis.call('SET', KEYS[1], tostring(slot + interval), 'PX', math.ceil(slot + interval - now + 60000))
return {1, slot - now}`);

const PEEK = new LuaScript(`${REDIS_NOW}
return math.max(0, tonumber(redis.call('GET', KEYS[1]) or '0') - now)`);

const FOREVER = Number.MAX_SAFE_INTEGER;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Per-job request budget (`rate_limit` requests per minute) shared by the whole worker fleet. */
export class JobRateLimiter {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  /** How long until this job may start its next request (ms, 0 for now), taking nothing. */
  async untilNextStart(jobId: string): Promise<number> {
    return (await PEEK.run(this.#redis, 1, `${this.#prefix}:job-rate:${jobId}`)) as number;
  }

  /**
   * Waits until this job may start its next request, and resolves null; rejects if `signal`
   * aborts first. When the job's next start is more than `maxWaitMs` away, takes nothing and
   * resolves the time (epoch ms) of that start, so the caller can free what it holds meanwhile.
   */
  async acquire(
    jobId: string,
    perMinute: number,
    signal?: AbortSignal,
    maxWaitMs = FOREVER,
  ): Promise<number | null> {
    const interval = 60_000 / perMinute;
    for (let attempt = 0; ; attempt++) {
      const asked = Date.now();
      const [taken, wait] = (await SCRIPT.run(
        this.#redis,
        1,
        `${this.#prefix}:job-rate:${jobId}`,
        interval,
        maxWaitMs,
      )) as [number, number];
      if (!taken) return asked + wait;
      if (wait > 0) await sleep(wait, signal);
      // A process held up while it asked or waited (a long pause, a stopped container, a starved
      // CPU) goes on after the next slot, which may be another worker's start now: it takes one
      // new slot instead. Once only, so that a process that is merely slow is never starved.
      if (attempt > 0 || Date.now() - (asked + wait) <= interval) return null;
    }
  }
}
