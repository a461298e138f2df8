import { FAILURE_CODES } from '@scrapejobs/contracts';
import type { JobModel, RunModel } from '@scrapejobs/db';
import type { RunFailure, RunSettings, RunStore } from '@scrapejobs/domain';
import { expandGlob } from '@scrapejobs/extraction';
import type { Logger } from '@scrapejobs/logging';
import type { PageExtractor } from '../extract/extractor.ts';
import type { JobRateLimiter } from '../rate-limiter.ts';
import { BatchWriter } from './batch-writer.ts';
import { type PageLoader, type PageLoaderDeps, pageLoaderFor } from './page-loader.ts';
import type { UrlLeases } from './url-leases.ts';

const MAX_URLS = 1000;
/**
 * A run whose next request start (its job's rate limit) or next place in its user's share of the
 * fleet is further away than this hands itself back to the queue until then, freeing its place
 * in this worker for other runs.
 */
const MAX_HOLD_MS = 1_000;
const PLACE_POLL_MS = 100;

/**
 * Why a run's signal aborted: the API cancelled it, this worker is shutting down, this worker
 * lost the run's lock (it was held up too long and another worker has taken the run over), or
 * another user's run waits for this run's place here.
 */
export type StopReason = 'cancel' | 'shutdown' | 'lost' | 'yield';

/** How an execution ended; `handBackAt` puts the run back in the queue until then (epoch ms). */
export type RunEnd = 'finished' | 'cancelled' | 'skipped' | 'lost' | { handBackAt: number };

/** What a run reports for metrics: each page's outcome, and each run's end. */
export interface RunObserver {
  page(outcome: string): void;
  run(status: 'success' | 'failed' | 'cancelled', seconds: number): void;
}

export interface ExecutorDeps extends PageLoaderDeps {
  store: RunStore;
  limiter: JobRateLimiter;
  extractor: PageExtractor;
  leases: UrlLeases;
  urlConcurrency: number;
  /** A run that takes longer, from its start, fails with TIMEOUT. */
  runTimeoutMs: number;
  log: Logger;
  observer?: RunObserver;
}

/** The code a URL fails with (docs/api.md §6), or null when the error is not about the URL (storage, a bug). */
function failureCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return (FAILURE_CODES as readonly unknown[]).includes(code) ? (code as string) : null;
}

/** A URL's work stopped because the run is handing itself back; whoever resumes the run redoes it. */
class HandingBack extends Error {}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<boolean>((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Executes one run: every URL of the job's source is fetched (or rendered), extracted and
 * stored, then the run ends with its event. `stop` aborts in-flight work at once; its reason
 * says whether the run was cancelled or must be handed back to the queue. An error that is not
 * a URL's (storage unreachable) rejects, so the queue retries the run, which resumes after the
 * URLs already stored.
 */
export async function executeRun(deps: ExecutorDeps, runId: string, stop: AbortSignal): Promise<RunEnd> {
  const loaded = await deps.store.load(runId);
  if (!loaded) return 'skipped';
  return new RunExecution(deps, loaded.run, loaded.job, loaded.settings, stop).execute();
}

class RunExecution {
  readonly #deps: ExecutorDeps;
  readonly #run: RunModel;
  readonly #job: JobModel;
  readonly #settings: RunSettings;
  readonly #stop: AbortSignal;
  readonly #log: Logger;
  readonly #deadline: number;
  readonly #timeout: AbortSignal;
  /** Aborted when a URL's work fails for a reason of the worker's own: the other URLs stop too. */
  readonly #halt = new AbortController();
  readonly #signal: AbortSignal;
  readonly #batch: BatchWriter;
  #urls: string[] = [];
  #inFlight = 0;
  #handBackAt: number | null = null;
  #haltedBy: unknown = null;

  constructor(deps: ExecutorDeps, run: RunModel, job: JobModel, settings: RunSettings, stop: AbortSignal) {
    this.#deps = deps;
    this.#run = run;
    this.#job = job;
    this.#settings = settings;
    this.#stop = stop;
    this.#log = deps.log.child({ run_id: run.id, job_id: job.id });
    this.#deadline = run.startedAt.getTime() + deps.runTimeoutMs;
    this.#timeout = AbortSignal.timeout(Math.max(0, this.#deadline - Date.now()));
    this.#signal = AbortSignal.any([stop, this.#timeout, this.#halt.signal]);
    this.#batch = new BatchWriter(deps.store, run.id, job.id);
  }

  async execute(): Promise<RunEnd> {
    const { store } = this.#deps;
    const runId = this.#run.id;
    const { source } = this.#settings;
    const expanded = expandGlob(source, MAX_URLS);
    this.#urls = expanded.ok ? expanded.urls : [source];
    await store.setTotal(runId, this.#urls.length);
    // A run taken over from another worker resumes after the URLs whose outcome is stored.
    const done = new Set(this.#run.doneUrls);
    const todo = this.#urls.map((_, index) => index).filter((index) => !done.has(index));
    if (done.size > 0) this.#log.info({ done: done.size, remaining: todo.length }, 'run resumed');

    await this.#work(todo);
    await this.#batch.flush();
    if (this.#haltedBy) throw this.#haltedBy;
    return this.#end();
  }

  /** URLs in flight when a worker process died are retried alone; a URL that ended two processes is not tried again. */
  async #work(todo: number[]): Promise<void> {
    if (this.#signal.aborted) return;
    const marks = await this.#deps.leases.crashMarks(this.#run.id);
    const suspects: number[] = [];
    const rest: number[] = [];
    for (const index of todo) {
      const crashes = marks.get(index) ?? 0;
      if (crashes >= 2) this.#failPoisoned(index);
      else (crashes === 1 ? suspects : rest).push(index);
    }
    if (suspects.length > 0)
      this.#log.warn({ urls: suspects.length }, 'retrying alone the URLs in flight when a worker died');
    let load: PageLoader;
    try {
      load = await pageLoaderFor(this.#deps, {
        jobId: this.#job.id,
        renderConfig: this.#settings.renderConfig,
        proxyConfig: this.#settings.proxyConfig,
      });
    } catch (err) {
      // A job that cannot start at all (no proxies any more, no browser) fails every URL.
      const code = failureCode(err);
      if (code === null) throw err;
      for (const index of [...suspects, ...rest])
        this.#batch.add({ index, failure: { code, message: (err as Error).message } });
      return;
    }
    for (const index of suspects) await this.#processUrl(load, index);
    let next = 0;
    const worker = async () => {
      while (next < rest.length && this.#canStart()) await this.#processUrl(load, rest[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(this.#deps.urlConcurrency, rest.length) }, worker));
  }

  #canStart(): boolean {
    return !this.#signal.aborted && this.#handBackAt === null;
  }

  #failPoisoned(index: number): void {
    const message = `${this.#urls[index]}: processing this URL ended a worker process twice; it is not tried again`;
    this.#log.warn({ url: this.#urls[index] }, 'URL failed: it ended a worker process twice');
    this.#batch.add({ index, failure: { code: 'EXTRACTION_ERROR', message } });
    this.#deps.observer?.page('EXTRACTION_ERROR');
  }

  /** Hands the run back to the queue once the URLs in flight are done, to resume at `at`. */
  #handBack(at: number): void {
    this.#handBackAt = Math.min(this.#handBackAt ?? at, at);
  }

  async #processUrl(load: PageLoader, index: number): Promise<void> {
    if (!(await this.#takePlace(index))) return;
    const { extractor, leases, observer } = this.#deps;
    const url = this.#urls[index]!;
    this.#inFlight++;
    try {
      const page = await load(url, this.#signal, () => this.#nextStart());
      const rows = await extractor.extract(
        this.#job.userId,
        { key: this.#run.id, queries: this.#settings.queries, page },
        this.#signal,
      );
      this.#batch.add({ index, failure: null }, { url, urlIndex: index, scrapedAt: new Date(), rows });
      observer?.page('success');
    } catch (err) {
      if (this.#signal.aborted || err instanceof HandingBack) return;
      const code = failureCode(err);
      if (code === null) {
        this.#haltedBy = err;
        this.#halt.abort(err);
        return;
      }
      this.#batch.add({ index, failure: { code, message: `${url}: ${(err as Error).message}` } });
      observer?.page(code);
      this.#log.info({ url, code, err: (err as Error).message }, 'url failed');
    } finally {
      this.#inFlight--;
      await leases.end(this.#job.userId, this.#run.id, index).catch((err: Error) => {
        this.#log.warn({ err: err.message }, 'could not end a URL lease; it expires by itself');
      });
    }
    // Outside the URL's try: a storage error ends the run's execution instead of failing the URL.
    if (this.#batch.due) await this.#batch.flush();
  }

  /**
   * A place in the user's share of the fleet for URL `index`; while the share is full, waits if
   * this run has other URLs in flight (they will free places), else hands the run back.
   */
  async #takePlace(index: number): Promise<boolean> {
    const { leases } = this.#deps;
    for (;;) {
      if (!this.#canStart()) return false;
      if (await leases.begin(this.#job.userId, this.#run.id, index)) return true;
      if (this.#inFlight === 0) {
        this.#handBack(Date.now() + MAX_HOLD_MS);
        return false;
      }
      if (!(await sleep(PLACE_POLL_MS, this.#signal))) return false;
    }
  }

  /** Waits for the job's next request start, or hands the run back when it is too far away. */
  async #nextStart(): Promise<void> {
    const at = await this.#deps.limiter.acquire(
      this.#job.id,
      this.#settings.rateLimit,
      this.#signal,
      MAX_HOLD_MS,
    );
    if (at === null) return;
    this.#handBack(at);
    throw new HandingBack();
  }

  async #end(): Promise<RunEnd> {
    const { store, observer, leases } = this.#deps;
    const runId = this.#run.id;
    const seconds = () => (Date.now() - this.#run.startedAt.getTime()) / 1000;
    if (this.#stop.aborted) {
      const reason = this.#stop.reason as StopReason;
      if (reason === 'shutdown' || reason === 'yield') return { handBackAt: Date.now() };
      if (reason === 'lost') return 'lost';
      await store.settleCancelled(runId);
      observer?.run('cancelled', seconds());
      this.#log.info('run cancelled');
      await leases.forget(runId);
      return 'cancelled';
    }
    if (this.#handBackAt !== null && !this.#timeout.aborted)
      return { handBackAt: Math.min(this.#handBackAt, this.#deadline) };
    const ended = await store.finish(runId, this.#timeout.aborted ? this.#timedOut() : null);
    if (ended) {
      observer?.run(ended.status, seconds());
      this.#log.info(ended, 'run finished');
    } else this.#log.info('run finished elsewhere or cancelled meanwhile');
    await leases.forget(runId);
    return ended ? 'finished' : 'cancelled';
  }

  #timedOut(): RunFailure {
    return { code: 'TIMEOUT', message: `The run exceeded its time limit of ${this.#deps.runTimeoutMs} ms.` };
  }
}
