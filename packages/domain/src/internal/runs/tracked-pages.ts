import { createHash } from 'node:crypto';
import type pg from 'pg';
import { z } from 'zod';

/** Firecrawl's changeTracking modes: a diff of the markdown, and the fields of two extracted objects. */
export const TRACKING_MODES = ['git-diff', 'json'] as const;
export type TrackingMode = (typeof TRACKING_MODES)[number];

/**
 * A job's page tracking (Firecrawl's changeTracking format, docs/api.md §24): each page is compared
 * with the account's previous scrape of the same URL with the same `tag`; `json` mode extracts an
 * object from both with `schema` and `prompt`.
 */
export const pageTrackingSchema = z.object({
  tag: z.string().nullable(),
  modes: z.array(z.enum(TRACKING_MODES)),
  schema: z.record(z.string(), z.unknown()).nullable(),
  prompt: z.string().nullable(),
});
export type PageTracking = z.infer<typeof pageTrackingSchema>;

/** A tracked page's previous scrape: when, and its stored document (packed). */
export interface TrackedScrape {
  scrapedAt: Date;
  document: Uint8Array;
}

/** The key of a URL's scrapes under a tag (null is a tag of its own, apart from every string). */
export const trackingKey = (tag: string | null, url: string): Buffer =>
  createHash('sha256')
    .update(JSON.stringify([tag, url]))
    .digest()
    .subarray(0, 16);

/**
 * The scrapes of tracked pages (table tracked_pages), by account and mode, tag and URL. A row is
 * written when the page is compared, before its document is stored: a look-up passes over rows
 * whose document is not (or never was) stored, and rows go with their run (retention).
 */
export class TrackedPages {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /**
   * Notes that page `seq` of run `runId` (URL as asked `url`, tag `tag`) is scraped at `at`, and
   * gives the latest scrape of the same page by another run of the same account and mode that has
   * its document, or null. A page processed again (a lost lease) keeps one row.
   */
  async record(page: {
    runId: string;
    seq: number;
    tag: string | null;
    url: string;
    at: Date;
  }): Promise<TrackedScrape | null> {
    const { rows } = await this.#pool.query<{ scraped_at: Date; data: Buffer }>({
      name: 'tracked-pages-record',
      text: `WITH owner AS (SELECT j.user_id, j.mode FROM runs r JOIN jobs j ON j.id = r.job_id WHERE r.id = $1),
             previous AS (
               SELECT t.scraped_at AT TIME ZONE 'UTC' AS scraped_at, d.data
                 FROM owner o
                 JOIN tracked_pages t ON t.user_id = o.user_id AND t.mode = o.mode AND t.key = $3
                 JOIN run_documents d ON d.run_id = t.run_id AND d.seq = t.seq
                 JOIN runs r ON r.id = t.run_id AND NOT r.deleting
                WHERE t.run_id <> $1
                ORDER BY t.scraped_at DESC LIMIT 1),
             noted AS (
               INSERT INTO tracked_pages (run_id, seq, user_id, mode, key, scraped_at)
               SELECT $1, $2, o.user_id, o.mode, $3, $4::timestamptz AT TIME ZONE 'UTC' FROM owner o
               ON CONFLICT (run_id, seq) DO UPDATE SET scraped_at = EXCLUDED.scraped_at)
             SELECT scraped_at, data FROM previous`,
      values: [page.runId, page.seq, trackingKey(page.tag, page.url), page.at],
    });
    const row = rows[0];
    return row ? { scrapedAt: row.scraped_at, document: new Uint8Array(row.data) } : null;
  }
}
