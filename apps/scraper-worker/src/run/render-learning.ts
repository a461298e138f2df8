import { LuaScript } from '@scrapejobs/queues';
import type { Redis } from 'ioredis';

/**
 * How a page of `render_config.mode: auto` is got (docs/api.md §23):
 * - `render`: its host's pages need rendering; rendered without a plain fetch first;
 * - `check`: fetched plainly and rendered when its HTML says so or the job's queries find nothing;
 * - `plain`: its host's pages have not needed rendering; fetched plainly and rendered only when its
 *   HTML says so (a query that finds nothing is not worth a render there).
 */
export type RenderPlan = 'render' | 'check' | 'plain';

/** After this many pages of a host in a row needed rendering, its pages are rendered directly. */
export const RENDER_AFTER = 3;
/** After this many pages of a host in a row did not, its queries' misses no longer cost a render. */
export const PLAIN_AFTER = 3;
/** One page in this many of a host whose way is learned is checked plainly, so a change is noticed. */
export const SAMPLE_EVERY = 10;
/** What was learned of a job's host is forgotten after this long without a page. */
const KEEP_S = 7 * 24 * 3600;

// KEYS[1] the job's host. Counts the page; returns its number and the streak (> 0: pages in a
// row that needed rendering, < 0: that did not).
const PLAN = new LuaScript(`
local seen = redis.call('HINCRBY', KEYS[1], 'seen', 1)
redis.call('EXPIRE', KEYS[1], ARGV[1])
return { seen, tonumber(redis.call('HGET', KEYS[1], 'streak') or '0') }`);

// KEYS[1] the job's host; ARGV[1] 1 when the page needed rendering, ARGV[2] the key's lifetime.
const NOTE = new LuaScript(`
local streak = tonumber(redis.call('HGET', KEYS[1], 'streak') or '0')
if ARGV[1] == '1' then streak = math.max(streak, 0) + 1 else streak = math.min(streak, 0) - 1 end
redis.call('HSET', KEYS[1], 'streak', streak)
redis.call('EXPIRE', KEYS[1], ARGV[2])
return streak`);

/**
 * What `auto` rendering has learned of each job's hosts, kept in Redis so that every worker of the
 * fleet learns from the pages of the others.
 */
export class RenderLearning {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  /** How the next page of `host` for `jobId` is got; `check` when Redis cannot say. */
  async plan(jobId: string, host: string): Promise<RenderPlan> {
    const [seen, streak] = (await PLAN.run(this.#redis, 1, this.#key(jobId, host), KEEP_S)) as [
      number,
      number,
    ];
    const learned = streak >= RENDER_AFTER ? 'render' : streak <= -PLAIN_AFTER ? 'plain' : null;
    if (learned === null || seen % SAMPLE_EVERY === 0) return 'check';
    return learned;
  }

  /** Notes whether a page of `host` that was fetched plainly needed rendering. */
  async note(jobId: string, host: string, needed: boolean): Promise<void> {
    await NOTE.run(this.#redis, 1, this.#key(jobId, host), needed ? '1' : '0', KEEP_S);
  }

  #key(jobId: string, host: string): string {
    return `${this.#prefix}:render-learning:${jobId}:${host}`;
  }
}
