import { setTimeout as sleep } from 'node:timers/promises';
import { WaitTimeoutError } from './errors.ts';
import { jobPath } from './jobs.ts';
import { paginate } from './paging.ts';
import type { Transport } from './transport.ts';
import type {
  ChangeItem,
  ChangeList,
  Document,
  DocumentList,
  ListChangesQuery,
  ListDocumentsQuery,
  ListRunsQuery,
  ListRunUrlsQuery,
  Run,
  RunList,
  RunUrl,
  RunUrlList,
} from './types.ts';

const runPath = (jobId: string, runId: string) => `${jobPath(jobId)}/runs/${encodeURIComponent(runId)}`;
const SCREENSHOT_PATH = /\/jobs\/([^/]+)\/runs\/([^/]+)\/screenshots\/(\d+)$/;

export interface WaitOptions {
  /** Time between two polls of the run, in ms (default 1000). */
  intervalMs?: number;
  /** Give up after this long, in ms, with a `WaitTimeoutError` (default: never). */
  timeoutMs?: number;
  /** Called with the run after every poll, the last (ended) one included. */
  onPoll?: (run: Run) => void | Promise<void>;
  signal?: AbortSignal;
}

/** Runs of a job, their URLs, their changes, screenshots and documents (docs/api.md §3.8, §12–14, §17). */
export class Runs {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** GET /jobs/{id}/runs: one page of a job's runs, newest first. */
  list(jobId: string, query: ListRunsQuery = {}): Promise<RunList> {
    return this.#t.json('GET', `${jobPath(jobId)}/runs`, { query });
  }

  /** Every run of a job, newest first, page after page. */
  iterate(jobId: string, query: ListRunsQuery = {}): AsyncGenerator<Run, void, undefined> {
    return paginate(
      (cursor) => this.list(jobId, { ...query, cursor }),
      (page) => page.runs,
      query.cursor,
    );
  }

  /** GET /jobs/{id}/runs/{run_id}. */
  get(jobId: string, runId: string): Promise<Run> {
    return this.#t.json('GET', runPath(jobId, runId));
  }

  /** Polls a run until it is no longer `running`, and returns it as it ended. */
  async wait(jobId: string, runId: string, options: WaitOptions = {}): Promise<Run> {
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    for (;;) {
      const run = await this.get(jobId, runId);
      await options.onPoll?.(run);
      if (run.status !== 'running') return run;
      if (Date.now() >= deadline) throw new WaitTimeoutError(run, options.timeoutMs!);
      await sleep(options.intervalMs ?? 1000, undefined, { signal: options.signal });
    }
  }

  /** GET /jobs/{id}/runs/{run_id}/urls: one page of a run's URLs, in the order accepted. */
  urls(jobId: string, runId: string, query: ListRunUrlsQuery = {}): Promise<RunUrlList> {
    return this.#t.json('GET', `${runPath(jobId, runId)}/urls`, { query });
  }

  /** Every URL of a run (of `status`, if given), page after page. */
  iterateUrls(
    jobId: string,
    runId: string,
    query: ListRunUrlsQuery = {},
  ): AsyncGenerator<RunUrl, void, undefined> {
    return paginate(
      (cursor) => this.urls(jobId, runId, { ...query, cursor }),
      (page) => page.urls,
      query.cursor,
    );
  }

  /** GET /jobs/{id}/runs/{run_id}/changes: one page of what changed against the base run, with the counts. */
  changes(jobId: string, runId: string, query: ListChangesQuery = {}): Promise<ChangeList> {
    return this.#t.json('GET', `${runPath(jobId, runId)}/changes`, { query });
  }

  /**
   * Every change of a run (of `type`, if given), page after page: records' changes, and with
   * `change_tracking.content` pages' changes too (`'kind' in item` tells a page's from a record's).
   */
  iterateChanges(
    jobId: string,
    runId: string,
    query: ListChangesQuery = {},
  ): AsyncGenerator<ChangeItem, void, undefined> {
    return paginate(
      (cursor) => this.changes(jobId, runId, { ...query, cursor }),
      (page) => page.changes,
      query.cursor,
    );
  }

  /** GET /jobs/{id}/runs/{run_id}/documents: one page of a run's documents, in its URL order. */
  documents(jobId: string, runId: string, query: ListDocumentsQuery = {}): Promise<DocumentList> {
    return this.#t.json('GET', `${runPath(jobId, runId)}/documents`, { query });
  }

  /** Every document of a run (of the page `url`, if given), page after page. */
  iterateDocuments(
    jobId: string,
    runId: string,
    query: ListDocumentsQuery = {},
  ): AsyncGenerator<Document, void, undefined> {
    return paginate(
      (cursor) => this.documents(jobId, runId, { ...query, cursor }),
      (page) => page.documents,
      query.cursor,
    );
  }

  /** GET /jobs/{id}/runs/{run_id}/screenshots/{n}: the PNG of a rendered URL. */
  async screenshot(jobId: string, runId: string, index: number): Promise<Buffer> {
    const res = await this.#t.send('GET', `${runPath(jobId, runId)}/screenshots/${index}`);
    return Buffer.from(await res.arrayBuffer());
  }

  /**
   * The PNG a URL item's `screenshot_url` names. Only its path is used: the request goes to this
   * client's base URL, so the key is never sent anywhere else.
   */
  screenshotAt(screenshotUrl: string): Promise<Buffer> {
    const match = SCREENSHOT_PATH.exec(new URL(screenshotUrl, this.#t.baseUrl).pathname);
    if (!match) throw new TypeError(`not a screenshot URL: ${screenshotUrl}`);
    const [, jobId, runId, index] = match;
    return this.screenshot(decodeURIComponent(jobId!), decodeURIComponent(runId!), Number(index));
  }
}
