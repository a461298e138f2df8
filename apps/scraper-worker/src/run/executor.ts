import type { LookupFunction } from 'node:net';
import type { ProxyEntry } from '@scrapejobs/config';
import type { ProxyConfig, RenderConfig } from '@scrapejobs/contracts';
import type { JobModel } from '@scrapejobs/db';
import {
  compileJob,
  decodeHtml,
  ExtractionError,
  expandGlob,
  extract,
  type QuerySpec,
} from '@scrapejobs/extraction';
import type { Logger } from '@scrapejobs/logging';
import { createProxyPicker, FetchError, fetchPage, type ProxyPicker } from '../fetch/index.ts';
import type { JobRateLimiter } from '../rate-limiter.ts';
import type { Renderer } from '../render/index.ts';
import type { PageRows, RunStore, UrlOutcome } from './store.ts';

const MAX_URLS = 1000;
const BATCH_ROWS = 500;
// Results and progress reach the database at least this often, so a pause keeps what was
// scraped and GET /jobs/{id}/runs shows a long run advancing.
const FLUSH_EVERY_MS = 200;

/**
 * Why a run's signal aborted: the API cancelled it, this worker is shutting down, or this worker
 * lost the run's lock (it was held up too long) and another worker has taken the run over.
 */
export type StopReason = 'cancel' | 'shutdown' | 'lost';

export type RunEnd = 'finished' | 'cancelled' | 'skipped' | 'handed-back' | 'lost';

/** What a run reports for metrics: each page's outcome, and each run's end. */
export interface RunObserver {
  page(outcome: string): void;
  run(status: 'success' | 'failed' | 'cancelled', seconds: number): void;
}

export interface ExecutorDeps {
  store: RunStore;
  limiter: JobRateLimiter;
  /** Started on first use, only by processes that get a rendering job. */
  renderer: () => Promise<Renderer>;
  proxies: readonly ProxyEntry[];
  allowPrivate: boolean;
  urlConcurrency: number;
  runTimeoutMs: number;
  log: Logger;
  observer?: RunObserver;
  /** DNS override, for tests that map names to loopback. */
  lookup?: LookupFunction;
}

class RunTimeout extends Error {}

function errorCode(err: unknown): string {
  if (err instanceof RunTimeout) return 'TIMEOUT';
  if (err instanceof ExtractionError) return 'EXTRACTION_ERROR';
  const code = (err as { code?: unknown }).code;
  if (
    err instanceof FetchError ||
    (typeof code === 'string' && /^[A-Z_]+_ERROR$|^TIMEOUT$|^BLOCKED_TARGET$/.test(code))
  )
    return code as string;
  return 'NETWORK_ERROR';
}

function proxyPickerFor(job: JobModel, proxies: readonly ProxyEntry[]): ProxyPicker | null {
  const config = job.proxyConfig as ProxyConfig | null;
  if (!config?.enabled) return null;
  return createProxyPicker([...proxies], config.rotation_strategy, config.geo_targeting, job.id);
}

/**
 * Executes one run: every URL of the job's source is fetched (or rendered), extracted and
 * stored, then the run ends with its event. `stop` aborts in-flight work at once; its reason
 * says whether the run was cancelled or must be handed back to the queue.
 */
export async function executeRun(deps: ExecutorDeps, runId: string, stop: AbortSignal): Promise<RunEnd> {
  const loaded = await deps.store.load(runId);
  if (!loaded) return 'skipped';
  const { job, run } = loaded;
  const log = deps.log.child({ run_id: runId, job_id: job.id });

  const expanded = expandGlob(job.source, MAX_URLS);
  const urls = expanded.ok ? expanded.urls : [job.source];
  await deps.store.setTotal(runId, urls.length);
  // A run taken over from another worker resumes after the URLs whose outcome is stored.
  const done = new Set(run.doneUrls);
  const todo = urls.map((_, index) => index).filter((index) => !done.has(index));
  if (done.size > 0) log.info({ done: done.size, remaining: todo.length }, 'run resumed');

  const timeout = AbortSignal.timeout(deps.runTimeoutMs);
  const signal = AbortSignal.any([stop, timeout]);
  // One flush at a time per run; a failed write keeps its rows and is retried, and a storage
  // error is never counted against a URL.
  let pending: PageRows[] = [];
  let pendingRows = 0;
  let outcomes: UrlOutcome[] = [];
  let lastFlush = Date.now();
  let flushing: Promise<void> = Promise.resolve();
  const writeBatch = async () => {
    const batch = pending;
    const batchRows = pendingRows;
    const batchOutcomes = outcomes;
    pending = [];
    pendingRows = 0;
    outcomes = [];
    lastFlush = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        await deps.store.saveBatch(runId, job.id, batch, batchOutcomes);
        return;
      } catch (err) {
        if (attempt >= 5) {
          pending = batch.concat(pending);
          pendingRows += batchRows;
          outcomes = batchOutcomes.concat(outcomes);
          throw err;
        }
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
      }
    }
  };
  const flush = () => {
    flushing = flushing.then(writeBatch);
    return flushing;
  };

  let setupDone = false;
  try {
    const compiled = compileJob(job.queries as unknown as QuerySpec[]);
    const render = (job.renderConfig as RenderConfig | null)?.enabled
      ? (job.renderConfig as RenderConfig)
      : null;
    const picker = proxyPickerFor(job, deps.proxies);
    const renderer = render ? await deps.renderer() : null;
    const acquire = () => deps.limiter.acquire(job.id, job.rateLimit, signal);

    // A proxy that fails a render is reported and the render tried once more on another.
    const renderHtml = async (renderer: Renderer, render: RenderConfig, url: string): Promise<string> => {
      for (let attempt = 0; ; attempt++) {
        await acquire();
        const proxyUrl = picker?.pick(attempt)?.url ?? null;
        try {
          const page = await renderer.render({
            url,
            waitStrategy: render.wait_strategy,
            waitTimeoutMs: render.wait_timeout_ms,
            signal,
            proxyUrl,
          });
          if (page.status !== null && page.status >= 400)
            throw new FetchError('HTTP_ERROR', `HTTP ${page.status}`, {
              url,
              status: page.status,
              retryable: false,
            });
          return page.html;
        } catch (err) {
          if (!((err as { code?: unknown }).code === 'PROXY_ERROR' && proxyUrl && attempt === 0)) throw err;
          picker?.reportFailure(proxyUrl);
        }
      }
    };

    const loadHtml = async (url: string): Promise<string> => {
      if (renderer && render) return renderHtml(renderer, render, url);
      const page = await fetchPage(url, {
        allowPrivate: deps.allowPrivate,
        signal,
        beforeAttempt: acquire,
        ...(picker && { proxy: picker }),
        ...(deps.lookup && { lookup: deps.lookup }),
      });
      return decodeHtml(page.body, page.contentType);
    };

    let next = 0;
    const worker = async () => {
      while (next < todo.length && !signal.aborted) {
        const index = todo[next++]!;
        const url = urls[index]!;
        try {
          const html = await loadHtml(url);
          const scrapedAt = new Date();
          // Serialised at once: one string per row is all that waits for the next flush.
          const rows = extract(compiled, html).map((record) => JSON.stringify(record));
          if (rows.length > 0) {
            pending.push({ url, urlIndex: index, scrapedAt, rows });
            pendingRows += rows.length;
          }
          outcomes.push({ index, failure: null });
          deps.observer?.page('success');
        } catch (err) {
          if (signal.aborted) break;
          const code = errorCode(err);
          outcomes.push({ index, failure: { code, message: `${url}: ${(err as Error).message}` } });
          deps.observer?.page(code);
          log.info({ url, code, err: (err as Error).message }, 'url failed');
        }
        // Outside the URL's try: a storage error ends the run's execution (the sweep re-queues
        // it) instead of being counted as a failed URL.
        if (pendingRows >= BATCH_ROWS || Date.now() - lastFlush >= FLUSH_EVERY_MS) await flush();
      }
    };
    setupDone = true;
    await Promise.all(Array.from({ length: Math.min(deps.urlConcurrency, todo.length) }, worker));
  } catch (err) {
    // Past setup, only a storage failure escapes the loop: let the run's execution fail.
    if (setupDone) throw err;
    // A job that cannot start at all (bad stored query, no proxies any more) fails every URL.
    if (!signal.aborted)
      for (const index of todo)
        outcomes.push({ index, failure: { code: errorCode(err), message: (err as Error).message } });
  }
  await flush();

  if (stop.aborted) {
    if (stop.reason === 'shutdown') return 'handed-back';
    if (stop.reason === 'lost') return 'lost';
    await deps.store.settleCancelled(runId);
    deps.observer?.run('cancelled', (Date.now() - run.startedAt.getTime()) / 1000);
    log.info('run cancelled');
    return 'cancelled';
  }

  const ended = await deps.store.finish(runId, timeout.aborted ? deps.runTimeoutMs : null);
  if (!ended) {
    log.info('run finished elsewhere or cancelled meanwhile');
    return 'cancelled';
  }
  deps.observer?.run(ended.status, (Date.now() - run.startedAt.getTime()) / 1000);
  log.info(ended, 'run finished');
  return 'finished';
}
