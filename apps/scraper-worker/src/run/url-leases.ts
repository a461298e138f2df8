import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

// KEYS[1]: the user's leases (member → expiry, Redis time); KEYS[2]: the run's crash marks
// (URL index → URLs begun and not ended). ARGV: max, lease ms, member, URL index, marks' TTL (s).
const BEGIN = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('HINCRBY', KEYS[2], ARGV[4], 1)
redis.call('EXPIRE', KEYS[2], ARGV[5])
return 1`;

// ARGV: member, URL index.
const END = `
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('HINCRBY', KEYS[2], ARGV[2], -1) <= 0 then redis.call('HDEL', KEYS[2], ARGV[2]) end
return 1`;

// KEYS[1]: a user's leases; ARGV: lease ms, then the members this process still holds.
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;

const MARKS_TTL_SECONDS = 7 * 24 * 3600;

export interface UrlLeaseOptions {
  /** MAX_RUNNING_URLS_PER_USER: one user's URLs in flight across the fleet. */
  maxPerUser: number;
  /** A lease not renewed this long (its process died) no longer counts. */
  leaseMs?: number;
}

/**
 * A URL in flight holds a lease: a place in its user's share of the whole fleet, and a crash
 * mark on its run. Both end when the URL ends, whatever its outcome. A process that dies keeps
 * neither forever: its places expire with their leases, and its marks stay behind, telling the
 * worker that takes the run over which URLs were being processed when it died.
 */
export class UrlLeases {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #maxPerUser: number;
  readonly #leaseMs: number;
  readonly #process = randomBytes(6).toString('hex');
  /** Members held by this process, by user. */
  readonly #held = new Map<string, Set<string>>();

  constructor(redis: Redis, prefix: string, options: UrlLeaseOptions) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#maxPerUser = options.maxPerUser;
    this.#leaseMs = options.leaseMs ?? 60_000;
  }

  /** How often `renew` must run so that live leases never expire. */
  get renewEveryMs(): number {
    return Math.floor(this.#leaseMs / 3);
  }

  #userKey(userId: string): string {
    return `${this.#prefix}:user-urls:${userId}`;
  }

  #marksKey(runId: string): string {
    return `${this.#prefix}:run-crash-marks:${runId}`;
  }

  #member(runId: string, index: number): string {
    return `${this.#process}:${runId}:${index}`;
  }

  /** Takes a lease for URL `index` of a run; false when its user's share of the fleet is full. */
  async begin(userId: string, runId: string, index: number): Promise<boolean> {
    const member = this.#member(runId, index);
    const keys = [this.#userKey(userId), this.#marksKey(runId)];
    const taken = await this.#redis.eval(
      BEGIN,
      2,
      ...keys,
      this.#maxPerUser,
      this.#leaseMs,
      member,
      index,
      MARKS_TTL_SECONDS,
    );
    if (taken !== 1) return false;
    const held = this.#held.get(userId) ?? new Set();
    held.add(member);
    this.#held.set(userId, held);
    return true;
  }

  /** Ends the lease of URL `index`, whatever became of the URL. */
  async end(userId: string, runId: string, index: number): Promise<void> {
    const member = this.#member(runId, index);
    const held = this.#held.get(userId);
    held?.delete(member);
    if (held?.size === 0) this.#held.delete(userId);
    await this.#redis.eval(END, 2, this.#userKey(userId), this.#marksKey(runId), member, index);
  }

  /** URLs of a run that were in flight when a process died, with how many times that happened. */
  async crashMarks(runId: string): Promise<Map<number, number>> {
    const raw = await this.#redis.hgetall(this.#marksKey(runId));
    return new Map(
      Object.entries(raw)
        .map(([index, count]) => [Number(index), Number(count)] as const)
        .filter(([, count]) => count > 0),
    );
  }

  /** Drops a run's crash marks once the run has ended. */
  async forget(runId: string): Promise<void> {
    await this.#redis.del(this.#marksKey(runId));
  }

  /** Extends every lease this process holds. */
  async renew(): Promise<void> {
    await Promise.all(
      [...this.#held].map(([userId, members]) =>
        this.#redis.eval(RENEW, 1, this.#userKey(userId), this.#leaseMs, ...members),
      ),
    );
  }
}
