import { AppError } from '@scrapejobs/domain';
import type { FileKind, FirecrawlDocument, ParseRequest } from '@scrapejobs/firecrawl';
import { SandboxError, SandboxPool, TaskError } from '@scrapejobs/sandbox';

/** One file to convert: its bytes (moved to the thread), its name and type, and the options. */
export interface ParseTask {
  kind: FileKind;
  bytes: Uint8Array;
  file: { name: string; type: string };
  options: Pick<
    ParseRequest,
    'formats' | 'attributes' | 'onlyMainContent' | 'includeTags' | 'excludeTags' | 'maxPages'
  >;
}

export interface FileParserOptions {
  /** A conversion's wall time at most (PARSE_TIME_LIMIT_MS); a request may ask for less. */
  timeLimitMs: number;
  /** Each thread's heap (PARSE_MEMORY_MB). */
  memoryMb: number;
  /** PARSE_THREADS: with two or more, one user's files never take them all. */
  threads: number;
}

/** A parse that did not finish in its time: the route answers it as Firecrawl's SCRAPE_TIMEOUT. */
export class ParseTimeout extends Error {
  override readonly name = 'ParseTimeout';
}

/**
 * Converts uploaded files on threads of their own (docs/api.md §18), each file within a time and
 * heap limit: a file past one ends its thread, not the API. Files wait for a free thread (within
 * their timeout), the users with the fewest running first.
 */
export class FileParser {
  readonly #pool: SandboxPool<ParseTask, FirecrawlDocument>;
  readonly #memoryMb: number;
  readonly timeLimitMs: number;

  constructor(options: FileParserOptions) {
    this.timeLimitMs = options.timeLimitMs;
    this.#memoryMb = options.memoryMb;
    this.#pool = new SandboxPool({
      entry: new URL('./parse-thread.ts', import.meta.url),
      threads: options.threads,
      timeLimitMs: options.timeLimitMs,
      memoryMb: options.memoryMb,
    });
  }

  /**
   * The file's document, converted within `timeoutMs` (waiting for a thread included): past it a
   * ParseTimeout; a file the converters cannot read a 400 at `file`; one needing more heap a 413.
   */
  async parse(owner: string, task: ParseTask, timeoutMs: number): Promise<FirecrawlDocument> {
    const limitMs = Math.min(timeoutMs, this.timeLimitMs);
    const signal = AbortSignal.timeout(limitMs);
    try {
      return await this.#pool.run(owner, task, { signal, transfer: [task.bytes.buffer as ArrayBuffer] });
    } catch (err) {
      if (signal.aborted || (err instanceof SandboxError && err.limit === 'time'))
        throw new ParseTimeout(`The file was not parsed within its timeout of ${limitMs} ms.`);
      if (err instanceof SandboxError && err.limit === 'memory')
        throw new AppError(413, `The file needs more than ${this.#memoryMb} MB to parse.`);
      if (err instanceof TaskError && err.name === 'ContentError') {
        const message = `could not be read: ${err.message}`;
        throw new AppError(400, `The request is invalid: file: ${message}.`, { details: { file: message } });
      }
      throw err;
    }
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}
