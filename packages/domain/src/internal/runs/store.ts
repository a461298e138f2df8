import type { Database } from '@scrapejobs/db';
import { newId, newRecordIdBase, transaction } from '@scrapejobs/db';
import { MAX_RECORDS_LIMIT } from '@scrapejobs/extraction';
import type { PoolClient } from 'pg';
import type { RunFailure } from '../model.ts';
import { outboxDataSql } from '../outbox.ts';
import { FIRECRAWL_PAGE_EVENT } from '../webhooks/firecrawl.ts';
import { MIN_HISTORY } from './analysis.ts';
import { MAX_PAGES, type UrlKindName, wallTime } from './frontier.ts';
import { RUN_SETTINGS, type RunSettings, runSettings } from './settings.ts';
import {
  completeCopies,
  copyColumns,
  type FetchValidators,
  giveBackUnchanged,
  hexBytes,
  type PageCopy,
  planUnchanged,
} from './unchanged.ts';

/** One page's records, serialised as soon as they are extracted: row index = position in `json`. */
export interface PageRows {
  url: string;
  /** The page's `seq` in its run's frontier. */
  urlIndex: number;
  scrapedAt: Date;
  /** How many records `json` holds. */
  records: number;
  /** The records as one JSON array text. */
  json: string;
}

/** How a claimed URL ended; `claims` is the claim it was processed under (a lost claim writes nothing). */
export interface UrlOutcome {
  seq: number;
  claims: number;
  status: 'success' | 'failed' | 'skipped';
  httpStatus: number | null;
  records: number | null;
  durationMs: number | null;
  fetchedAt: Date | null;
  /** Why it failed or was skipped. */
  failure: RunFailure | null;
  /** A `success` page without its language model output, and why (docs/api.md §24). */
  warning?: RunFailure;
  /** A fetched page: whether it was rendered in Chromium, and why (docs/api.md §23). */
  render?: { rendered: boolean; reason: string | null };
  /**
   * A `success` page fetched and extracted: what its job's next run needs to tell whether it
   * changed (docs/api.md §20). Its job keeps them, with this run and seq as the page's copy source.
   */
  validators?: FetchValidators;
  /**
   * A `success` page that had not changed (answered 304, or 200 with the body hash and settings
   * hash of its ClaimedUrl.previous), given without records, document, screenshot or found URLs:
   * those of its copy source are copied. When they cannot be (retention deleted that run, or the
   * page's links are needed and were never kept), its URL goes back to the frontier instead, its
   * validators forgotten, and is claimed again for a full fetch (previous null).
   */
  unchanged?: true;
}

/** A URL found on a processed URL (a link, a sitemap's entry): accepted unless its run already has it. */
export interface FoundUrl {
  kind: Exclude<UrlKindName, 'robots'>;
  url: string;
  /** 16 bytes: urlKey(kind, url). */
  key: Uint8Array;
  depth: number;
  parentSeq: number;
}

/** A rendered URL's full-page PNG (render_config.screenshot). */
export interface Screenshot {
  seq: number;
  png: Buffer;
}

/** A fetched URL's document (docs/api.md §17), packed by the extraction thread. */
export interface StoredDocument {
  seq: number;
  url: string;
  statusCode: number | null;
  /** The JSON's size before compression. */
  bytes: number;
  markdownHash: Uint8Array | null;
  /** The JSON, zstd-compressed. */
  data: Uint8Array;
}

/** What a worker stores at once: outcomes, the records of those that succeeded, and the URLs they found. */
export interface Batch {
  pages: readonly PageRows[];
  outcomes: readonly UrlOutcome[];
  found: readonly FoundUrl[];
  /** Stored with their URL's outcome, like its records. */
  screenshots?: readonly Screenshot[];
  documents?: readonly StoredDocument[];
}

/**
 * URLs a crawl accepts beyond its `max_pages` (they end skipped with MAX_PAGES): enough to show
 * where it would have gone on, bounded so that a page of 10,000 links cannot grow a frontier forever.
 */
export const ACCEPTED_BEYOND_MAX_PAGES = 10_000;

/** PostgreSQL refused a value (SQLSTATE class 22, data exception, or 54, program limit). */
const isDataError = (err: unknown): boolean => /^(22|54)/.test(String((err as { code?: unknown }).code));

/**
 * The batch with every page of more records than a stored page holds (the results view numbers a
 * page's records below MAX_RECORDS_LIMIT) failed with EXTRACTION_ERROR, its records and links
 * dropped. Extraction never gives more; this keeps the view right whatever a writer sends.
 */
function withinPageLimit(batch: Batch): Batch {
  // The URL of each page over the limit, by its seq.
  const over = new Map(
    batch.pages.filter((page) => page.records > MAX_RECORDS_LIMIT).map((page) => [page.urlIndex, page.url]),
  );
  if (over.size === 0) return batch;
  return {
    ...batch,
    pages: batch.pages.filter((page) => !over.has(page.urlIndex)),
    found: batch.found.filter((url) => !over.has(url.parentSeq)),
    outcomes: batch.outcomes.map((outcome) => {
      const url = over.get(outcome.seq);
      if (url === undefined) return outcome;
      const message = `${url}: the page gave more than ${MAX_RECORDS_LIMIT} records, more than a stored page holds`;
      return { ...outcome, status: 'failed', records: null, failure: { code: 'EXTRACTION_ERROR', message } };
    }),
  };
}

/** The batch without the records, links, screenshots and documents sent with unchanged outcomes: theirs are copied. */
function withoutCopiedContent(batch: Batch): Batch {
  const copied = new Set(batch.outcomes.filter(isUnchanged).map((o) => o.seq));
  if (copied.size === 0) return batch;
  return {
    outcomes: batch.outcomes,
    pages: batch.pages.filter((page) => !copied.has(page.urlIndex)),
    found: batch.found.filter((url) => !copied.has(url.parentSeq)),
    screenshots: batch.screenshots?.filter((shot) => !copied.has(shot.seq)) ?? [],
    documents: batch.documents?.filter((document) => !copied.has(document.seq)) ?? [],
  };
}

/** A page's records as the columns of result_pages (one entry per page that gave records). */
interface PageColumns {
  urlIndexes: number[];
  urls: string[];
  scrapedAts: (string | null)[];
  records: number[];
  idBases: string[];
  /** Every page's records as one JSON array of arrays: no escaping into an array literal. */
  data: string;
}

/** Runs whose answer to "does a Firecrawl webhook want its pages?" is kept, at most. */
const WATCHED_RUNS_KEPT = 10_000;

/** An outcome stored as a copy of its page's last successful fetch (docs/api.md §20). */
const isUnchanged = (o: UrlOutcome) => o.status === 'success' && o.unchanged === true;

/** What #writeBatch wrote: how many outcomes, and the seqs of the pages stored successfully. */
const NOTHING_WRITTEN = { written: 0, pages: [] as number[] };

/** job.completed's and job.failed's data, built by the statement that ends the run. */
const COMPLETED_DATA = outboxDataSql('job.completed', {
  job_id: 'j.id',
  job_name: 'j.name',
  run_id: 'u.id',
  status: "'success'",
  results_count: 'u.results_count',
  duration_ms: 'u.duration_ms',
  download_url: "$8::text || j.id || '/download'",
  skipped_urls: 'u.skipped_urls',
});
const FAILED_DATA = outboxDataSql('job.failed', {
  job_id: 'j.id',
  job_name: 'j.name',
  run_id: 'u.id',
  status: "'failed'",
  error: 'u.error',
  skipped_urls: 'u.skipped_urls',
});

/**
 * Ends a running run whose row the transaction holds: its URLs still pending or claimed become
 * $2 ('failed' when forced by $3/$4, else 'skipped' past max_pages) and are counted; it fails with
 * the forced failure, or with its first failed URL's when any failed, else succeeds; its job
 * takes its status, and its job.completed or job.failed is written. $6 is now, $7 the event's id,
 * $8 the start of the download URL.
 *
 * A run with nothing to analyse (no queries, no change tracking, fewer earlier successful runs
 * than the records-drop check needs, as with every Firecrawl scrape) is stored as analysed, with
 * the health and query matches its analysis would have found (docs/api.md §13).
 */
const FINISH = `
  WITH settled AS (
         UPDATE run_urls SET status = $2::"UrlStatus", lease_until = NULL, error_code = $3, error_message = $4
          WHERE run_id = $1 AND status IN ('pending', 'active')
         RETURNING kind),
       counted AS (
         SELECT r.id, r.failed_urls + CASE WHEN $5 THEN s.pages ELSE 0 END AS failed,
                r.skipped_urls + CASE WHEN $5 THEN 0 ELSE s.pages END AS skipped,
                CASE WHEN $5 THEN $3
                     WHEN r.failed_urls > 0 THEN coalesce(r.first_failure->>'code', 'NETWORK_ERROR') END AS code,
                CASE WHEN $5 THEN $4
                     WHEN r.failed_urls > 0 THEN r.failed_urls || ' of ' || r.total_urls || ' URLs failed; first: '
                                                 || coalesce(r.first_failure->>'message', 'unknown') END AS message,
                jsonb_array_length(CASE WHEN jsonb_typeof(r.settings->'queries') = 'array'
                                        THEN r.settings->'queries' ELSE j.queries END) = 0
                  AND coalesce(j.change_tracking, 'null') = 'null'
                  AND (SELECT count(*) FROM (SELECT FROM runs e WHERE e.job_id = r.job_id AND e.id <> r.id
                                                AND e.status = 'success' AND NOT e.deleting
                                              LIMIT ${MIN_HISTORY}) h) < ${MIN_HISTORY} AS analysed
           FROM runs r JOIN jobs j ON j.id = r.job_id,
                (SELECT count(*) FILTER (WHERE kind = 'page')::int AS pages FROM settled) s
          WHERE r.id = $1),
       ended AS (
         UPDATE runs r SET failed_urls = c.failed, skipped_urls = c.skipped, pending_urls = 0, active_urls = 0,
                           status = CASE WHEN c.code IS NULL THEN 'success' ELSE 'failed' END::"RunStatus",
                           finished_at = $6::timestamp,
                           duration_ms = round(extract(epoch FROM $6::timestamp - r.started_at) * 1000),
                           error = CASE WHEN c.code IS NOT NULL
                                        THEN jsonb_build_object('code', c.code, 'message', c.message,
                                                                'failed_urls', c.failed, 'successful_urls', r.successful_urls) END,
                           analysis_due = NOT c.analysed,
                           health = CASE WHEN c.analysed THEN '{"status": "ok", "reasons": []}'::jsonb END,
                           query_matches = CASE WHEN c.analysed THEN '{}'::jsonb END
           FROM counted c
          WHERE r.id = c.id AND r.status = 'running'
         RETURNING r.*),
       job AS (
         UPDATE jobs j SET status = u.status::text::"JobStatus", results_count = u.results_count, updated_at = $6::timestamp
           FROM ended u
          WHERE j.id = u.job_id AND j.status = 'running' AND j.last_run_id = u.id),
       event AS (
         INSERT INTO events (id, user_id, mode, job_id, kind, data, created_at)
         SELECT $7, j.user_id, j.mode, j.id,
                CASE WHEN u.error IS NULL THEN 'job.completed' ELSE 'job.failed' END,
                CASE WHEN u.error IS NULL THEN ${COMPLETED_DATA} ELSE ${FAILED_DATA} END, $6::timestamp
           FROM ended u JOIN jobs j ON j.id = u.job_id)
  SELECT status::text, successful_urls AS "successfulUrls", failed_urls AS "failedUrls",
         skipped_urls AS "skippedUrls", duration_ms AS "durationMs"
    FROM ended`;

/** How a run ended, from what is stored: every worker that worked on it counted. */
export interface RunEnding {
  status: 'success' | 'failed';
  successfulUrls: number;
  failedUrls: number;
  skippedUrls: number;
  durationMs: number;
}

/** The database side of a run: its settings, storing what its URLs gave idempotently, ending it with its event. */
export class RunStore {
  readonly #db: Database;
  readonly #publicBaseUrl: string;
  /**
   * Per run, its job's id when the job has an active Firecrawl webhook asking for `page`, else
   * null. Kept for the run's life: the webhook is stored before its run starts, never after.
   */
  readonly #pagesWatched = new Map<string, string | null>();

  constructor(db: Database, publicBaseUrl: string) {
    this.#db = db;
    this.#publicBaseUrl = publicBaseUrl.replace(/\/+$/, '');
  }

  /** The settings a running run runs with, or null when it is gone or no longer running (cancelled, finished, deleted). */
  async settings(runId: string): Promise<RunSettings | null> {
    const { rows } = await this.#db.pool.query<{ settings: unknown }>({
      name: 'run-settings',
      text: `SELECT ${RUN_SETTINGS} AS settings FROM runs r JOIN jobs j ON j.id = r.job_id
              WHERE r.id = $1 AND r.status = 'running'`,
      values: [runId],
    });
    return rows[0] ? runSettings(rows[0].settings) : null;
  }

  /**
   * The settings a run ran with and its job, whatever the run's status, when the run is
   * `userId`'s and not being deleted; null otherwise (an interact session's page, docs/api.md §18).
   */
  async settingsOf(runId: string, userId: string): Promise<{ jobId: string; settings: RunSettings } | null> {
    const { rows } = await this.#db.pool.query<{ job_id: string; settings: unknown }>({
      name: 'run-settings-of',
      text: `SELECT r.job_id, ${RUN_SETTINGS} AS settings FROM runs r JOIN jobs j ON j.id = r.job_id
              WHERE r.id = $1 AND j.user_id = $2 AND NOT r.deleting`,
      values: [runId, userId],
    });
    const row = rows[0];
    return row ? { jobId: row.job_id, settings: runSettings(row.settings) } : null;
  }

  /**
   * Stores a batch in one transaction, with the run's row locked: each outcome only if its URL is
   * still claimed under the same claim (a worker that lost it to a take-over writes nothing), the
   * records of the pages whose outcome was written (a page's records as one row of result_pages),
   * the URLs they found that the run does not have yet, and the run's counts, with a page event
   * for each page stored successfully when a Firecrawl webhook wants its pages. A run paused
   * meanwhile still counts the pages it finished; an ended one is left as it is.
   *
   * A value PostgreSQL refuses fails only its own page: the batch is stored again URL by URL, and
   * a page still refused is stored as a failed URL (EXTRACTION_ERROR) without its records.
   *
   * Unchanged pages (docs/api.md §20): a page's `validators` are kept for its job's next run, this
   * run and seq as its copy source, with its links (the batch's `found` of its seq) when it was
   * followed for them. An `unchanged` page is stored as a copy of its copy source's records,
   * document and screenshot, made inside PostgreSQL and counted in its `records` and the run's
   * `results_count`; in a crawl below max_depth its kept links are accepted again as found on it.
   * When the copy source is gone (retention) or its links are needed and were never kept, the URL
   * goes back to the frontier as pending instead, its validators forgotten: it is claimed again
   * with `previous: null` and fetched in full. Nothing for the worker to do; it is not a lost claim.
   *
   * Returns how many outcomes were not written because their URL was no longer this claim's.
   */
  async saveBatch(runId: string, given: Batch): Promise<number> {
    const batch = withinPageLimit(given);
    try {
      return await this.#insertBatch(runId, batch);
    } catch (err) {
      if (!isDataError(err)) throw err;
      let lost = 0;
      for (const outcome of batch.outcomes) {
        const one: Batch = {
          outcomes: [outcome],
          pages: batch.pages.filter((page) => page.urlIndex === outcome.seq),
          found: batch.found.filter((url) => url.parentSeq === outcome.seq),
          screenshots: batch.screenshots?.filter((shot) => shot.seq === outcome.seq) ?? [],
          documents: batch.documents?.filter((document) => document.seq === outcome.seq) ?? [],
        };
        try {
          lost += await this.#insertBatch(runId, one);
        } catch (pageErr) {
          if (!isDataError(pageErr)) throw pageErr;
          const message = `${one.pages[0]?.url ?? 'a page'}: its records could not be stored: ${(pageErr as Error).message}`;
          const failure = { code: 'EXTRACTION_ERROR', message };
          lost += await this.#insertBatch(runId, {
            outcomes: [{ ...outcome, status: 'failed', records: null, failure }],
            pages: [],
            found: [],
          });
        }
      }
      return lost;
    }
  }

  async #insertBatch(runId: string, given: Batch): Promise<number> {
    if (given.outcomes.length === 0) return 0;
    const { pages, found, screenshots = [], documents = [] } = withoutCopiedContent(given);
    let outcomes = given.outcomes;
    const stored = pages.filter((page) => page.records > 0);
    const rows: PageColumns = {
      urls: stored.map((page) => page.url),
      urlIndexes: stored.map((page) => page.urlIndex),
      scrapedAts: stored.map((page) => wallTime(page.scrapedAt)),
      records: stored.map((page) => page.records),
      idBases: stored.map((page) => newRecordIdBase(page.scrapedAt.getTime())),
      data: `[${stored.map((page) => page.json).join(',')}]`,
    };
    const client = await this.#db.pool.connect();
    try {
      await client.query('BEGIN');
      // Validators reference their job: the batch holds its job's row before its run's, in the
      // order job updates and deletions take them, so that neither waits for the other in a cycle.
      if (outcomes.some((o) => o.status === 'success' && (o.validators !== undefined || o.unchanged)))
        await client.query({
          name: 'runs-batch-lock-job',
          text: 'SELECT 1 FROM jobs WHERE id = (SELECT job_id FROM runs WHERE id = $1) FOR KEY SHARE',
          values: [runId],
        });
      const locked = await client.query<{ status: string }>({
        name: 'runs-batch-lock',
        text: `SELECT status FROM runs WHERE id = $1 AND status IN ('running', 'cancelled') FOR UPDATE`,
        values: [runId],
      });
      let copies: PageCopy[] = [];
      if (locked.rowCount !== 0 && outcomes.some(isUnchanged))
        ({ outcomes, copies } = await this.#planCopies(client, runId, outcomes));
      const { written, pages: succeeded } =
        locked.rowCount === 0
          ? NOTHING_WRITTEN
          : await this.#writeBatch(client, runId, outcomes, found, rows, copies);
      const done = new Set(succeeded);
      const storedCopies = copies.filter((copy) => done.has(copy.seq));
      if (storedCopies.length > 0) {
        const validators = new Map(outcomes.map((o) => [o.seq, o.validators ?? null]));
        await completeCopies(
          client,
          runId,
          storedCopies.map((copy) => ({ ...copy, validators: validators.get(copy.seq) ?? null })),
        );
      }
      if (written > 0 && screenshots.length > 0)
        await this.#writeScreenshots(client, runId, outcomes, screenshots);
      if (written > 0 && documents.length > 0) await this.#writeDocuments(client, runId, outcomes, documents);
      if (succeeded.length > 0) await this.#writePageEvents(client, runId, succeeded);
      // A paused job shows the records of the run it cancelled, those stored after the pause too.
      if (written > 0 && locked.rows[0]?.status === 'cancelled')
        await client.query({
          name: 'runs-batch-cancelled-job',
          text: `UPDATE jobs j SET results_count = r.results_count FROM runs r
                  WHERE r.id = $1 AND j.id = r.job_id AND j.last_run_id = $1`,
          values: [runId],
        });
      await client.query('COMMIT');
      return outcomes.length - written;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * The unchanged outcomes of a batch (docs/api.md §20): those whose copy source is there become
   * copies, counting its records; the URLs of the others go back to the frontier for a full fetch
   * and leave the batch (they are not lost claims). Outcomes whose claim was lost stay, and are
   * counted lost as any other.
   */
  async #planCopies(
    client: PoolClient,
    runId: string,
    outcomes: readonly UrlOutcome[],
  ): Promise<{ outcomes: UrlOutcome[]; copies: PageCopy[] }> {
    const plan = await planUnchanged(client, runId, outcomes.filter(isUnchanged));
    if (plan.back.length > 0) await giveBackUnchanged(client, runId, plan.back);
    const back = new Set(plan.back.map((url) => url.seq));
    const records = new Map(plan.copies.map((copy) => [copy.seq, copy.records]));
    return {
      copies: plan.copies,
      outcomes: outcomes
        .filter((o) => !(isUnchanged(o) && back.has(o.seq)))
        .map((o) => (isUnchanged(o) && records.has(o.seq) ? { ...o, records: records.get(o.seq)! } : o)),
    };
  }

  /**
   * The page events of the pages this batch stored successfully (`seqs`), when the run's job has
   * a Firecrawl webhook asking for `page`: in the batch's transaction, so a batch stored again
   * (its outcomes no longer written) or rolled back makes none, and each page's document and
   * screenshot are there when its event is.
   */
  async #writePageEvents(client: PoolClient, runId: string, seqs: readonly number[]): Promise<void> {
    const jobId = await this.#jobWatchingPages(client, runId);
    if (jobId === null) return;
    const now = new Date();
    await client.query({
      name: 'runs-page-events',
      text: `INSERT INTO events (id, user_id, mode, job_id, kind, data, created_at)
             SELECT $4 || upper(substr(md5(gen_random_uuid()::text), 1, 16)), j.user_id, j.mode, j.id, $5,
                    jsonb_build_object('run_id', $1::text, 'seq', u.seq, 'url', u.url, 'screenshot_url',
                                       CASE WHEN s.seq IS NOT NULL THEN $6::text || u.seq END),
                    $7::timestamp(3)
               FROM run_urls u
               JOIN jobs j ON j.id = $2
               LEFT JOIN run_screenshots s ON s.run_id = u.run_id AND s.seq = u.seq
              WHERE u.run_id = $1 AND u.seq = ANY($3::int[])
              ORDER BY u.seq`,
      values: [
        runId,
        jobId,
        seqs,
        // Ids shaped as newId('evt') makes them: creation time, then 16 random characters.
        newId('evt', now.getTime()).slice(0, 'evt_'.length + 10),
        FIRECRAWL_PAGE_EVENT,
        `${this.#publicBaseUrl}/jobs/${jobId}/runs/${runId}/screenshots/`,
        wallTime(now),
      ],
    });
  }

  /** The run's job id if a Firecrawl webhook of it asks for `page`, else null; asked once per run. */
  async #jobWatchingPages(client: PoolClient, runId: string): Promise<string | null> {
    const known = this.#pagesWatched.get(runId);
    if (known !== undefined) return known;
    const { rows } = await client.query<{ job_id: string }>({
      name: 'runs-pages-watched',
      text: `SELECT r.job_id FROM runs r
              WHERE r.id = $1 AND EXISTS (SELECT 1 FROM webhooks w WHERE w.job_id = r.job_id AND w.active
                                            AND w.style = 'firecrawl' AND $2 = ANY(w.events))`,
      values: [runId, FIRECRAWL_PAGE_EVENT],
    });
    const jobId = rows[0]?.job_id ?? null;
    if (this.#pagesWatched.size >= WATCHED_RUNS_KEPT)
      this.#pagesWatched.delete(this.#pagesWatched.keys().next().value!);
    this.#pagesWatched.set(runId, jobId);
    return jobId;
  }

  /** The screenshots of the URLs whose outcome this batch wrote (under this claim). */
  async #writeScreenshots(
    client: PoolClient,
    runId: string,
    outcomes: readonly UrlOutcome[],
    screenshots: readonly Screenshot[],
  ): Promise<void> {
    const claims = new Map(outcomes.map((o) => [o.seq, o.claims]));
    await client.query({
      name: 'runs-save-screenshots',
      text: `INSERT INTO run_screenshots (run_id, seq, png)
             SELECT $1, s.seq, s.png FROM unnest($2::int[], $3::int[], $4::bytea[]) AS s(seq, claims, png)
               JOIN run_urls u ON u.run_id = $1 AND u.seq = s.seq AND u.claims = s.claims AND u.status = 'success'
             ON CONFLICT (run_id, seq) DO NOTHING`,
      values: [
        runId,
        screenshots.map((shot) => shot.seq),
        screenshots.map((shot) => claims.get(shot.seq) ?? -1),
        screenshots.map((shot) => shot.png),
      ],
    });
  }

  /** The documents of the URLs whose outcome this batch wrote (under this claim). */
  async #writeDocuments(
    client: PoolClient,
    runId: string,
    outcomes: readonly UrlOutcome[],
    documents: readonly StoredDocument[],
  ): Promise<void> {
    const claims = new Map(outcomes.map((o) => [o.seq, o.claims]));
    await client.query({
      name: 'runs-save-documents',
      text: `INSERT INTO run_documents (run_id, seq, url, status_code, bytes, markdown_hash, data)
             SELECT $1, d.seq, d.url, d.status_code, d.bytes, d.markdown_hash, d.data
               FROM unnest($2::int[], $3::int[], $4::text[], $5::smallint[], $6::int[], $7::bytea[], $8::bytea[])
                      AS d(seq, claims, url, status_code, bytes, markdown_hash, data)
               JOIN run_urls u ON u.run_id = $1 AND u.seq = d.seq AND u.claims = d.claims AND u.status = 'success'
             ON CONFLICT (run_id, seq) DO NOTHING`,
      values: [
        runId,
        documents.map((document) => document.seq),
        documents.map((document) => claims.get(document.seq) ?? -1),
        documents.map((document) => document.url),
        documents.map((document) => document.statusCode),
        documents.map((document) => document.bytes),
        documents.map((document) => (document.markdownHash ? Buffer.from(document.markdownHash) : null)),
        documents.map((document) =>
          Buffer.from(document.data.buffer, document.data.byteOffset, document.data.byteLength),
        ),
      ],
    });
  }

  /**
   * The batch's main statement: the outcomes written under their claims (`done`), the records of
   * the pages stored and of those copied, the URLs found (the links of copied pages included,
   * through the same dedupe and limits), the validators of pages fetched, and the run's counts.
   */
  async #writeBatch(
    client: PoolClient,
    runId: string,
    outcomes: readonly UrlOutcome[],
    found: readonly FoundUrl[],
    rows: PageColumns,
    copies: readonly PageCopy[],
  ): Promise<{ written: number; pages: number[] }> {
    const copy = copyColumns(copies);
    const copied = new Set(copy.seqs);
    // Validators of pages fetched and extracted; an unchanged page's are kept by completeCopies.
    const fetched = (o: UrlOutcome) => (copied.has(o.seq) ? undefined : o.validators);
    const { rows: saved } = await client.query<{ written: number; pages: number[] }>({
      name: 'runs-save-batch',
      text: `WITH r AS (
               SELECT r.id, r.job_id, r.status, r.next_seq,
                      ${MAX_PAGES}::bigint + ${ACCEPTED_BEYOND_MAX_PAGES} - r.total_urls AS room,
                      -- A run of a job changed since it started (updated, paused) keeps no validators:
                      -- the job's next run fetches everything (docs/api.md §20).
                      coalesce(r.settings->>'refetch', 'conditional') = 'conditional' AND j.updated_at <= r.started_at
                        AS keeps_validators
                 FROM runs r JOIN jobs j ON j.id = r.job_id WHERE r.id = $1),
             o AS MATERIALIZED (
               SELECT * FROM unnest($2::int[], $3::int[], $4::"UrlStatus"[], $5::int[], $6::int[], $7::int[],
                                    $8::timestamp(3)[], $9::text[], $10::text[], $22::boolean[], $23::text[],
                                    $24::text[], $25::bytea[], $26::bytea[], $27::boolean[], $34::boolean[],
                                    $35::text[])
                 AS o(seq, claims, status, http_status, records, duration_ms, fetched_at, error_code, error_message,
                      unchanged, etag, last_modified, body_hash, settings_hash, links_followed, rendered,
                      render_reason)),
             done AS (
               UPDATE run_urls u SET status = o.status, http_status = o.http_status, records = o.records,
                                     duration_ms = o.duration_ms, fetched_at = o.fetched_at,
                                     error_code = o.error_code, error_message = o.error_message,
                                     unchanged = o.unchanged, rendered = o.rendered,
                                     render_reason = o.render_reason, lease_until = NULL
                 FROM o
                WHERE u.run_id = $1 AND u.seq = o.seq AND u.claims = o.claims AND u.status = 'active'
                RETURNING u.seq, u.kind, u.status, u.error_code, u.error_message, u.url_key, u.depth),
             stored AS (
               INSERT INTO result_pages (run_id, url_index, url, scraped_at, records, id_base, data)
               SELECT $1, t.url_index, t.url, t.scraped_at, t.records, t.id_base, t.data
                 FROM ROWS FROM (unnest($11::int[]), unnest($12::text[]), unnest($13::timestamp(3)[]),
                                 unnest($14::int[]), unnest($15::text[]), jsonb_array_elements($16::jsonb))
                   AS t(url_index, url, scraped_at, records, id_base, data)
                WHERE t.url_index IN (SELECT seq FROM done WHERE status = 'success')
               RETURNING records),
             c AS (
               SELECT c.*, d.url_key, d.depth
                 FROM unnest($28::int[], $29::text[], $30::int[], $31::text[], $32::boolean[])
                        AS c(seq, source_run_id, source_seq, id_base, follow)
                 JOIN done d ON d.seq = c.seq AND d.status = 'success'),
             copied AS (
               INSERT INTO result_pages (run_id, url_index, url, scraped_at, records, id_base, data)
               SELECT $1, c.seq, p.url, $33::timestamp(3), p.records, c.id_base, p.data
                 FROM c JOIN result_pages p ON p.run_id = c.source_run_id AND p.url_index = c.source_seq
               RETURNING records),
             links AS (
               SELECT f.kind, f.url, f.url_key, f.depth, f.parent_seq, 0 AS part, f.ord
                 FROM unnest($17::"UrlKind"[], $18::text[], $19::bytea[], $20::int[], $21::int[])
                        WITH ORDINALITY AS f(kind, url, url_key, depth, parent_seq, ord)
               UNION ALL
               -- A copied page's links, as its last fetch found them (its key as urlKey computes it).
               SELECT 'page', l.url, substring(sha256(convert_to('page ' || l.url, 'UTF8')) FROM 1 FOR 16),
                      c.depth + 1, c.seq, 1 + c.seq, l.ord
                 FROM c JOIN r ON true
                 JOIN page_validators v ON v.job_id = r.job_id AND v.url_key = c.url_key
                 CROSS JOIN LATERAL unnest(v.links) WITH ORDINALITY AS l(url, ord)
                WHERE c.follow),
             found AS (
               SELECT f.*, row_number() OVER (ORDER BY f.part, f.ord) AS n,
                      count(*) FILTER (WHERE f.kind = 'page') OVER (ORDER BY f.part, f.ord) AS nth_page
                 FROM links f
                WHERE f.parent_seq IN (SELECT seq FROM done WHERE status = 'success')),
             accepted AS (
               INSERT INTO run_urls (run_id, seq, kind, url, url_key, depth, parent_seq)
               SELECT $1, r.next_seq + found.n - 1, found.kind, found.url, found.url_key, found.depth, found.parent_seq
                 FROM found, r
                WHERE r.status = 'running' AND (found.kind <> 'page' OR found.nth_page <= r.room)
               ON CONFLICT (run_id, url_key) DO NOTHING
               RETURNING kind),
             page_links AS (
               SELECT f.parent_seq, array_agg(f.url ORDER BY f.ord) AS urls
                 FROM unnest($17::"UrlKind"[], $18::text[], $21::int[]) WITH ORDINALITY AS f(kind, url, parent_seq, ord)
                WHERE f.kind = 'page' AND (SELECT keeps_validators FROM r)
                  AND f.parent_seq IN (SELECT seq FROM o WHERE o.links_followed)
                GROUP BY f.parent_seq),
             validated AS (
               INSERT INTO page_validators AS v (job_id, url_key, etag, last_modified, body_hash, settings_hash,
                                                 source_run_id, source_seq, links)
               SELECT r.job_id, d.url_key, o.etag, o.last_modified, o.body_hash, o.settings_hash, $1, d.seq,
                      CASE WHEN o.links_followed THEN coalesce(l.urls, '{}') END
                 FROM done d JOIN o ON o.seq = d.seq JOIN r ON r.keeps_validators
                 LEFT JOIN page_links l ON l.parent_seq = d.seq
                WHERE d.status = 'success' AND d.kind = 'page' AND o.body_hash IS NOT NULL
               ON CONFLICT (job_id, url_key) DO UPDATE
                  SET etag = excluded.etag, last_modified = excluded.last_modified, body_hash = excluded.body_hash,
                      settings_hash = excluded.settings_hash, source_run_id = excluded.source_run_id,
                      source_seq = excluded.source_seq, links = excluded.links),
             -- The account's pages this month (docs/api.md §18, /team/credit-usage), kept when runs expire.
             usage AS (
               INSERT INTO account_usage AS a (user_id, month, pages, last_page_at)
               SELECT j.user_id, date_trunc('month', now() AT TIME ZONE 'UTC')::date, s.pages, now() AT TIME ZONE 'UTC'
                 FROM r JOIN jobs j ON j.id = r.job_id,
                      (SELECT count(*) AS pages FROM done WHERE kind = 'page' AND status = 'success') s
                WHERE s.pages > 0
               ON CONFLICT (user_id, month)
               DO UPDATE SET pages = a.pages + excluded.pages, last_page_at = excluded.last_page_at),
             lowest AS (
               SELECT seq, error_code, error_message FROM done
                WHERE kind = 'page' AND status = 'failed' ORDER BY seq LIMIT 1)
           UPDATE runs SET
             successful_urls = successful_urls + (SELECT count(*) FROM done WHERE kind = 'page' AND status = 'success'),
             failed_urls = failed_urls + (SELECT count(*) FROM done WHERE kind = 'page' AND status = 'failed'),
             skipped_urls = skipped_urls + (SELECT count(*) FROM done WHERE kind = 'page' AND status = 'skipped'),
             -- A page not fetched (robots.txt) gives its place in max_pages back.
             started_urls = started_urls - (SELECT count(*) FROM done WHERE kind = 'page' AND status = 'skipped'),
             total_urls = total_urls + (SELECT count(*) FROM accepted WHERE kind = 'page'),
             pending_urls = pending_urls + (SELECT count(*) FROM accepted),
             active_urls = active_urls - (SELECT count(*) FROM done),
             results_count = results_count + (SELECT coalesce(sum(records), 0) FROM stored)
                                           + (SELECT coalesce(sum(records), 0) FROM copied),
             next_seq = next_seq + (SELECT count(*) FROM found),
             attempts = 0,
             first_failure = CASE
               WHEN EXISTS (SELECT 1 FROM lowest) AND (first_failure IS NULL
                 OR (first_failure->>'index')::int > (SELECT seq FROM lowest))
               THEN (SELECT jsonb_build_object('index', seq, 'code', error_code, 'message', error_message) FROM lowest)
               ELSE first_failure END
           WHERE id = $1
           RETURNING (SELECT count(*) FROM done)::int AS written,
                     ARRAY(SELECT seq FROM done WHERE kind = 'page' AND status = 'success' ORDER BY seq) AS pages`,
      values: [
        runId,
        outcomes.map((o) => o.seq),
        outcomes.map((o) => o.claims),
        outcomes.map((o) => o.status),
        outcomes.map((o) => o.httpStatus),
        outcomes.map((o) => o.records),
        outcomes.map((o) => o.durationMs),
        outcomes.map((o) => wallTime(o.fetchedAt)),
        outcomes.map((o) => (o.failure ?? o.warning)?.code ?? null),
        outcomes.map((o) => (o.failure ?? o.warning)?.message ?? null),
        rows.urlIndexes,
        rows.urls,
        rows.scrapedAts,
        rows.records,
        rows.idBases,
        rows.data,
        found.map((f) => f.kind),
        found.map((f) => f.url),
        found.map((f) => Buffer.from(f.key)),
        found.map((f) => f.depth),
        found.map((f) => f.parentSeq),
        outcomes.map((o) => copied.has(o.seq)),
        outcomes.map((o) => fetched(o)?.etag ?? null),
        outcomes.map((o) => fetched(o)?.lastModified ?? null),
        outcomes.map((o) => hexBytes(fetched(o)?.bodyHash)),
        outcomes.map((o) => hexBytes(fetched(o)?.settingsHash)),
        outcomes.map((o) => fetched(o)?.linksFollowed ?? false),
        copy.seqs,
        copy.sourceRunIds,
        copy.sourceSeqs,
        copy.idBases,
        copy.follow,
        copy.scrapedAt,
        outcomes.map((o) => o.render?.rendered ?? null),
        outcomes.map((o) => o.render?.reason ?? null),
      ],
    });
    return saved[0] ?? NOTHING_WRITTEN;
  }

  /**
   * Ends a running run and its job in one transaction with the job.completed or job.failed event,
   * from the counts stored by every batch, when its frontier is done: seeded, nothing claimed, and
   * nothing pending within `max_pages` (pending pages past it end skipped with MAX_PAGES). A
   * `forced` failure (the run timed out, or could not go on) ends it whatever its frontier holds:
   * it is the run's error, and the URLs not done fail with it. Returns null if the run is not
   * done, or no longer running (paused, ended elsewhere, deleted).
   */
  async finish(runId: string, forced: RunFailure | null, now = new Date()): Promise<RunEnding | null> {
    return transaction(this.#db.pool, async (client) => {
      const { rows: locked } = await client.query<{ done: boolean }>({
        name: 'run-finish-lock',
        text: `SELECT r.seeded AND NOT EXISTS (SELECT 1 FROM run_urls u WHERE u.run_id = r.id AND u.status = 'active')
                      AND (r.started_urls >= ${MAX_PAGES}
                           OR NOT EXISTS (SELECT 1 FROM run_urls u WHERE u.run_id = r.id AND u.status = 'pending')) AS done
                 FROM runs r WHERE r.id = $1 AND r.status = 'running' FOR UPDATE`,
        values: [runId],
      });
      if (!locked[0] || (forced === null && !locked[0].done)) return null;
      const { rows } = await client.query<RunEnding>({
        name: 'run-finish',
        text: FINISH,
        values: [
          runId,
          forced ? 'failed' : 'skipped',
          forced?.code ?? 'MAX_PAGES',
          forced?.message ?? 'max_pages was reached before this URL was fetched',
          forced !== null,
          wallTime(now),
          newId('evt', now.getTime()),
          `${this.#publicBaseUrl}/jobs/`,
        ],
      });
      return rows[0] ?? null;
    });
  }
}
