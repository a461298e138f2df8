import type { Readable } from 'node:stream';
import {
  type ChangeTypeName,
  DOCUMENT_DOWNLOAD_FORMATS,
  type DocumentView,
  type DownloadContent,
  type DownloadFormat,
} from '@scrapejobs/contracts';
import { type Database, isId, Prisma, type RunModel, recordId } from '@scrapejobs/db';
import { MAX_RECORDS_LIMIT } from '@scrapejobs/extraction';
import { AppError, notFound, validationError } from '../errors.ts';
import type { Owner } from '../principal.ts';
import {
  DOCUMENT_DOWNLOAD_SQL,
  decodeDocumentCursor,
  documentRows,
  documentStream,
  documentView,
  encodeDocumentCursor,
  shownFormats,
} from './documents.ts';
import { DOWNLOADS } from './formats/index.ts';
import { arraySource, type RowSource } from './formats/stream.ts';
import { openRowCursor } from './row-cursor.ts';

const ENDED = ['success', 'failed', 'cancelled'] as const;

/** How long after its end a run may still receive rows (a worker finishing a page after a cancel). */
const SETTLING_MS = 15 * 60 * 1000;

/**
 * Sequence numbers are taken before commit, so a page row with a lower `seq` can become visible
 * after one with a higher `seq`; a cursor past the higher one would skip it. So a list ends before
 * the first page row that is not older (by `xmin`) than the oldest transaction that was running when the
 * statement's snapshot was taken and may be writing results here: one that holds a write lock on
 * this database's result_pages table, or that has ended since and so cannot be told apart. Other
 * transactions (other tables, other databases) do not hold pages back.
 * (`age()` compares transaction ids across wraparound; a negative age is a frozen, ancient row.)
 */
const WRITE_HORIZON = Prisma.sql`
  WITH running AS (
    SELECT x::xid AS xid FROM pg_snapshot_xip(pg_current_snapshot()) AS x
  ),
  non_writers AS (
    SELECT t.transactionid FROM pg_locks t
    WHERE t.locktype = 'transactionid' AND t.mode = 'ExclusiveLock'
      AND NOT EXISTS (
        SELECT 1 FROM pg_locks w
        WHERE w.virtualtransaction = t.virtualtransaction AND w.locktype = 'relation'
          AND w.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND w.relation = 'result_pages'::regclass AND w.mode = 'RowExclusiveLock')
  ),
  horizon AS (
    SELECT max(age(r.xid)) AS age FROM running r
    WHERE NOT EXISTS (SELECT 1 FROM non_writers n WHERE n.transactionid = r.xid)
  )`;
const SETTLED = Prisma.sql`((SELECT age FROM horizon) IS NULL
  OR age(xmin) > (SELECT age FROM horizon) OR age(xmin) < 0)`;

export interface StoredResult {
  id: string;
  runId: string;
  url: string;
  data: Record<string, unknown>;
  scrapedAt: Date;
}

export interface ResultPage {
  jobId: string;
  runId: string | null;
  queryNames: string[];
  /** A job with extract: its fields (none without a schema); null for a job of queries. */
  extracted: string[] | null;
  items: StoredResult[];
  nextCursor: string | null;
}

export interface DocumentPage {
  jobId: string;
  runId: string;
  items: DocumentView[];
  /** Each document's `seq` in its run's frontier, in the order of `items`. */
  seqs: number[];
  nextCursor: string | null;
}

export interface Download {
  filename: string;
  contentType: string;
  body: Readable;
}

/** What a job's records hold: query names, or extract fields (null for a job of queries). */
interface JobFields {
  id: string;
  queryNames: string[];
  extracted: string[] | null;
  tracked: boolean;
}

/** Fields of a record without a schema at most (the llm package's MAX_FIELDS). */
const MAX_FIELDS = 100;

/** The next record to read: row `row` of the page row `seq` (pages after it are read from row 0). */
interface Position {
  runId: string;
  seq: bigint;
  row: number;
}

// A cursor names its run too, so following it never drifts to a run that ended in the meantime.
// Its row is at most a page's length, and no page holds more records than extraction may give.
const encodeCursor = (p: Position) => Buffer.from(`${p.runId}:${p.seq}:${p.row}`).toString('base64url');
function decodeCursor(cursor: string): Position {
  const [runId = '', seq = '', row = ''] = Buffer.from(cursor, 'base64url').toString().split(':');
  if (
    !isId('run', runId) ||
    !/^\d{1,18}$/.test(seq) ||
    !/^\d{1,5}$/.test(row) ||
    Number(row) > MAX_RECORDS_LIMIT
  )
    throw validationError({ cursor: 'is not a cursor returned by this endpoint' });
  return { runId, seq: BigInt(seq), row: Number(row) };
}

/** A row of result_pages as a list reads it. */
interface StoredPage {
  seq: bigint;
  url: string;
  scrapedAt: Date;
  idBase: string;
  ids: string[] | null;
  data: Record<string, unknown>[];
  settled: boolean;
}

export interface ResultsOptions {
  /**
   * Downloads streaming at once, each holding a pool connection for its whole length; more are
   * answered 503, so slow downloads can never take every connection the API needs. Default: half
   * the pool.
   */
  maxDownloads?: number;
  now?: () => Date;
}

/** Reading the results of a job's runs: pages of records, and whole runs as files. */
export class ResultsService {
  readonly #db: Database;
  readonly #now: () => Date;
  readonly #maxDownloads: number;
  #downloads = 0;

  constructor(db: Database, opts: ResultsOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? (() => new Date());
    this.#maxDownloads = opts.maxDownloads ?? Math.max(1, Math.floor((db.pool.options.max ?? 10) / 2));
  }

  /**
   * A page of records in insertion order (`seq`), exactly once each even while the run is being
   * written: see WRITE_HORIZON. A page that stops early at such a row still has a next_cursor.
   */
  async list(
    owner: Owner,
    jobId: string,
    opts: { runId?: string | undefined; limit: number; cursor?: string | undefined },
  ): Promise<ResultPage> {
    const job = await this.#job(owner, jobId);
    const position = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor);
    if (position && opts.runId !== undefined && position.runId !== opts.runId)
      throw validationError({ cursor: 'belongs to another run than run_id' });
    let run: RunModel | null;
    // With run_id, a run that is gone is a 404 whatever the cursor; without, the cursor is wrong.
    if (position && opts.runId === undefined) {
      run = await this.#findRun(job.id, position.runId);
      if (!run) throw validationError({ cursor: 'is not a cursor returned by this endpoint' });
    } else run = await this.#pickRun(job.id, opts.runId);
    if (!run)
      return {
        jobId: job.id,
        runId: null,
        queryNames: job.queryNames,
        extracted: job.extracted,
        items: [],
        nextCursor: null,
      };

    const settling = !run.finishedAt || this.#now().getTime() - run.finishedAt.getTime() < SETTLING_MS;
    const from = position ?? { runId: run.id, seq: 0n, row: 0 };
    // The pages holding the next limit + 1 records (each page has one at least, and the cursor's
    // page may have none left): only those are read whole, so whether there are more is known
    // without reading further.
    const wanted = opts.limit + 1 + from.row;
    const pages = Prisma.sql`SELECT seq, url, scraped_at, id_base, ids, data, records, xmin,
        sum(records) OVER (ORDER BY seq) - records AS before
      FROM result_pages WHERE run_id = ${run.id} AND seq >= ${from.seq} ORDER BY seq LIMIT ${opts.limit + 2}`;
    const columns = Prisma.sql`seq, url, scraped_at AS "scrapedAt", id_base AS "idBase", ids, data`;
    const rows = await this.#db.$queryRaw<StoredPage[]>(
      Prisma.sql`${settling ? WRITE_HORIZON : Prisma.empty}
        SELECT ${columns}, ${settling ? SETTLED : Prisma.sql`true`} AS settled
          FROM (${pages}) p WHERE before < ${wanted} ORDER BY seq`,
    );
    const items: StoredResult[] = [];
    let next = from;
    let more = false;
    for (const page of rows) {
      if (!page.settled) {
        more = true;
        break;
      }
      let row = page.seq === from.seq ? from.row : 0;
      for (; row < page.data.length && items.length < opts.limit; row++) {
        items.push({
          id: page.ids?.[row] ?? recordId(page.idBase, row),
          runId: run.id,
          url: page.url,
          data: page.data[row] ?? {},
          scrapedAt: page.scrapedAt,
        });
        next = { runId: run.id, seq: page.seq, row: row + 1 };
      }
      if (row < page.data.length) {
        more = true;
        break;
      }
    }
    return {
      jobId: job.id,
      runId: run.id,
      queryNames: job.queryNames,
      extracted: job.extracted,
      items,
      nextCursor: more ? encodeCursor(next) : null,
    };
  }

  /** A page of a run's documents in its URL order (docs/api.md §17), `url` the one asked for. */
  async listDocuments(
    owner: Owner,
    jobId: string,
    runId: string,
    opts: { url?: string | undefined; limit: number; cursor?: string | undefined },
  ): Promise<DocumentPage> {
    const job = await this.#job(owner, jobId);
    const run = await this.#runOf(job.id, runId);
    const after = opts.cursor === undefined ? -1 : decodeDocumentCursor(opts.cursor, run.id);
    const rows = await this.#db.$queryRaw<
      { seq: number; url: string; statusCode: number | null; data: Uint8Array | null }[]
    >(documentRows(run.id, after, opts.limit, opts.url));
    const shown = shownFormats(run.settings);
    const items: DocumentView[] = [];
    const seqs: number[] = [];
    for (const row of rows) {
      if (row.data === null || items.length === opts.limit) break;
      items.push(documentView(row.url, row.statusCode, row.data, shown));
      seqs.push(row.seq);
    }
    const more = rows.length > items.length;
    const last = seqs.at(-1) ?? after;
    return {
      jobId: job.id,
      runId: run.id,
      items,
      seqs,
      nextCursor: more ? encodeDocumentCursor(run.id, last) : null,
    };
  }

  /**
   * A run as a file, streamed from a database cursor (the job and run are checked, and the
   * cursor opened, before the first byte, so those failures still get an error response).
   */
  async download(
    owner: Owner,
    jobId: string,
    opts: {
      format: DownloadFormat;
      content?: DownloadContent;
      runId?: string | undefined;
      changes?: ChangeTypeName[] | undefined;
    },
  ): Promise<Download> {
    const job = await this.#job(owner, jobId);
    const run = await this.#pickRun(job.id, opts.runId);
    const format = DOWNLOADS[opts.format];
    const { contentType } = format;
    if (opts.content === 'documents') {
      if (!DOCUMENT_DOWNLOAD_FORMATS.includes(opts.format))
        throw validationError({
          format: `must be ${DOCUMENT_DOWNLOAD_FORMATS.join(' or ')} with content=documents`,
        });
      const filename = `${job.id}-${run?.id ?? 'none'}-documents.${format.ext}`;
      const source = run
        ? await this.#openCursor({ sql: DOCUMENT_DOWNLOAD_SQL, names: [] }, [run.id])
        : arraySource([]);
      return {
        filename,
        contentType,
        body: documentStream(opts.format, source, shownFormats(run?.settings)),
      };
    }
    const filename = `${job.id}-${run?.id ?? 'none'}.${format.ext}`;
    const names = run ? await this.#columns(job, run.id) : job.queryNames;
    if (opts.changes) {
      // Only the items of these kinds, with a first column `change` (docs/api.md §13).
      if (!job.tracked) throw notFound('Change tracking of this job');
      if (run && run.changes === null) throw notFound('Comparison of this run');
      const source = run
        ? await this.#openCursor(changeRows(names), [run.id, opts.changes])
        : arraySource([]);
      return { filename, contentType, body: format.stream(names, source, ['change']) };
    }
    const source = run ? await this.#openCursor(resultRows(names), [run.id]) : arraySource([]);
    return { filename, contentType, body: format.stream(names, source) };
  }

  /**
   * A download's field columns: the query names, or the extract fields; without a schema, the
   * keys the run's records have, in the order they first appear (at most MAX_FIELDS).
   */
  async #columns(job: JobFields, runId: string): Promise<string[]> {
    if (job.extracted === null || job.extracted.length > 0) return job.extracted ?? job.queryNames;
    const { rows } = await this.#db.pool.query<{ key: string }>({
      name: 'results-extracted-keys',
      text: `SELECT k.key FROM result_pages p
               CROSS JOIN LATERAL jsonb_array_elements(p.data) WITH ORDINALITY AS e(d, ord)
               CROSS JOIN LATERAL jsonb_object_keys(e.d) AS k(key)
              WHERE p.run_id = $1 GROUP BY k.key ORDER BY min(p.seq), k.key LIMIT $2`,
      values: [runId, MAX_FIELDS],
    });
    return rows.map((row) => row.key);
  }

  /** A cursor over download rows, counted against `maxDownloads`. */
  async #openCursor(
    { sql, names }: { sql: string; names: readonly string[] },
    values: unknown[],
  ): Promise<RowSource> {
    if (this.#downloads >= this.#maxDownloads)
      throw new AppError(503, 'Too many downloads are in progress; try again shortly.');
    this.#downloads++;
    try {
      const cursor = await openRowCursor(this.#db.pool, sql, [...values, ...names]);
      let closed = false;
      return {
        next: (max) => cursor.next(max),
        close: async (err) => {
          if (!closed) this.#downloads--;
          closed = true;
          await cursor.close(err);
        },
      };
    } catch (err) {
      this.#downloads--;
      throw err;
    }
  }

  async #job(owner: Owner, id: string): Promise<JobFields> {
    const job = isId('job', id)
      ? await this.#db.job.findFirst({
          where: { id, userId: owner.userId, mode: owner.mode },
          select: { id: true, queries: true, changeTracking: true, extract: true },
        })
      : null;
    if (!job) throw notFound('Job');
    const queries = (job.queries ?? []) as { name: string }[];
    const extract = job.extract as { fields: string[] } | null;
    return {
      id: job.id,
      queryNames: queries.map((q) => q.name),
      extracted: extract?.fields ?? null,
      tracked: job.changeTracking !== null,
    };
  }

  /** The run asked for (404 unless it is a run of this job), else the latest run that has ended. */
  async #pickRun(jobId: string, runId: string | undefined): Promise<RunModel | null> {
    if (runId !== undefined) return this.#runOf(jobId, runId);
    return this.#db.run.findFirst({
      where: { jobId, status: { in: [...ENDED] }, deleting: false },
      orderBy: { id: 'desc' },
    });
  }

  async #runOf(jobId: string, runId: string): Promise<RunModel> {
    const run = await this.#findRun(jobId, runId);
    if (!run) throw notFound('Run');
    return run;
  }

  #findRun(jobId: string, runId: string): Promise<RunModel | null> {
    return isId('run', runId)
      ? this.#db.run.findFirst({ where: { id: runId, jobId, deleting: false } })
      : Promise.resolve(null);
  }
}

const SCRAPED_AT = `to_char(scraped_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * A run's records as download rows: url, scraped_at, then each query's value ($2… the names).
 * Pages come in order from the primary key and each page's records are sorted on their own (an
 * incremental sort), so the rows stream without sorting the run.
 */
function resultRows(names: readonly string[]): { sql: string; names: readonly string[] } {
  const fields = names.map((_, i) => `, e.data->>$${i + 2}::text`).join('');
  return {
    sql: `SELECT p.url, ${SCRAPED_AT}${fields}
            FROM result_pages p CROSS JOIN LATERAL jsonb_array_elements(p.data) WITH ORDINALITY AS e(data, ord)
           WHERE p.run_id = $1 ORDER BY p.seq, e.ord`,
    names,
  };
}

/**
 * A run's changes of the kinds in $2 as download rows: the change, then the record as in
 * `resultRows` (a removed item's values are the base run's).
 */
function changeRows(names: readonly string[]): { sql: string; names: readonly string[] } {
  const fields = names.map((_, i) => `, coalesce(data, previous)->>$${i + 3}::text`).join('');
  return {
    sql: `SELECT type::text, coalesce(data, previous)->>'url', ${SCRAPED_AT}${fields}
            FROM run_changes WHERE run_id = $1 AND kind = 'record' AND type::text = ANY($2::text[]) ORDER BY seq`,
    names,
  };
}
