import type { Redis } from 'ioredis';
import { TokenBudgetError } from './errors.ts';

/** A day's key lives this long after it was last spent from: the next day's reads never need it. */
const KEY_TTL_S = 2 * 24 * 3600;

/** An account's tokens today (UTC), and its limit (null: none). */
export interface TokenUsage {
  used: number;
  limit: number | null;
  dayStart: Date;
  dayEnd: Date;
}

/**
 * The tokens each account spends on model calls per UTC day, shared by every worker and API
 * process in Redis (docs/api.md §24). A call starts only while the account is under its limit
 * and is counted when it ends, so calls in flight may pass the limit by their own size.
 */
export class TokenLedger {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #perDay: number;
  readonly #now: () => Date;

  /** `perDay` 0: no limit (the tokens are still counted). */
  constructor(redis: Redis, prefix: string, perDay: number, now: () => Date = () => new Date()) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#perDay = perDay;
    this.#now = now;
  }

  /** Throws TokenBudgetError when the account has spent its tokens for today. */
  async check(userId: string): Promise<void> {
    if (this.#perDay === 0) return;
    const used = Number((await this.#redis.get(this.#key(userId))) ?? 0);
    if (used >= this.#perDay)
      throw new TokenBudgetError(
        `the account has used its ${this.#perDay} model tokens for today (LLM_TOKENS_PER_DAY); the budget renews at 00:00 UTC`,
      );
  }

  /** Counts tokens a call spent. */
  async spend(userId: string, tokens: number): Promise<void> {
    if (tokens <= 0) return;
    const key = this.#key(userId);
    await this.#redis.multi().incrby(key, Math.ceil(tokens)).expire(key, KEY_TTL_S).exec();
  }

  async usage(userId: string): Promise<TokenUsage> {
    const used = Number((await this.#redis.get(this.#key(userId))) ?? 0);
    const dayStart = new Date(`${this.#day()}T00:00:00.000Z`);
    return {
      used,
      limit: this.#perDay === 0 ? null : this.#perDay,
      dayStart,
      dayEnd: new Date(dayStart.getTime() + 24 * 3600 * 1000),
    };
  }

  #day(): string {
    return this.#now().toISOString().slice(0, 10);
  }

  #key(userId: string): string {
    return `${this.#prefix}:llm-tokens:${userId}:${this.#day()}`;
  }
}
