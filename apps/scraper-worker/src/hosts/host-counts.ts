import type { Redis } from 'ioredis';

/**
 * This worker's share of the fleet-wide host counts (waits, 429/503 pauses) that the API's
 * /metrics shows (docs/api.md §19), added to the counts in Redis at most once per `everyMs`
 * rather than with each wait: one round trip a second instead of one for most URLs on a busy
 * host. Counts that could not be added are kept for the next try.
 */
export class HostCounts {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #everyMs: number;
  readonly #failed: (err: Error) => void;
  readonly #pending = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;

  constructor(redis: Redis, key: string, everyMs: number, failed: (err: Error) => void) {
    this.#redis = redis;
    this.#key = key;
    this.#everyMs = everyMs;
    this.#failed = failed;
  }

  add(field: string): void {
    this.#pending.set(field, (this.#pending.get(field) ?? 0) + 1);
    this.#arm();
  }

  #arm(): void {
    this.#timer ??= setTimeout(() => void this.flush(), this.#everyMs).unref();
  }

  /** Adds what is counted here to Redis now; never throws. */
  async flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const counted = [...this.#pending];
    this.#pending.clear();
    if (counted.length === 0) return;
    const multi = this.#redis.multi();
    for (const [field, n] of counted) multi.hincrby(this.#key, field, n);
    try {
      const results = await multi.exec();
      const error = results?.find(([err]) => err)?.[0];
      if (error) throw error;
    } catch (err) {
      this.#failed(err as Error);
      for (const [field, n] of counted) this.#pending.set(field, (this.#pending.get(field) ?? 0) + n);
      this.#arm();
    }
  }
}
