import type {
  FoundUrl,
  PageRows,
  RunStore,
  Screenshot,
  StoredDocument,
  UrlOutcome,
} from '@scrapejobs/domain';

// A page's records are one row (result_pages), and a transaction costs about as much for one page
// as for many: a batch goes out at this many URLs, or at the size or age below.
const BATCH_URLS = 100;
// Records can be large (up to 16 MiB of values a page): a batch also goes out once it holds this
// much, so a run never keeps more than a few pages' records in memory.
const BATCH_CHARS = 4 * 1024 * 1024;
// Results and progress reach the database at least this often, so a pause keeps what was
// scraped and GET /jobs/{id}/runs shows a long run advancing.
const FLUSH_EVERY_MS = 200;
const ATTEMPTS = 5;

/**
 * The URL outcomes of one run that wait to be stored, with their records and the URLs they found, written one batch at a time.
 * A batch that fails is retried with backoff and then kept for the next flush; the error reaches
 * the caller, never a URL's outcome.
 */
export class BatchWriter {
  readonly #store: RunStore;
  readonly #runId: string;
  readonly #onLost: (urls: number) => void;
  #pages: PageRows[] = [];
  #outcomes: UrlOutcome[] = [];
  #found: FoundUrl[] = [];
  #screenshots: Screenshot[] = [];
  #documents: StoredDocument[] = [];
  /** Outcomes being written now. */
  #writing: readonly UrlOutcome[] = [];
  #chars = 0;
  #lastFlush = Date.now();
  #flushing: Promise<void> = Promise.resolve();
  /** Flushes what waits even when no further URL finishes soon (one slow URL holds the rest). */
  #timer: NodeJS.Timeout | null = null;

  /** `onLost` hears of outcomes not written because their URLs were taken over meanwhile. */
  constructor(store: RunStore, runId: string, onLost: (urls: number) => void) {
    this.#store = store;
    this.#runId = runId;
    this.#onLost = onLost;
  }

  /** A URL's outcome, with its page's records, the URLs it found, its screenshot and document when it has them. */
  add(
    outcome: UrlOutcome,
    page?: PageRows,
    found: readonly FoundUrl[] = [],
    screenshot?: Buffer,
    document?: StoredDocument,
  ): void {
    this.#outcomes.push(outcome);
    for (const url of found) this.#found.push(url);
    this.#chars += found.length * 100;
    if (screenshot) {
      this.#screenshots.push({ seq: outcome.seq, png: screenshot });
      this.#chars += screenshot.length;
    }
    if (document) {
      this.#documents.push(document);
      this.#chars += document.data.length;
    }
    // A failed timer flush leaves the chain rejected: the next flush() reports it.
    this.#timer ??= setTimeout(() => this.flush().catch(() => {}), FLUSH_EVERY_MS).unref();
    if (!page || page.records === 0) return;
    this.#pages.push(page);
    this.#chars += page.json.length;
  }

  /** The URLs whose outcome is not stored yet: their leases must still be renewed. */
  unstored(): { seq: number; claims: number }[] {
    return [...this.#writing, ...this.#outcomes];
  }

  /** Whether enough waits, or long enough, for a flush. */
  get due(): boolean {
    return (
      this.#outcomes.length >= BATCH_URLS ||
      this.#chars >= BATCH_CHARS ||
      Date.now() - this.#lastFlush >= FLUSH_EVERY_MS
    );
  }

  /** Stores what waits, after the flush before it. */
  flush(): Promise<void> {
    // A flush that failed keeps its batch for this one, which tries again rather than repeating its error.
    this.#flushing = this.#flushing.catch(() => {}).then(() => this.#write());
    return this.#flushing;
  }

  async #write(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const pages = this.#pages;
    const outcomes = this.#outcomes;
    const found = this.#found;
    const screenshots = this.#screenshots;
    const documents = this.#documents;
    const chars = this.#chars;
    this.#pages = [];
    this.#outcomes = [];
    this.#found = [];
    this.#screenshots = [];
    this.#documents = [];
    this.#chars = 0;
    this.#lastFlush = Date.now();
    if (outcomes.length === 0) return;
    this.#writing = outcomes;
    for (let attempt = 1; ; attempt++) {
      try {
        const lost = await this.#store.saveBatch(this.#runId, {
          pages,
          outcomes,
          found,
          screenshots,
          documents,
        });
        this.#writing = [];
        if (lost > 0) this.#onLost(lost);
        return;
      } catch (err) {
        if (attempt >= ATTEMPTS) {
          this.#writing = [];
          this.#pages = pages.concat(this.#pages);
          this.#outcomes = outcomes.concat(this.#outcomes);
          this.#found = found.concat(this.#found);
          this.#screenshots = screenshots.concat(this.#screenshots);
          this.#documents = documents.concat(this.#documents);
          this.#chars += chars;
          throw err;
        }
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
      }
    }
  }
}
