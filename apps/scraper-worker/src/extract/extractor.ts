import { ExtractionError, type QuerySpec } from '@scrapejobs/extraction';
import { SandboxError, SandboxPool, TaskError } from '@scrapejobs/sandbox';

/** A page as it arrived: fetched bytes (decoded in the thread) or rendered HTML. */
export type PageContent = { body: Uint8Array; contentType: string | undefined } | { html: string };

export interface ExtractTask {
  /** Names the queries for the thread's cache of compiled jobs (a run id). */
  key: string;
  queries: readonly QuerySpec[];
  page: PageContent;
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
  readonly #pool: SandboxPool<ExtractTask, string[]>;
  readonly #options: ExtractorOptions;

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

  /** The page's records, each as JSON text; rejects with ExtractionError, or the signal's reason. `owner` is the user whose page it is. */
  async extract(owner: string, task: ExtractTask, signal?: AbortSignal): Promise<string[]> {
    const { page } = task;
    // A body that owns its whole memory moves to the thread instead of being copied.
    const transfer =
      'body' in page && page.body.byteOffset === 0 && page.body.byteLength === page.body.buffer.byteLength
        ? [page.body.buffer as ArrayBuffer]
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
        err.name === 'ExtractionError' ? err.message : `extraction failed: ${err.message}`,
      );
    return new ExtractionError(`extraction failed: ${(err as Error).message}`, { cause: err });
  }
}
