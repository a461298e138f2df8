import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface LimitRule {
  failures: number;
  windowSeconds: number;
}

/** 5 failed sign-ins per email and address, 30 per address, each in 15 minutes. */
export const SIGN_IN_LIMITS = {
  perAccount: { failures: 5, windowSeconds: 15 * 60 },
  perAddress: { failures: 30, windowSeconds: 15 * 60 },
} satisfies Record<string, LimitRule>;

const digest = (s: string) => createHash('sha256').update(s).digest('base64url').slice(0, 22);

/**
 * Counts failed sign-ins in Redis, shared by every API process. A window starts at the first
 * failure; while either counter is full, sign-in is refused without checking the password.
 */
export class SignInLimiter {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #rules: typeof SIGN_IN_LIMITS;

  constructor(redis: Redis, prefix: string, rules = SIGN_IN_LIMITS) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#rules = rules;
  }

  #keys(email: string, ip: string) {
    return {
      account: `${this.#prefix}:console:signin:acct:${digest(`${email}\n${ip}`)}`,
      address: `${this.#prefix}:console:signin:addr:${digest(ip)}`,
    };
  }

  /** Seconds until sign-in is allowed again, or 0 when it is allowed now. */
  async blockedFor(email: string, ip: string): Promise<number> {
    const keys = this.#keys(email, ip);
    const [account, address] = await this.#redis.mget(keys.account, keys.address);
    const full: string[] = [];
    if (Number(account ?? 0) >= this.#rules.perAccount.failures) full.push(keys.account);
    if (Number(address ?? 0) >= this.#rules.perAddress.failures) full.push(keys.address);
    if (full.length === 0) return 0;
    const ttls = await Promise.all(full.map((k) => this.#redis.ttl(k)));
    return Math.max(1, ...ttls);
  }

  async recordFailure(email: string, ip: string): Promise<void> {
    const keys = this.#keys(email, ip);
    await this.#redis
      .multi()
      .incr(keys.account)
      .expire(keys.account, this.#rules.perAccount.windowSeconds, 'NX')
      .incr(keys.address)
      .expire(keys.address, this.#rules.perAddress.windowSeconds, 'NX')
      .exec();
  }

  /** A successful sign-in clears the account's counter (not the address's). */
  async recordSuccess(email: string, ip: string): Promise<void> {
    await this.#redis.del(this.#keys(email, ip).account);
  }
}
