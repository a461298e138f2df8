import type { ContentOptions, PackedDocument, PageInfo } from '@scrapejobs/content';
import { ExtractionError, type QuerySpec, type QueryType } from '@scrapejobs/extraction';
import { SandboxError, SandboxPool, TaskError } from '@scrapejobs/sandbox';
import { AloneGate } from './alone-gate.ts';
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
}

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
 * Run the page alone in this process: `mark(true)` once nothing else is extracted here and
 * before the page is, `mark(false)` after (a URL taken over after a crash, docs/api.md §16a).
 */
export interface Alone {
  mark(alone: boolean): Promise<void>;
}

export interface ThreadSettings {
  timeLimitMs: number;
}

export interface ExtractorOptions {
  threads: number;
  timeLimitMs: number;
  memoryMb: number;
  /** Told when a thread had to be ended (past a limit, or crashed). */
  onThreadEnd?: (limit: string) => void;
}

/**
 * Extracts pages on a pool of threads, so that no query on any page can hold up this process's
 * event loop (lock renewal, cancellation, /health, other runs) or grow its heap. Every failure of
 * a page's extraction, limits included, is an ExtractionError naming what happened.
 */
export class PageExtractor {
  readonly #pool: SandboxPool<ThreadTask, ThreadValue>;
  readonly #options: ExtractorOptions;
  readonly #gate = new AloneGate();

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
  extract(owner: string, task: ExtractTask, signal?: AbortSignal, alone?: Alone): Promise<PageExtraction> {
    const { page } = task;
    return this.#run(
      owner,
      { type: 'page', ...task },
      'body' in page ? page.body : null,
      signal,
      alone,
    ) as Promise<PageExtraction>;
  }

  /** A sitemap's URLs; rejects with ExtractionError (a sitemap that is not one too), or the signal's reason. */
  readSitemap(owner: string, task: SitemapTask, signal?: AbortSignal, alone?: Alone): Promise<SitemapUrls> {
    return this.#run(owner, { type: 'sitemap', ...task }, task.body, signal, alone) as Promise<SitemapUrls>;
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

  async #run(owner: string, task: ThreadTask, body: Uint8Array | null, signal?: AbortSignal, alone?: Alone) {
    const exit = alone ? await this.#gate.enterAlone() : await this.#gate.enter();
    try {
      if (alone) {
        // The mark covers the page's own parsing and extraction, not a thread's start.
        await this.#pool.ready();
        await alone.mark(true);
      }
      return await this.#runThread(owner, task, body, signal);
    } finally {
      exit();
      if (alone) await alone.mark(false);
    }
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
