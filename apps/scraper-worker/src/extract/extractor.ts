import type { ContentOptions, PackedDocument, PageInfo, RenderSignal } from '@scrapejobs/content';
import { ExtractionError, type QuerySpec, type QueryType } from '@scrapejobs/extraction';
import { ProcessStopped, runInProcess, SandboxError, SandboxPool, TaskError } from '@scrapejobs/sandbox';
import type { AmendTask, CheckTask, ModelInput, ModelInputSpec } from './model-tasks.ts';
import type { TrackedDocument, TrackTask } from './tracking-tasks.ts';

/** A page as it arrived: fetched bytes (decoded in the thread) or rendered HTML. */
export type PageContent = { body: Uint8Array; contentType: string | undefined } | { html: string };

/** Which found URLs a crawl keeps (docs/api.md §11); the thread normalises and filters them. */
export interface UrlFilterSpec {
  seedOrigins: string[];
  sameOrigin: boolean;
  include: string[];
  exclude: string[];
}

/** A crawl's link queries on a page that arrived from `baseUrl` (after redirects). */
export interface LinkSpec {
  follow: readonly { type: QueryType; query: string }[];
  baseUrl: string;
  filter: UrlFilterSpec;
}

/** The document a page gives (docs/api.md §17): which formats and content, and where the page came from. */
export type DocumentSpec = ContentOptions &
  PageInfo & {
    /** The render's execute_javascript values, added to the document as they are. */
    javascriptReturns?: { type: string; value: unknown }[];
  };

export interface ExtractTask {
  /** Names the queries for the thread's cache of compiled jobs (a run id). */
  key: string;
  queries: readonly QuerySpec[];
  page: PageContent;
  /** The page's links to follow, when the run follows this page's links. */
  links?: LinkSpec;
  /** The page's document, when the job keeps pages as content. */
  document?: DocumentSpec;
  /** The page's text for the language model (docs/api.md §24), when the job asks it something. */
  model?: ModelInputSpec & { page: PageInfo };
  /**
   * A page fetched plainly for `render_config.mode: auto` (docs/api.md §23): whether it needs
   * rendering, by the page's own signals (`rules`), or also because the job's queries found
   * nothing on it (`full`).
   */
  renderCheck?: 'rules' | 'full';
}

/** Why a plainly fetched page needs rendering: a rule of its HTML, or the job's queries found nothing. */
export type RenderReason = RenderSignal | 'queries_empty';

/** What a page gave: its records, as one JSON array text, and the URLs its links lead to, kept by the crawl's filter. */
export interface PageExtraction {
  /** How many records `json` holds. */
  records: number;
  json: string;
  links: string[];
  /** The page's document, packed for storage, when the task asked for one. */
  document?: PackedDocument;
  /** The page's text for the language model, when the task asked for it. */
  modelInput?: ModelInput;
  /** With `renderCheck`: why the page needs rendering, null when it does not. */
  renderNeed?: RenderReason | null;
}

export interface SitemapTask {
  key: string;
  body: Uint8Array;
  filter: UrlFilterSpec;
}

/** A sitemap's URLs: pages (normalised and kept by the crawl's filter), or an index's sitemaps (normalised). */
export interface SitemapUrls {
  kind: 'urlset' | 'index';
  urls: string[];
}

/** Two versions of a page's markdown to diff (change tracking of pages). */
export interface DiffTask {
  before: string;
  after: string;
}

export type ThreadTask =
  | ({ type: 'page' } & ExtractTask)
  | ({ type: 'sitemap' } & SitemapTask)
  | ({ type: 'diff' } & DiffTask)
  | ({ type: 'check' } & CheckTask)
  | ({ type: 'amend' } & AmendTask)
  | ({ type: 'track' } & TrackTask);

/** What a thread answers to a task. */
export type ThreadValue = PageExtraction | SitemapUrls | PackedDocument | TrackedDocument | string | null;

/**
 * Run the task in a child process of its own (a URL taken over after its worker's lease ran out,
 * docs/api.md §16.2): `died` is told when that process died of it, before the task fails.
 */
export interface Isolated {
  died(why: string): Promise<void>;
}

export interface ThreadSettings {
  timeLimitMs: number;
}

export interface ExtractorOptions {
  threads: number;
  timeLimitMs: number;
  memoryMb: number;
  /** Told when a thread, or the process of a taken-over URL, had to be ended (past a limit, or crashed). */
  onThreadEnd?: (limit: string) => void;
}

/** What a process of its own needs besides the task's heap: Node and the extraction code loaded (28 MB). */
const PROCESS_BASE_MB = 32;
/**
 * Processes of isolated tasks at once in one worker: each costs a Node start (about half a CPU
 * second), and a worker may take over many URLs at once after another died. Others wait their
 * turn, their clocks not running.
 */
const MAX_PROCESSES = 2;

/**
 * Extracts pages on a pool of threads, so that no query on any page can hold up this process's
 * event loop (lock renewal, cancellation, /health, other runs) or grow its heap; an isolated task
 * runs in a child process instead, so that not even a native fault of it ends this process. Every
 * failure of a page's extraction, limits included, is an ExtractionError naming what happened.
 */
export class PageExtractor {
  readonly #pool: SandboxPool<ThreadTask, ThreadValue>;
  readonly #options: ExtractorOptions;
  #processes = 0;
  readonly #waitingProcesses: (() => void)[] = [];

  constructor(options: ExtractorOptions) {
    this.#options = options;
    this.#pool = new SandboxPool({
      entry: new URL('./thread.ts', import.meta.url),
      threads: options.threads,
      timeLimitMs: options.timeLimitMs,
      memoryMb: options.memoryMb,
      workerData: { timeLimitMs: options.timeLimitMs } satisfies ThreadSettings,
      ...(options.onThreadEnd && { onThreadEnd: options.onThreadEnd }),
    });
  }

  /** The page's records and links; rejects with ExtractionError, or the signal's reason. `owner` is the user whose page it is. */
  extract(
    owner: string,
    task: ExtractTask,
    signal?: AbortSignal,
    isolated?: Isolated,
  ): Promise<PageExtraction> {
    const { page } = task;
    return this.#run(
      owner,
      { type: 'page', ...task },
      'body' in page ? page.body : null,
      signal,
      isolated,
    ) as Promise<PageExtraction>;
  }

  /** A sitemap's URLs; rejects with ExtractionError (a sitemap that is not one too), or the signal's reason. */
  readSitemap(
    owner: string,
    task: SitemapTask,
    signal?: AbortSignal,
    isolated?: Isolated,
  ): Promise<SitemapUrls> {
    return this.#run(
      owner,
      { type: 'sitemap', ...task },
      task.body,
      signal,
      isolated,
    ) as Promise<SitemapUrls>;
  }

  /** A unified diff of two markdown texts (≤ 64 KiB), null when equal; `owner` is whose run it is. */
  diff(owner: string, task: DiffTask, signal?: AbortSignal): Promise<string | null> {
    return this.#run(owner, { type: 'diff', ...task }, null, signal) as Promise<string | null>;
  }

  /** Null when a model's answer fits the job's schema, else what is wrong with it. */
  checkAnswer(owner: string, task: CheckTask, signal?: AbortSignal): Promise<string | null> {
    return this.#run(owner, { type: 'check', ...task }, null, signal) as Promise<string | null>;
  }

  /** A packed document with the model's output added (the document's bytes move to the thread). */
  amendDocument(owner: string, task: AmendTask, signal?: AbortSignal): Promise<PackedDocument> {
    return this.#run(
      owner,
      { type: 'amend', ...task },
      task.document.data,
      signal,
    ) as Promise<PackedDocument>;
  }

  /** The page's document compared with its previous scrape's (the document's bytes move to the thread). */
  track(owner: string, task: TrackTask, signal?: AbortSignal): Promise<TrackedDocument> {
    return this.#run(
      owner,
      { type: 'track', ...task },
      task.document.data,
      signal,
    ) as Promise<TrackedDocument>;
  }

  #run(owner: string, task: ThreadTask, body: Uint8Array | null, signal?: AbortSignal, isolated?: Isolated) {
    return isolated ? this.#runProcess(task, signal, isolated) : this.#runThread(owner, task, body, signal);
  }

  async #runProcess(task: ThreadTask, signal: AbortSignal | undefined, isolated: Isolated) {
    const { timeLimitMs, memoryMb } = this.#options;
    await this.#processTurn(signal);
    try {
      return await runInProcess<ThreadTask, ThreadValue>(task, {
        entry: new URL('./process.ts', import.meta.url),
        timeLimitMs,
        memoryMb: memoryMb + PROCESS_BASE_MB,
        settings: { timeLimitMs } satisfies ThreadSettings,
        signal,
      });
    } catch (err) {
      // Aborted, or stopped by someone else (a shutdown): nothing is known about the page.
      if (signal?.aborted || err instanceof ProcessStopped) throw err;
      if (!(err instanceof SandboxError)) throw this.#asExtractionError(err);
      this.#options.onThreadEnd?.(err.limit);
      const failure = this.#asExtractionError(err);
      await isolated.died(failure.message);
      throw new ExtractionError(`${failure.message}; it ended the process extracting it`, { cause: err });
    } finally {
      // The place goes to the next waiting task, or is free.
      const next = this.#waitingProcesses.shift();
      if (next) next();
      else this.#processes--;
    }
  }

  /** Resolves once fewer than MAX_PROCESSES run (counting this one in), or rejects on abort. */
  async #processTurn(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    if (this.#processes < MAX_PROCESSES) {
      this.#processes++;
      return;
    }
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const turn = () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    const onAbort = () => {
      this.#waitingProcesses.splice(this.#waitingProcesses.indexOf(turn), 1);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    this.#waitingProcesses.push(turn);
    return promise;
  }

  async #runThread(owner: string, task: ThreadTask, body: Uint8Array | null, signal?: AbortSignal) {
    // A body that owns its whole memory moves to the thread instead of being copied.
    const transfer =
      body && body.byteOffset === 0 && body.byteLength === body.buffer.byteLength
        ? [body.buffer as ArrayBuffer]
        : [];
    try {
      return await this.#pool.run(owner, task, { signal, transfer });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw this.#asExtractionError(err);
    }
  }

  stats() {
    return this.#pool.stats();
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  #asExtractionError(err: unknown): ExtractionError {
    if (err instanceof SandboxError) {
      const { timeLimitMs, memoryMb } = this.#options;
      const message =
        err.limit === 'time'
          ? `extraction exceeded its time limit of ${timeLimitMs} ms (EXTRACTION_TIME_LIMIT_MS)`
          : err.limit === 'memory'
            ? `extraction exceeded its memory limit of ${memoryMb} MB (EXTRACTION_MEMORY_MB)`
            : `extraction stopped: ${err.message}`;
      return new ExtractionError(message, { cause: err });
    }
    if (err instanceof TaskError)
      return new ExtractionError(
        err.name === 'ExtractionError' || err.name === 'SitemapError'
          ? err.message
          : `extraction failed: ${err.message}`,
      );
    return new ExtractionError(`extraction failed: ${(err as Error).message}`, { cause: err });
  }
}
