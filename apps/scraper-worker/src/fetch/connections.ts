import type http from 'node:http';
import type https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { AddressPolicy } from './address.ts';
import { scraperGuard } from './guard.ts';

/** A kept-alive connection left unused this long is closed (servers commonly close theirs at 5 s). */
const IDLE_MS = 4_000;

export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

/**
 * The kept-alive connections of one run's direct fetches (never through a proxy): a page after
 * the first on a host reuses an open connection instead of opening one. Every new connection is
 * checked as a fetch's own would be (docs/api.md §7); an open one stays with the address it was
 * checked on. One pool serves one run, so no connection carries two users' requests.
 */
export class ConnectionPool {
  #agents: Agents | null = null;

  /** The pool's agents, made with the policy and resolver of its first fetch. */
  agents(policy: AddressPolicy, lookup: LookupFunction): Agents {
    this.#agents ??= scraperGuard(policy, lookup).agents({ keepAlive: true, timeout: IDLE_MS });
    return this.#agents;
  }

  /** Closes every connection, idle or not; the pool opens new ones if used again. */
  close(): void {
    this.#agents?.http.destroy();
    this.#agents?.https.destroy();
    this.#agents = null;
  }
}
