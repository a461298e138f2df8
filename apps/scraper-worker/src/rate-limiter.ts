import { LuaScript, REDIS_NOW } from '@scrapejobs/queues';
import type { Redis } from 'ioredis';

// Hands out start slots spaced `interval` apart, from Redis's clock, so every worker of the
// fleet draws from one budget per job and requests never come in bursts. One call serves the
// callers of a batch (ARGV[2..], how long each will wait, shortest first) in turn: each takes the
// next slot unless it is further away than the caller will wait, and then the slot stays for the
// next caller. Answers the flags of the callers served (1) and not (0), the first slot as it is
// from now (ms), the budget's next slot before and after the call as text (for GIVE_BACK), and
// the first slot as text.
const SCRIPT = new LuaScript(`${REDIS_NOW}
local interval = tonumber(ARGV[1])
local before = redis.call('GET', KEYS[1]) or '0'
local slot = math.max(now, tonumber(before))
local taken = 0
local flags = {}
for i = 2, #ARGV do
  if slot + taken * interval - now <= tonumber(ARGV[i]) then
    taken = taken + 1
    flags[i - 1] = 1
  else
    flags[i - 1] = 0
  end
end
local after = before
if taken > 0 then
  after = tostring(slot + taken * interval)
  redis.call('SET', KEYS[1], after, 'PX', math.ceil(slot + taken * interval - now + 60000))
end
return {flags, slot - now, before, after, tostring(slot)}`);

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

/** A caller of a batch: how long it will wait, and how to answer it. */
interface Asker {
  maxWaitMs: number;
  resolve(answer: Answer): void;
  reject(err: unknown): void;
}

/** A slot taken (`wait` ms from now, with the budget's text before and after it), or the wait for one not taken. */
type Answer = { taken: true; wait: number; before: string; after: string } | { taken: false; wait: number };

/** Per-job request budget (`rate_limit` requests per minute) shared by the whole worker fleet. */
export class JobRateLimiter {
  readonly #redis: Redis;
  readonly #prefix: string;
  /** The callers of each budget waiting for their batch to go out, by key and interval. */
  readonly #batches = new Map<string, Asker[]>();

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
      const answer = await this.#ask(key, interval, maxWaitMs);
      if (!answer.taken) return asked + answer.wait;
      const { wait, before, after } = answer;
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

  /**
   * One caller's turn at a budget. The callers that ask in the same turn of the event loop (the
   * URLs of a claim start together) go to Redis in one call, taking consecutive slots.
   */
  #ask(key: string, interval: number, maxWaitMs: number): Promise<Answer> {
    const id = `${key} ${interval}`;
    return new Promise<Answer>((resolve, reject) => {
      const batch = this.#batches.get(id);
      if (batch) return void batch.push({ maxWaitMs, resolve, reject });
      this.#batches.set(id, [{ maxWaitMs, resolve, reject }]);
      process.nextTick(() => {
        const askers = this.#batches.get(id)!;
        this.#batches.delete(id);
        this.#take(key, interval, askers).catch((err: unknown) => {
          for (const asker of askers) asker.reject(err);
        });
      });
    });
  }

  async #take(key: string, interval: number, askers: Asker[]): Promise<void> {
    // The caller that waits least gets the first slot, so that a slot too far for one is never
    // refused to a later caller that would wait for it.
    askers.sort((a, b) => a.maxWaitMs - b.maxWaitMs);
    const [flags, wait, before, after, first] = (await SCRIPT.run(
      this.#redis,
      1,
      key,
      interval,
      ...askers.map((asker) => asker.maxWaitMs),
    )) as [number[], number, string, string, string];
    // The budget's text around each slot: the first slot's before is what the budget held, the
    // last one's after what it holds now, and between them the slots themselves, so that a start
    // given back frees its slot only while every start after it has been given back too.
    const taken = flags.filter(Boolean).length;
    const slotText = (n: number) =>
      n === 0 ? before : n === taken ? after : String(Number(first) + n * interval);
    let n = 0;
    askers.forEach((asker, i) => {
      if (flags[i]) {
        asker.resolve({
          taken: true,
          wait: wait + n * interval,
          before: slotText(n),
          after: slotText(n + 1),
        });
        n++;
      } else asker.resolve({ taken: false, wait: wait + n * interval });
    });
  }
}
