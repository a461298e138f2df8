import { randomBytes } from 'node:crypto';
import { repeat } from '@scrapejobs/observability';
import { pausedHosts, pausedHostsKey } from '@scrapejobs/queues';
import type { Redis } from 'ioredis';
import { parseRetryAfter } from '../fetch/backoff.ts';
import { LEAVE, RELEASE, RENEW, TAKE } from './scripts.ts';

export interface HostLimits {
  /** HOST_MAX_CONCURRENCY: requests in flight to one host, fleet-wide. */
  maxConcurrency: number;
  /** HOST_MAX_REQUESTS_PER_SECOND (0: none): request starts spaced 1000/n ms apart, fleet-wide. */
  maxPerSecond: number;
  /** HOST_RETRY_AFTER_CAP_S in ms: the longest pause a Retry-After can impose. */
  retryAfterCapMs: number;
  /** A place not renewed this long is free again (its worker died). */
  leaseMs: number;
}

export interface HostObserver {
  /** An acquire could not be granted at its first ask. */
  waited(): void;
  /** A host answered 429 or 503 and is paused for the fleet. */
  backoff(reason: '429' | '503'): void;
  /** A call to Redis the gate makes on its own (renewing places, ending a wait) failed; it carries on. */
  failed?(err: Error): void;
}

export interface HostPlace {
  /** Gives the place back with what the host answered: status null for a network failure. */
  release(answer: { status: number | null; retryAfter?: string }): Promise<void>;
}

export interface HostGateOptions {
  /** How often a waiter asks again when no release wakes it (ms). */
  pollMs?: number;
  /** When places stay taken until a wait runs out, how far off the retry time given back is (ms). */
  busyRetryMs?: number;
}

/** The gate closed while a request waited for a place. */
export class HostGateClosedError extends Error {
  override name = 'HostGateClosedError';
  readonly code = 'HOST_GATE_CLOSED';

  constructor() {
    super('host gate closed');
  }
}

type Outcome = HostPlace | { retryAt: number };

interface Waiter {
  deadline: number;
  /** Counted in `waited` already. */
  waited: boolean;
  settle(outcome: Outcome): void;
  fail(err: unknown): void;
}

/** This process's waiters for one host and user: only the oldest asks Redis, the others queue behind it. */
interface Line {
  host: string;
  user: string;
  waiters: Waiter[];
  running: boolean;
  /** Counted as waiting in Redis since its last refusal. */
  present: boolean;
  /** A place may have come free since the ask under way began. */
  woken: boolean;
  wake: (() => void) | null;
}

/** Ms a turn (and a pause's row of answers) is remembered at an idle host. */
const KEEP_MS = 600_000;
/** A wait with no answer from Redis this long after it should have ended ends anyway (Redis is down). */
const STALL_MS = 1_000;
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Polite access to target hosts for the whole fleet (docs/api.md §19). A request takes a place at
 * its host before it starts and gives it back with the host's answer. Redis holds, per host, the
 * places in flight (leased, so a dead worker's come back), the next start allowed, a 429/503 pause,
 * and the users waiting with their turns, so the places go round among users. A release while
 * someone waits announces the host on one channel, waking the waiters of every worker at once;
 * they also poll, so a lost message or an expired lease only delays them.
 */
export class HostGate {
  readonly #redis: Redis;
  readonly #subscriber: Redis;
  readonly #prefix: string;
  readonly #limits: HostLimits;
  readonly #observer: HostObserver | undefined;
  readonly #pollMs: number;
  readonly #busyRetryMs: number;
  readonly #channel: string;
  readonly #id = randomBytes(6).toString('hex');
  #seq = 0;
  #closed = false;
  /** Tokens of the places this process holds, by host. */
  readonly #held = new Map<string, Set<string>>();
  readonly #lines = new Map<string, Map<string, Line>>();
  readonly #runs = new Set<Promise<void>>();
  readonly #stopRenew: () => void;
  readonly #onMessage = (channel: string, host: string) => {
    if (channel !== this.#channel) return;
    for (const line of this.#lines.get(host)?.values() ?? []) this.#wake(line);
  };

  constructor(
    redis: Redis,
    subscriber: Redis,
    prefix: string,
    limits: HostLimits,
    observer?: HostObserver,
    options: HostGateOptions = {},
  ) {
    this.#redis = redis;
    this.#subscriber = subscriber;
    this.#prefix = prefix;
    this.#limits = limits;
    this.#observer = observer;
    this.#pollMs = options.pollMs ?? 200;
    this.#busyRetryMs = options.busyRetryMs ?? 1_000;
    this.#channel = `${prefix}:host-freed`;
    subscriber.on('message', this.#onMessage);
    subscriber.subscribe(this.#channel).catch((err: Error) => this.#failed(err));
    this.#stopRenew = repeat(
      Math.max(1, Math.floor(limits.leaseMs / 3)),
      () => this.#renew(),
      (err) => this.#failed(err),
    );
  }

  /**
   * A place at `host` for a request of `userId`'s, or, when none can be had within maxWaitMs, the
   * epoch ms at which to try again (the caller then gives its URL back and holds nothing meanwhile).
   * Rejects with signal.reason when aborted.
   */
  acquire(host: string, userId: string, signal: AbortSignal, maxWaitMs: number): Promise<Outcome> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#closed) return Promise.reject(new HostGateClosedError());
    return new Promise<Outcome>((resolve, reject) => {
      const line = this.#lineOf(host, userId);
      const deadline = Date.now() + Math.max(0, maxWaitMs);
      let stall: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(stall);
        signal.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        deadline,
        waited: line.waiters.length > 0,
        settle: (outcome) => {
          done();
          resolve(outcome);
        },
        fail: (err) => {
          done();
          reject(err);
        },
      };
      const onAbort = () => {
        this.#drop(line, waiter);
        waiter.fail(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const stallMs = deadline - Date.now() + STALL_MS;
      if (stallMs <= MAX_TIMER_MS) {
        stall = setTimeout(() => {
          this.#drop(line, waiter);
          waiter.settle({ retryAt: Date.now() + this.#busyRetryMs });
        }, stallMs);
      }
      if (waiter.waited) this.#observer?.waited();
      line.waiters.push(waiter);
      if (!line.running) this.#start(line);
    });
  }

  /** Hosts paused by a backoff now, fleet-wide. */
  async pausedHosts(): Promise<number> {
    return pausedHosts(this.#redis, this.#prefix);
  }

  /** Stops renewing and listening; waits under way reject, and the places this process holds are given back. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopRenew();
    this.#subscriber.off('message', this.#onMessage);
    const unsubscribed = this.#subscriber.unsubscribe(this.#channel).catch((err: Error) => this.#failed(err));
    for (const lines of this.#lines.values()) {
      for (const line of lines.values()) {
        for (const waiter of line.waiters.splice(0)) waiter.fail(new HostGateClosedError());
        this.#wake(line);
      }
    }
    await Promise.allSettled([...this.#runs]);
    const held = [...this.#held].flatMap(([host, tokens]) => [...tokens].map((token) => ({ host, token })));
    this.#held.clear();
    await Promise.all([unsubscribed, ...held.map(({ host, token }) => this.#giveBack(host, token))]);
  }

  #key(host: string, part: string): string {
    return `${this.#prefix}:host:${host}:${part}`;
  }

  #pausedKey(): string {
    return pausedHostsKey(this.#prefix);
  }

  #failed(err: unknown): void {
    this.#observer?.failed?.(err instanceof Error ? err : new Error(String(err)));
  }

  #lineOf(host: string, user: string): Line {
    let lines = this.#lines.get(host);
    if (!lines) {
      lines = new Map();
      this.#lines.set(host, lines);
    }
    let line = lines.get(user);
    if (!line) {
      line = { host, user, waiters: [], running: false, present: false, woken: false, wake: null };
      lines.set(user, line);
    }
    return line;
  }

  #wake(line: Line): void {
    line.woken = true;
    line.wake?.();
  }

  /** Takes a waiter out of its line; an emptied line is woken so that it stops waiting in Redis at once. */
  #drop(line: Line, waiter: Waiter): void {
    const at = line.waiters.indexOf(waiter);
    if (at < 0) return;
    line.waiters.splice(at, 1);
    if (line.waiters.length === 0) this.#wake(line);
  }

  #start(line: Line): void {
    line.running = true;
    const run = this.#run(line)
      .catch((err: unknown) => this.#failed(err))
      .finally(() => this.#runs.delete(run));
    this.#runs.add(run);
  }

  async #run(line: Line): Promise<void> {
    try {
      for (;;) {
        while (line.waiters.length > 0 && !this.#closed) await this.#ask(line);
        if (!line.present) break;
        line.present = false;
        await this.#leave(line);
        if (line.waiters.length === 0 || this.#closed) break;
      }
    } finally {
      line.running = false;
      const lines = this.#lines.get(line.host);
      if (line.waiters.length === 0 && lines?.get(line.user) === line) {
        lines.delete(line.user);
        if (lines.size === 0) this.#lines.delete(line.host);
      }
    }
  }

  /** One ask for the line's oldest waiter; on a refusal, settles the waits that are over and sleeps. */
  async #ask(line: Line): Promise<void> {
    const token = `${this.#id}:${this.#seq++}`;
    line.woken = false;
    const last = line.waiters.length === 1;
    const waitMs = await this.#take(line, token, last);
    if (waitMs === null) {
      if (last) line.present = false;
      return this.#hand(line, token);
    }
    line.present = true;
    const head = line.waiters[0];
    if (head && !head.waited) {
      head.waited = true;
      this.#observer?.waited();
    }
    const now = Date.now();
    const retryAt = now + (waitMs >= 0 ? waitMs : this.#busyRetryMs);
    // A waiter that cannot have a place before its deadline is told at once when to come back;
    // after the last one, the user stops waiting in Redis first, so that nothing of it is left.
    const over = new Set(
      line.waiters.filter((waiter) => waiter.deadline <= now || (waitMs >= 0 && waiter.deadline < retryAt)),
    );
    if (over.size > 0) {
      line.waiters = line.waiters.filter((waiter) => !over.has(waiter));
      if (line.waiters.length === 0) {
        line.present = false;
        await this.#leave(line);
      }
      for (const waiter of over) waiter.settle({ retryAt });
    }
    if (line.woken || line.waiters.length === 0 || this.#closed) return;
    // Jittered, so that the workers' polls do not come in step.
    const poll = this.#pollMs * (0.75 + Math.random() / 2);
    let until = now + (waitMs >= 0 ? waitMs : poll);
    for (const waiter of line.waiters) until = Math.min(until, waiter.deadline);
    await this.#sleep(line, until - now);
  }

  /** Ms until the host's answer may change (-1: unknown), or null with the place taken. */
  async #take(line: Line, token: string, last: boolean): Promise<number | null> {
    const { maxConcurrency, maxPerSecond, leaseMs } = this.#limits;
    try {
      const [taken, , waitMs] = (await TAKE.run(
        this.#redis,
        5,
        this.#key(line.host, 'places'),
        this.#key(line.host, 'state'),
        this.#key(line.host, 'queue'),
        this.#key(line.host, 'seen'),
        this.#key(line.host, 'tags'),
        line.user,
        token,
        maxConcurrency,
        leaseMs,
        maxPerSecond > 0 ? 1000 / maxPerSecond : 0,
        3 * this.#pollMs,
        KEEP_MS,
        last ? 1 : 0,
      )) as [number, string?, number?];
      return taken ? null : (waitMs ?? -1);
    } catch (err) {
      this.#failed(err);
      return -1;
    }
  }

  /** A place taken goes to the line's oldest waiter, who may have changed during the ask. */
  async #hand(line: Line, token: string): Promise<void> {
    const waiter = line.waiters.shift();
    if (!waiter) return this.#giveBack(line.host, token);
    let tokens = this.#held.get(line.host);
    if (!tokens) {
      tokens = new Set();
      this.#held.set(line.host, tokens);
    }
    tokens.add(token);
    waiter.settle(this.#place(line.host, token));
  }

  #place(host: string, token: string): HostPlace {
    let released = false;
    return {
      release: async ({ status, retryAfter }) => {
        if (released) return;
        released = true;
        const tokens = this.#held.get(host);
        tokens?.delete(token);
        if (tokens?.size === 0) this.#held.delete(host);
        const backoff = status === 429 || status === 503;
        if (backoff) this.#observer?.backoff(status === 429 ? '429' : '503');
        const pauseMs = backoff
          ? parseRetryAfter(retryAfter, Date.now(), this.#limits.retryAfterCapMs)
          : undefined;
        await this.#release(host, token, status, pauseMs ?? -1);
      },
    };
  }

  async #release(host: string, token: string, status: number | null, pauseMs: number): Promise<void> {
    await RELEASE.run(
      this.#redis,
      4,
      this.#key(host, 'places'),
      this.#key(host, 'state'),
      this.#pausedKey(),
      this.#key(host, 'queue'),
      host,
      token,
      status ?? '',
      Math.round(pauseMs),
      KEEP_MS,
      this.#channel,
    );
  }

  /** Gives back a place no request used; never throws. */
  async #giveBack(host: string, token: string): Promise<void> {
    await this.#release(host, token, null, -1).catch((err: unknown) => this.#failed(err));
  }

  async #leave(line: Line): Promise<void> {
    await LEAVE.run(
      this.#redis,
      2,
      this.#key(line.host, 'queue'),
      this.#key(line.host, 'seen'),
      line.user,
    ).catch((err: unknown) => this.#failed(err));
  }

  /** Extends every place this process holds, in one round trip. */
  async #renew(): Promise<void> {
    const held = [...this.#held];
    if (held.length === 0) return;
    await RENEW.run(
      this.#redis,
      held.length,
      ...held.map(([host]) => this.#key(host, 'places')),
      this.#limits.leaseMs,
      ...held.flatMap(([, tokens]) => [tokens.size, ...tokens]),
    );
  }

  #sleep(line: Line, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(Math.max(0, ms), MAX_TIMER_MS));
      function done() {
        clearTimeout(timer);
        line.wake = null;
        resolve();
      }
      line.wake = done;
    });
  }
}
