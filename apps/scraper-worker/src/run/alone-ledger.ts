import type { Redis } from 'ioredis';

/** Long enough for any take-over of the URL under that claim; the run's own timeout is shorter. */
const KEEP_S = 24 * 3600;

/**
 * Alone extractions (docs/api.md §16a) that have ended, noted by their worker as they end beside
 * clearing their mark in PostgreSQL: a worker killed before the mark was cleared (PostgreSQL slow
 * or unreachable) did not die on the page, and the worker that takes the URL over must not blame it.
 */
export class AloneLedger {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async ended(runId: string, url: { seq: number; claims: number }): Promise<void> {
    await this.#redis.set(this.#key(runId, url), '1', 'EX', KEEP_S);
  }

  async hasEnded(runId: string, url: { seq: number; claims: number }): Promise<boolean> {
    return (await this.#redis.exists(this.#key(runId, url))) === 1;
  }

  #key(runId: string, { seq, claims }: { seq: number; claims: number }): string {
    return `${this.#prefix}:alone-ended:${runId}:${seq}:${claims}`;
  }
}
