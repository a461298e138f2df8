import { randomBytes } from 'node:crypto';
import { LuaScript, REDIS_NOW } from '@scrapejobs/queues';
import type { Redis } from 'ioredis';

// KEYS[1]: the user's places (member → expiry, Redis time). ARGV: max, lease ms, then the members
// wanted; takes as many as are free, in order, and returns how many.
const TAKE = new LuaScript(`${REDIS_NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local free = tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1])
local taken = 0
for i = 3, #ARGV do
  if taken >= free then break end
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[i])
  taken = taken + 1
end
if taken > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return taken`);

// KEYS[1]: a user's places; ARGV: lease ms, then the members this process still holds.
const RENEW = new LuaScript(`${REDIS_NOW}
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`);

export interface UrlLeaseOptions {
  /** MAX_RUNNING_URLS_PER_USER: one user's URLs in flight across the fleet. */
  maxPerUser: number;
  /** A place not renewed this long (its process died) is free again: RUN_LOCK_MS, as the URL's own lease. */
  leaseMs: number;
}

/**
 * A URL in flight holds a place in its user's share of the whole fleet, taken before the URL is
 * claimed and let go when it ends, whatever its outcome. A place let go stays this process's
 * until `giveBack` (the dispatcher's next look at the frontier), so that the next claim of the
 * same user takes it without asking Redis: one round trip per look instead of one per URL. A
 * process that dies keeps none forever: its places expire.
 */
export class UrlLeases {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #maxPerUser: number;
  readonly #leaseMs: number;
  readonly #process = randomBytes(6).toString('hex');
  #next = 0;
  /** Places held by this process, by user. */
  readonly #held = new Map<string, Set<string>>();
  /** Places held but let go, by user: the next take reuses them. */
  readonly #spare = new Map<string, string[]>();

  constructor(redis: Redis, prefix: string, options: UrlLeaseOptions) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#maxPerUser = options.maxPerUser;
    this.#leaseMs = options.leaseMs;
  }

  /** How often `renew` must run so that live places never expire. */
  get renewEveryMs(): number {
    return Math.floor(this.#leaseMs / 3);
  }

  #userKey(userId: string): string {
    return `${this.#prefix}:user-urls:${userId}`;
  }

  /** Takes up to `count` places in a user's share of the fleet; as many as are free. */
  async take(userId: string, count: number): Promise<string[]> {
    const spare = this.#spare.get(userId) ?? [];
    const reused = spare.splice(0, count);
    if (spare.length === 0) this.#spare.delete(userId);
    if (reused.length === count) return reused;
    const wanted = Array.from({ length: count - reused.length }, () => `${this.#process}:${this.#next++}`);
    const taken = Number(
      await TAKE.run(this.#redis, 1, this.#userKey(userId), this.#maxPerUser, this.#leaseMs, ...wanted),
    );
    const places = wanted.slice(0, taken);
    const held = this.#held.get(userId) ?? new Set();
    for (const place of places) held.add(place);
    if (held.size > 0) this.#held.set(userId, held);
    return [...reused, ...places];
  }

  /** Lets places go: they stay held (and renewed) until `giveBack`, for the next take of the user. */
  letGo(userId: string, places: readonly string[]): void {
    if (places.length === 0) return;
    const spare = this.#spare.get(userId) ?? [];
    spare.push(...places);
    this.#spare.set(userId, spare);
  }

  /** Gives every place let go back to the fleet, one round trip per user. */
  async giveBack(): Promise<void> {
    const spare = [...this.#spare];
    this.#spare.clear();
    await Promise.all(
      spare.map(async ([userId, places]) => {
        const held = this.#held.get(userId);
        for (const place of places) held?.delete(place);
        if (held?.size === 0) this.#held.delete(userId);
        await this.#redis.zrem(this.#userKey(userId), ...places);
      }),
    );
  }

  /** Extends every place this process holds. */
  async renew(): Promise<void> {
    await Promise.all(
      [...this.#held].map(([userId, places]) =>
        RENEW.run(this.#redis, 1, this.#userKey(userId), this.#leaseMs, ...places),
      ),
    );
  }
}
