import type { Redis } from 'ioredis';
import type { Principal } from '../principal.ts';

/** How long a cached key is trusted without hearing of a change. */
export const KEY_CACHE_TTL_MS = 10_000;

/** Redis pub/sub channel on which a revoked or regenerated key is announced (payload: key id). */
const keyChangesChannel = (prefix: string): string => `${prefix}:key-changes`;

/** Tells every API process that a key was revoked or regenerated; never throws. */
export interface KeyChanges {
  announce(keyId: string): Promise<void>;
}

/**
 * Principals of recently used keys, so that most requests skip the key lookup (it was the
 * largest item of the job list's cost, bench/README.md). A revoked key must stop working at once
 * (docs/api.md §2), so the cache is only consulted while this process is subscribed to key changes:
 * every announced change, and every loss of the subscription, empties it, and a lookup that was
 * under way when a change arrived is not remembered. Entries also expire after `ttlMs`.
 */
export class KeyCache {
  readonly #entries = new Map<string, { principal: Principal; expires: number }>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  #subscribed = false;
  #generation = 0;

  constructor(ttlMs = KEY_CACHE_TTL_MS, maxEntries = 10_000) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
  }

  /**
   * Listens for key changes on `subscriber`, a connection of its own (it enters subscriber
   * mode). The cache works from the first acknowledged subscription and stops whenever the
   * connection is lost, until it is subscribed again.
   */
  attach(subscriber: Redis, prefix: string): void {
    const channel = keyChangesChannel(prefix);
    const subscribe = () => {
      subscriber.subscribe(channel).then(
        () => {
          this.forget();
          this.#subscribed = true;
        },
        () => {},
      );
    };
    subscriber.on('ready', subscribe);
    subscriber.on('close', () => {
      this.#subscribed = false;
      this.forget();
    });
    subscriber.on('message', (from: string) => {
      if (from === channel) this.forget();
    });
    if (subscriber.status === 'ready') subscribe();
  }

  /** Whether the cache is in use: subscribed to key changes. */
  get subscribed(): boolean {
    return this.#subscribed;
  }

  /** The cached principal of a token hash, if the cache may be trusted now. */
  get(tokenHash: string): Principal | undefined {
    if (!this.#subscribed) return undefined;
    const entry = this.#entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.expires > Date.now()) return entry.principal;
    this.#entries.delete(tokenHash);
    return undefined;
  }

  /** A token for `remember`: taken before the lookup, it tells whether a change came in between. */
  generation(): number {
    return this.#generation;
  }

  /** Caches a principal found by a lookup that began at `generation`, unless a change arrived since. */
  remember(tokenHash: string, principal: Principal, generation: number): void {
    if (!this.#subscribed || generation !== this.#generation) return;
    if (this.#entries.size >= this.#maxEntries) this.#entries.clear();
    this.#entries.set(tokenHash, { principal, expires: Date.now() + this.#ttlMs });
  }

  /** Drops every entry; lookups under way are not remembered. */
  forget(): void {
    this.#generation++;
    this.#entries.clear();
  }
}

/**
 * A cache listening for key changes on a connection of its own, duplicated from `redis`;
 * disconnect `subscriber` at shutdown.
 */
export function subscribedKeyCache(redis: Redis, prefix: string): { cache: KeyCache; subscriber: Redis } {
  const cache = new KeyCache();
  const subscriber = redis.duplicate();
  subscriber.on('error', () => {}); // the command connection reports Redis errors
  cache.attach(subscriber, prefix);
  return { cache, subscriber };
}

/**
 * Announces key changes on Redis to every API process. `local`, the calling process's own cache,
 * is emptied first, so its next request already sees the change. An announcement that fails
 * (Redis unreachable) goes to `onError` and does not undo the change: the other processes stop
 * accepting the key when their entry expires, within the cache's time to live.
 */
export function redisKeyChanges(
  redis: Redis,
  prefix: string,
  opts: { local?: KeyCache; onError: (err: Error, keyId: string) => void },
): KeyChanges {
  return {
    async announce(keyId) {
      opts.local?.forget();
      await redis.publish(keyChangesChannel(prefix), keyId).catch((err: Error) => opts.onError(err, keyId));
    },
  };
}
