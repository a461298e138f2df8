import type { ClaimedUrl, Frontier, RunFailure, RunState, RunStore } from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';
import { LEASE_LOST, MAX_HOLD_MS, RunWork, type WorkDeps } from './run-work.ts';
import type { UrlLeases } from './url-leases.ts';

/** A worker looks at the frontier at least this often (a run start announced over Redis wakes it at once). */
const POLL_MS = 500;
/** A run whose user has no free place in the fleet waits this long before any worker looks at it again. */
const NO_PLACE_DELAY_MS = 250;
/** A look at the frontier reads at least this many runs of each kind (due, expired, timed out). */
const MIN_LOOK = 100;
/** Runs seeded, ended or claimed for side by side in one look. */
const WAVE = 16;

/** `work` on every item, at most `size` at a time; the results in the items' order. */
async function inWaves<T, R>(items: readonly T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size)
    results.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  return results;
}

export interface DispatcherDeps extends WorkDeps {
  leases: UrlLeases;
  /** Tells API processes waiting for the run that it ended (its end is committed). */
  announceEnd?: (runId: string) => void;
}

export interface DispatcherOptions {
  /** SCRAPER_CONCURRENCY: runs this worker works on at once at full pace. */
  concurrency: number;
  /** RUN_URL_CONCURRENCY: URLs of one run in flight here at once; places here = both multiplied. */
  urlConcurrency: number;
  /** RUN_LOCK_MS: a claimed URL whose lease is not renewed this long is taken over elsewhere. */
  leaseMs: number;
  /** RUN_RETRY_DELAY_MS: no worker goes on with a run this long after it failed for a worker's own reason, doubling. */
  retryDelayMs: number;
  /** RUN_MAX_ATTEMPTS: such failures in a row after which the run ends failed. */
  maxAttempts: number;
}

/**
 * A scraper worker's share of the fleet's work: it looks at the frontier (every running run's
 * URLs, in PostgreSQL), seeds runs that have no URLs yet, claims URLs in batches into its free
 * places, keeps their leases, and ends the runs whose URLs are all done. Free places go first to
 * the user holding the fewest here, each user bounded across the fleet by UrlLeases, each job by
 * its rate limit.
 */
export class Dispatcher {
  readonly #deps: DispatcherDeps;
  readonly #options: DispatcherOptions;
  readonly #log: Logger;
  readonly #slots: number;
  readonly #works = new Map<string, RunWork>();
  /** Every URL in flight here, to wait for on close. */
  readonly #processing = new Set<Promise<void>>();
  #inFlight = 0;
  /** Places being claimed now. */
  #reserved = 0;
  #stopping = false;
  #wake: (() => void) | null = null;
  #woken = false;
  #loop: Promise<void> | null = null;

  constructor(deps: DispatcherDeps, options: DispatcherOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#log = deps.log;
    this.#slots = options.concurrency * options.urlConcurrency;
  }

  get #frontier(): Frontier {
    return this.#deps.frontier;
  }

  get #store(): RunStore {
    return this.#deps.store;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Looks at the frontier now rather than at the next poll (a run started, places freed). */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** Stops the work on a run here at once (the API cancelled it). */
  cancel(runId: string): void {
    this.#works.get(runId)?.stop('cancel');
  }

  /** Extends the leases of every URL held here; a URL whose lease was lost stops. */
  async renew(): Promise<void> {
    const held = [...this.#works.values()].flatMap((work) => work.held());
    const lost = (await this.#frontier.renew(held, this.#options.leaseMs)).filter(
      ({ runId, seq, claims }) => this.#works.get(runId)?.lose(seq, claims) ?? false,
    );
    if (lost.length > 0) this.#log.warn({ urls: lost.length }, LEASE_LOST);
  }

  /** Claims nothing more, gives the URLs in flight back to the frontier and stores what was done. */
  async close(): Promise<void> {
    this.#stopping = true;
    this.wake();
    this.#log.info({ urls: this.#inFlight }, 'giving URLs in flight back to the frontier');
    for (const work of this.#works.values()) work.stop('shutdown');
    await this.#loop;
    while (this.#processing.size > 0) await Promise.allSettled([...this.#processing]);
    await this.#giveBack();
  }

  /** The places let go since the last look go back to the fleet. */
  async #giveBack(): Promise<void> {
    await this.#deps.leases.giveBack().catch((err: Error) => {
      this.#log.warn({ err: err.message }, 'could not give places back; they expire by themselves');
    });
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      this.#woken = false;
      try {
        await this.#fill();
      } catch (err) {
        this.#log.warn({ err: (err as Error).message }, 'could not look for work');
      }
      await this.#giveBack();
      if (this.#stopping) break;
      // Woken while it looked: look again at once.
      if (this.#woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
  }

  async #fill(): Promise<void> {
    const look = Math.max(MIN_LOOK, 2 * this.#slots);
    const states = await this.#frontier.states(look, MAX_HOLD_MS, this.#deps.runTimeoutMs);
    const now = Date.now();
    // Runs are seeded and ended side by side: each is a transaction of its own run.
    const claimable = await inWaves(states, WAVE, async (state) => {
      if (this.#stopping) return false;
      try {
        return await this.#tend(state, now);
      } catch (err) {
        this.#log.warn({ run_id: state.runId, err: (err as Error).message }, 'could not look after a run');
        return false;
      }
    });
    const candidates = states.filter((_, i) => claimable[i]);
    await this.#share(candidates);
    // A run with nothing in flight here and nothing to claim now stores what waits and leaves. One
    // that only found no free place here stays for the next look (its outcomes are stored on their
    // batch's timer): leaving would end in a look at whether the run is done and an open again.
    const claiming = new Set(candidates.map((state) => state.runId));
    for (const work of [...this.#works.values()])
      if (work.inFlight === 0 && (work.stopped || !claiming.has(work.runId))) await this.#idle(work);
  }

  /** Seeds, times out or ends a run as its state asks; true when it has URLs to claim now. */
  async #tend(state: RunState, now: number): Promise<boolean> {
    const here = this.#works.get(state.runId);
    if (now >= state.startedAt.getTime() + this.#deps.runTimeoutMs) {
      // A run held here times out by its own timer.
      if (!here) await this.#end(state.runId, this.#timedOut());
      return false;
    }
    if (!state.seeded) {
      await this.#frontier.seed(state.runId);
      return true;
    }
    if (!state.claimable && !state.expired) {
      if (!state.active && !here) await this.#end(state.runId, null);
      return false;
    }
    return !state.notBefore || state.notBefore.getTime() <= now + MAX_HOLD_MS;
  }

  /**
   * Gives the free places here to the candidate runs, the user holding the fewest first, claiming
   * for a wave of runs at once (each claim is a transaction of its own run). A run in a wave counts
   * one place more for its user, so that the next pick of the wave goes to another user.
   */
  async #share(candidates: RunState[]): Promise<void> {
    const heldBy = new Map<string, number>();
    const hold = (userId: string, n: number) => heldBy.set(userId, (heldBy.get(userId) ?? 0) + n);
    for (const work of this.#works.values()) hold(work.userId, work.inFlight);
    const inFlight = (runId: string) => this.#works.get(runId)?.inFlight ?? 0;
    const rest = [...candidates];
    while (rest.length > 0 && !this.#stopping && this.#free() > 0) {
      const wave: RunState[] = [];
      while (rest.length > 0 && wave.length < Math.min(WAVE, this.#free())) {
        let best = 0;
        for (let i = 1; i < rest.length; i++) {
          const a = rest[i]!;
          const b = rest[best]!;
          const byUser = (heldBy.get(a.userId) ?? 0) - (heldBy.get(b.userId) ?? 0);
          if (byUser < 0 || (byUser === 0 && inFlight(a.runId) < inFlight(b.runId))) best = i;
        }
        const [state] = rest.splice(best, 1);
        wave.push(state!);
        hold(state!.userId, 1);
      }
      const claimed = await Promise.all(wave.map((state) => this.#claim(state)));
      wave.forEach((state, i) => {
        hold(state.userId, claimed[i]! - 1);
      });
    }
  }

  /** Places here neither in flight nor being claimed. */
  #free(): number {
    return this.#slots - this.#inFlight - this.#reserved;
  }

  /** Claims URLs of one run into free places here; returns how many. */
  async #claim(state: RunState): Promise<number> {
    // A slow job whose next request start is further away than a claim is held claims nothing:
    // its run waits in the frontier until then.
    if (!state.expired && state.rateLimit < 60_000 / MAX_HOLD_MS) {
      const waitMs = await this.#deps.limiter.untilNextStart(state.jobId);
      if (waitMs > MAX_HOLD_MS) {
        await this.#frontier.postpone(state.runId, waitMs);
        return 0;
      }
    }
    let work = this.#works.get(state.runId);
    if (!work) {
      const opened = await RunWork.open(this.#deps, state);
      if (!opened || this.#works.has(state.runId)) return 0;
      work = opened;
      this.#works.set(state.runId, work);
    }
    if (work.stopped) return 0;
    // A URL whose lease ran out is taken over one at a time, beside whatever runs here (§16.2).
    const takeOver = state.expired;
    const wanted = takeOver
      ? Math.min(1, this.#free(), this.#options.urlConcurrency - work.inFlight)
      : Math.min(
          this.#free(),
          this.#options.urlConcurrency - work.inFlight,
          // A slow job claims what it can start within a claim's hold, not URLs that would wait.
          Math.floor((work.settings.rateLimit * MAX_HOLD_MS) / 60_000) + 1,
          // No more of its user's places than the run has URLs to give (a one-page scrape takes one).
          state.seeded ? state.pending : Number.POSITIVE_INFINITY,
        );
    // No free place here: the run stays for the next look (#fill).
    if (wanted <= 0) return 0;
    // Reserved until launched, so that the claims of a wave never take more than the free places.
    this.#reserved += wanted;
    let places: string[] = [];
    let urls: ClaimedUrl[] = [];
    try {
      places = await this.#deps.leases.take(work.userId, wanted);
      // Its user's places are all taken in the fleet: the runs of other users are looked at first.
      if (places.length === 0) await this.#frontier.postpone(state.runId, NO_PLACE_DELAY_MS);
      if (places.length > 0) {
        if (takeOver) {
          const url = await this.#frontier.takeOver(state.runId, this.#options.leaseMs);
          urls = url ? [url] : [];
        } else urls = await this.#frontier.claim(state.runId, places.length, this.#options.leaseMs);
      }
    } finally {
      this.#reserved -= wanted;
      this.#deps.leases.letGo(work.userId, places.slice(urls.length));
    }
    // The frontier gave fewer than asked, or all it had: this work's last URL is stored at once.
    if (urls.length > 0) work.drained = urls.length < places.length || urls.length >= state.pending;
    if (takeOver && urls.length > 0)
      this.#log.warn({ run_id: state.runId, url: urls[0]!.url }, 'taking over a URL whose worker stopped');
    else if (urls.length > 0) this.#log.debug({ run_id: state.runId, urls: urls.length }, 'claimed URLs');
    urls.forEach((url, i) => {
      this.#launch(work, url, places[i]!);
    });
    if (urls.length === 0) await this.#idle(work);
    return urls.length;
  }

  #launch(work: RunWork, url: ClaimedUrl, place: string): void {
    this.#inFlight++;
    const done = work
      .process(url)
      .catch((err: Error) => {
        this.#log.error(
          { run_id: work.runId, url: url.url, err: err.message },
          'a URL ended unexpectedly here',
        );
      })
      .then(async () => {
        this.#inFlight--;
        this.#deps.leases.letGo(work.userId, [place]);
        if (work.inFlight === 0 && (this.#stopping || work.stopped)) return void (await this.#idle(work));
        // Claims go in batches (a claim is a transaction): the frontier is looked at again once half
        // a run's places are free here, not at every URL that ends. The look also lets the runs
        // with nothing in flight here go when it has no URLs for them.
        const free = this.#slots - this.#inFlight;
        if (!this.#stopping && free >= Math.ceil(this.#options.urlConcurrency / 2)) this.wake();
      })
      .catch((err: Error) => {
        this.#log.error({ run_id: work.runId, err: err.message }, 'could not settle a URL here');
      })
      .finally(() => this.#processing.delete(done));
    this.#processing.add(done);
  }

  /**
   * A run with nothing in flight here: its work stores what waits and leaves, ending the run when
   * that was its last URL. Outcomes that cannot be stored stay here, their leases renewed, and are
   * stored at a later look: their URLs are neither processed again nor taken for a crash.
   */
  async #idle(work: RunWork): Promise<number> {
    if (work.inFlight > 0 || this.#works.get(work.runId) !== work) return 0;
    const end = work.end;
    const unstored = work.held().length;
    try {
      await work.flush();
      // What it stored may be the URLs the run goes on with (a crawl's links): look again now.
      if (unstored > 0 && end === 'idle' && !this.#stopping) this.wake();
    } catch (err) {
      if (end !== 'shutdown') {
        this.#log.warn({ run_id: work.runId, err: (err as Error).message }, 'could not store outcomes yet');
        if (end === 'idle' || end === 'halt') await this.#failedAttempt(work, err);
        return 0;
      }
      this.#log.warn(
        { run_id: work.runId, err: (err as Error).message, urls: unstored },
        'could not store the last outcomes; their URLs go to other workers when their leases run out',
      );
    }
    if (this.#works.get(work.runId) !== work) return 0;
    this.#works.delete(work.runId);
    work.close();
    try {
      if (end === 'cancel') {
        this.#deps.observer?.run('cancelled', work.seconds);
        this.#log.info({ run_id: work.runId }, 'run cancelled');
      } else if (end === 'timeout') await this.#end(work.runId, this.#timedOut());
      else if (end === 'halt') await this.#failedAttempt(work, work.haltedBy);
      else if (end === 'idle') await this.#end(work.runId, null);
    } catch (err) {
      this.#log.warn({ run_id: work.runId, err: (err as Error).message }, 'could not settle a run');
    }
    return 0;
  }

  /** A run failed here for the worker's own reason: every worker waits before going on with it; at RUN_MAX_ATTEMPTS it ends. */
  async #failedAttempt(work: RunWork, err: unknown): Promise<number> {
    try {
      const attempts = await this.#frontier.failedAttempt(work.runId, this.#options.retryDelayMs);
      this.#log.error(
        { run_id: work.runId, err: (err as Error)?.message, attempt: attempts },
        'run attempt failed',
      );
      if (attempts !== null && attempts >= this.#options.maxAttempts)
        await this.#end(work.runId, RunWork.gaveUp(attempts, err));
    } catch (countErr) {
      this.#log.error(
        { run_id: work.runId, err: (err as Error)?.message, count_err: (countErr as Error).message },
        'run attempt failed, and could not be counted',
      );
    }
    return 0;
  }

  /** Ends a run whose URLs are all done (null when they are not, or it ended elsewhere). */
  async #end(runId: string, forced: RunFailure | null): Promise<void> {
    const ended = await this.#store.finish(runId, forced);
    if (!ended) return;
    this.#deps.announceEnd?.(runId);
    this.#log.info({ run_id: runId, ...ended }, 'run finished');
    this.#deps.observer?.run(ended.status, ended.durationMs / 1000);
  }

  #timedOut(): RunFailure {
    return { code: 'TIMEOUT', message: `The run exceeded its time limit of ${this.#deps.runTimeoutMs} ms.` };
  }
}
