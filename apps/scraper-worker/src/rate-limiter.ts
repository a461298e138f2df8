import { LuaScript, REDIS_NOW } from '@scrapejobs/queues';
import type { Redis } from 'ioredis';

// Hands out start slots spaced `interval` apart, from Redis's clock, so every worker of the
// fleet draws from one budget per job and requests never come in bursts. A slot further away
// than the caller will wait (ARGV[2]) is not taken: the answer is only how far it is. A slot
// taken answers the budget's next slot before and after, as text, for GIVE_BACK.
const SCRIPT = new LuaScript(`${REDIS_NOW}
local interval = tonumber(ARGV[1])
local before = redis.call('GET', KEYS[1]) or '0'
local slot = math.max(now, tonumber(before))
if slot - now > tonumber(ARGV[2]) then return {0, slot - now} end
local after = tostring(slot + interval)
redis.call('SET', KEYS[1], after, 'PX', math.ceil(slot + interval - now + 60000))
return {1, slot - now, before, after}`);

// A start whose request did not start after all: the budget's next slot goes back to what it
// was, unless another start was taken since (it then keeps its own slot, and the one after).
const GIVE_BACK = new LuaScript(`${REDIS_NOW}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', math.max(1, math.ceil(tonumber(ARGV[2]) - now)) + 60000)
return 1`);

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

/** A start taken from a job's budget. */
export interface Start {
  /** The request did not start after all: its slot goes back to the budget if no later start was taken. */
  giveBack(): Promise<void>;
}

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
   * Waits until this job may start its next request, and resolves the start taken; rejects if
   * `signal` aborts first. When the job's next start is more than `maxWaitMs` away, takes
   * nothing and resolves the time (epoch ms) of that start, so the caller can free what it holds
   * meanwhile.
   */
  async acquire(
    jobId: string,
    perMinute: number,
    signal?: AbortSignal,
    maxWaitMs = FOREVER,
  ): Promise<Start | number> {
    const key = `${this.#prefix}:job-rate:${jobId}`;
    const interval = 60_000 / perMinute;
    for (let attempt = 0; ; attempt++) {
      const asked = Date.now();
      const [taken, wait, before, after] = (await SCRIPT.run(this.#redis, 1, key, interval, maxWaitMs)) as [
        number,
        number,
        string,
        string,
      ];
      if (!taken) return asked + wait;
      const start: Start = {
        giveBack: async () => {
          await GIVE_BACK.run(this.#redis, 1, key, after, before);
        },
      };
      if (wait > 0)
        await sleep(wait, signal).catch(async (err) => {
          await start.giveBack().catch(() => {});
          throw err;
        });
      // A process held up while it asked or waited (a long pause, a stopped container, a starved
      // CPU) goes on after the next slot, which may be another worker's start now: it takes one
      // new slot instead. Once only, so that a process that is merely slow is never starved.
      if (attempt > 0 || Date.now() - (asked + wait) <= interval) return start;
    }
  }
}
