import { createHash } from 'node:crypto';

/** Chooses the proxy for each request of a page and learns from proxies that fail. */
export interface ProxyPicker {
  /** The proxy for a page's request (`attempt` 0 for the first, n for the n-th retry); null means connect directly. */
  pick(attempt: number): { url: string } | null;
  /** Rotates a proxy out after it failed a request (connect error, 407, 502 …). */
  reportFailure(url: string): void;
}

export type ProxyStrategy = 'round_robin' | 'random' | 'sticky';

export interface ProxyEntry {
  url: string;
  country: string | null;
}

/** Thrown by `pick` when a country is required and no configured proxy has it. */
export class NoProxyAvailableError extends Error {
  override name = 'NoProxyAvailableError';
  readonly code = 'PROXY_ERROR';
}

/** How long a proxy that failed is passed over while others are available. */
const FAILURE_COOLDOWN_MS = 60_000;

// Shared by every picker in the process: a proxy that just failed one job is avoided by all jobs,
// and round_robin keeps one counter so that many short-lived pickers still spread evenly.
const lastFailureAt = new Map<string, number>();
let roundRobinCounter = 0;

interface PickerDeps {
  now: () => number;
  random: () => number;
}

/** Creates a picker over the proxies of `country` (all proxies when null); `stickyKey` is usually the job id. */
export function createProxyPicker(
  proxies: ProxyEntry[],
  strategy: ProxyStrategy,
  country: string | null,
  stickyKey: string,
  deps: PickerDeps = { now: Date.now, random: Math.random },
): ProxyPicker {
  const wanted = country?.toUpperCase() ?? null;
  const pool = proxies
    .filter((p) => wanted === null || p.country?.toUpperCase() === wanted)
    .map((p) => p.url);
  const healthy = (url: string) =>
    deps.now() - (lastFailureAt.get(url) ?? Number.NEGATIVE_INFINITY) >= FAILURE_COOLDOWN_MS;
  const leastRecentlyFailed = () =>
    pool.reduce((best, url) => ((lastFailureAt.get(url) ?? 0) < (lastFailureAt.get(best) ?? 0) ? url : best));
  // First healthy proxy walking the pool from `start`; when all are cooling down, the one that failed longest ago.
  const firstHealthyFrom = (start: number) => {
    for (let i = 0; i < pool.length; i++) {
      const url = pool[(start + i) % pool.length];
      if (url !== undefined && healthy(url)) return url;
    }
    return leastRecentlyFailed();
  };
  let stickyUrl: string | undefined;

  const choose = (): string => {
    switch (strategy) {
      case 'round_robin':
        return firstHealthyFrom(roundRobinCounter++ % pool.length);
      case 'random': {
        const candidates = pool.filter(healthy);
        if (candidates.length === 0) return leastRecentlyFailed();
        return candidates[Math.floor(deps.random() * candidates.length)] ?? leastRecentlyFailed();
      }
      case 'sticky': {
        if (stickyUrl !== undefined && healthy(stickyUrl)) return stickyUrl;
        const after = stickyUrl === undefined ? -1 : pool.indexOf(stickyUrl);
        stickyUrl = firstHealthyFrom(after === -1 ? stickyIndex(stickyKey, pool.length) : after + 1);
        return stickyUrl;
      }
    }
  };

  return {
    pick() {
      if (pool.length === 0) {
        if (wanted === null) return null;
        throw new NoProxyAvailableError(`no proxy is configured for country ${wanted}`);
      }
      return { url: choose() };
    },
    reportFailure(url) {
      lastFailureAt.set(url, deps.now());
    },
  };
}

// A hash rather than a per-process memory, so every worker starts a job on the same proxy.
function stickyIndex(key: string, size: number): number {
  return createHash('sha256').update(key).digest().readUInt32BE(0) % size;
}
