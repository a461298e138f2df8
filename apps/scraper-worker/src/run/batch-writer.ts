import type { PageRows, RunStore, UrlOutcome } from '@scrapejobs/domain';

const BATCH_ROWS = 500;
// Records can be large (up to 16 MiB of values a page): a batch also goes out once it holds this
// much, so a run never keeps more than a few pages' records in memory.
const BATCH_CHARS = 4 * 1024 * 1024;
// Results and progress reach the database at least this often, so a pause keeps what was
// scraped and GET /jobs/{id}/runs shows a long run advancing.
const FLUSH_EVERY_MS = 200;
const ATTEMPTS = 5;

/**
 * The records and URL outcomes of one run that wait to be stored, written one batch at a time.
 * A batch that fails is retried with backoff and then kept for the next flush; the error reaches
 * the caller, never a URL's outcome.
 */
export class BatchWriter {
  readonly #store: RunStore;
  readonly #runId: string;
  readonly #jobId: string;
  #pages: PageRows[] = [];
  #outcomes: UrlOutcome[] = [];
  #rows = 0;
  #chars = 0;
  #lastFlush = Date.now();
  #flushing: Promise<void> = Promise.resolve();
  /** Flushes what waits even when no further URL finishes soon (one slow URL holds the rest). */
  #timer: NodeJS.Timeout | null = null;

  constructor(store: RunStore, runId: string, jobId: string) {
    this.#store = store;
    this.#runId = runId;
    this.#jobId = jobId;
  }

  /** A URL's outcome, with its page's records when it has any. */
  add(outcome: UrlOutcome, page?: PageRows): void {
    this.#outcomes.push(outcome);
    // A failed timer flush leaves the chain rejected: the next flush() reports it.
    this.#timer ??= setTimeout(() => this.flush().catch(() => {}), FLUSH_EVERY_MS).unref();
    if (!page || page.rows.length === 0) return;
    this.#pages.push(page);
    this.#rows += page.rows.length;
    for (const row of page.rows) this.#chars += row.length;
  }

  /** Whether enough waits, or long enough, for a flush. */
  get due(): boolean {
    return (
      this.#rows >= BATCH_ROWS || this.#chars >= BATCH_CHARS || Date.now() - this.#lastFlush >= FLUSH_EVERY_MS
    );
  }

  /** Stores what waits, after the flush before it. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write());
    return this.#flushing;
  }

  async #write(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const pages = this.#pages;
    const outcomes = this.#outcomes;
    const rows = this.#rows;
    const chars = this.#chars;
    this.#pages = [];
    this.#outcomes = [];
    this.#rows = 0;
    this.#chars = 0;
    this.#lastFlush = Date.now();
    if (pages.length === 0 && outcomes.length === 0) return;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#store.saveBatch(this.#runId, this.#jobId, pages, outcomes);
        return;
      } catch (err) {
        if (attempt >= ATTEMPTS) {
          this.#pages = pages.concat(this.#pages);
          this.#outcomes = outcomes.concat(this.#outcomes);
          this.#rows += rows;
          this.#chars += chars;
          throw err;
        }
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
      }
    }
  }
}
