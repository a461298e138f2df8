import { pageDiff } from '@scrapejobs/content';
import type { OutboxData, RunHealth } from '@scrapejobs/contracts';
import { type Database, type Mode, transaction } from '@scrapejobs/db';
import type pg from 'pg';
import { outboxEvent } from '../outbox.ts';
import { wallTime } from './frontier.ts';
import { comparePages, type PageCounts, type PageDiffer } from './page-changes.ts';

/** RECORDS_DROP looks at this many of the job's latest successful runs before the run, given at least MIN_HISTORY. */
const HISTORY = 5;
export const MIN_HISTORY = 3;

/** The counts of a run against its base run (docs/api.md §13). */
export interface ChangeCounts {
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
  duplicate_keys: number;
  /** With change_tracking.content: the pages compared. */
  pages?: PageCounts;
}

/** What the analysis of an ended run found. */
export interface Analysis {
  runId: string;
  health: RunHealth;
  /** Null when the job does not track changes. */
  changes: ChangeCounts | null;
  baseRunId: string | null;
}

interface EndedRun {
  id: string;
  job_id: string;
  status: 'success' | 'failed';
  results_count: number;
  successful_urls: number;
  job_name: string;
  user_id: string;
  mode: Mode;
  queries: { name: string }[];
  settings: { queries?: { name: string }[]; extract?: { fields: string[] } | null } | null;
  change_tracking: { key: string[]; content?: boolean } | null;
}

/** A run of the job that ended before, for the base run and the history of counts. */
interface EarlierRun {
  id: string;
  results_count: number;
  query_matches: Record<string, number> | null;
}

/**
 * Each run that ends `success` or `failed` is analysed once, after its end event: its records
 * are compared with its base run when the job tracks changes (stored in `run_changes`, counted on
 * the run, announced by job.changed), and its extraction health is checked (job.degraded). All of
 * it commits in one transaction with the run's row locked (SKIP LOCKED): a process that dies half
 * way leaves the run due, and two processes never analyse the same run.
 */
export class RunAnalysis {
  readonly #db: Database;
  readonly #publicBaseUrl: string;
  readonly #differ: PageDiffer;

  /** `differ` diffs pages' markdown (a worker runs it on its extraction threads). */
  constructor(
    db: Database,
    publicBaseUrl: string,
    differ: PageDiffer = async (before, after) => pageDiff(before, after),
  ) {
    this.#db = db;
    this.#publicBaseUrl = publicBaseUrl.replace(/\/+$/, '');
    this.#differ = differ;
  }

  /** Runs that ended and wait for their analysis, those that ended first first. */
  async due(limit = 10): Promise<string[]> {
    const { rows } = await this.#db.pool.query<{ id: string }>({
      name: 'analysis-due',
      text: 'SELECT id FROM runs WHERE analysis_due ORDER BY finished_at, id LIMIT $1',
      values: [limit],
    });
    return rows.map((r) => r.id);
  }

  /** Analyses a run that is due; null when it is not (done already, or another process has it now). */
  async analyze(runId: string): Promise<Analysis | null> {
    return transaction(this.#db.pool, async (client) => {
      // The comparison of a big run takes longer than a usual statement (the caller's pool allows
      // it); JIT compiles for the planner's estimate of the join (~100 million rows), ~330 ms lost.
      await client.query("SET LOCAL statement_timeout = '10min'");
      await client.query('SET LOCAL jit = off');
      const { rows } = await client.query<EndedRun>({
        name: 'analysis-lock',
        text: `SELECT r.id, r.job_id, r.status, r.results_count, r.successful_urls, r.settings,
                      j.name AS job_name, j.user_id, j.mode, j.queries, j.change_tracking
                 FROM runs r JOIN jobs j ON j.id = r.job_id
                WHERE r.id = $1 AND r.analysis_due
                  -- Not FOR UPDATE: a batch copying unchanged pages from this run holds it FOR KEY
                  -- SHARE (docs/api.md §20), and neither needs to wait for the other.
                  FOR NO KEY UPDATE OF r SKIP LOCKED`,
        values: [runId],
      });
      const run = rows[0];
      if (!run) return null;
      // Extract fields count as queries: a field the model never gave makes the run degraded.
      const names = [
        ...(run.settings?.queries ?? run.queries).map((q) => q.name),
        ...(run.settings?.extract?.fields ?? []),
      ];
      const { previous, history } = await this.#earlier(client, run);
      const matches = await queryMatches(client, run.id, names);
      const health = await this.#health(client, run, names, matches, previous, history);
      const tracking = run.change_tracking;
      const base = tracking ? previous : null;
      const changes = tracking ? await compare(client, run.id, base?.id ?? null, tracking.key, names) : null;
      if (changes && tracking?.content)
        changes.pages = await comparePages(client, run.id, base?.id ?? null, this.#differ);
      const pages = changes?.pages;
      const pagesChanged = pages ? pages.added + pages.removed + pages.changed : 0;
      await client.query({
        name: 'analysis-save',
        text: `UPDATE runs SET analysis_due = false, health = $2, query_matches = $3, changes = $4, base_run_id = $5
                WHERE id = $1`,
        values: [
          run.id,
          JSON.stringify(health),
          JSON.stringify(matches),
          changes && JSON.stringify(changes),
          base?.id ?? null,
        ],
      });
      const at = new Date();
      if (changes && changes.added + changes.removed + changes.changed + pagesChanged > 0)
        await insertEvent(client, run, 'job.changed', at, {
          job_id: run.job_id,
          job_name: run.job_name,
          run_id: run.id,
          base_run_id: base?.id ?? null,
          added: changes.added,
          removed: changes.removed,
          changed: changes.changed,
          changes_url: `${this.#publicBaseUrl}/jobs/${run.job_id}/runs/${run.id}/changes`,
        });
      if (health.status === 'degraded')
        await insertEvent(client, run, 'job.degraded', new Date(at.getTime() + 1), {
          job_id: run.job_id,
          job_name: run.job_name,
          run_id: run.id,
          reasons: health.reasons,
        });
      return { runId: run.id, health, changes, baseRunId: base?.id ?? null };
    });
  }

  /**
   * Takes a due run out of analysis without analysing it (its analysis keeps failing): its changes
   * and health stay null and it no longer holds back its job's retention. False when it is not due
   * (analysed, deleted) or another process has it now.
   */
  async abandon(runId: string): Promise<boolean> {
    const { rowCount } = await this.#db.pool.query({
      name: 'analysis-abandon',
      text: `UPDATE runs SET analysis_due = false
              WHERE id = (SELECT id FROM runs WHERE id = $1 AND analysis_due FOR NO KEY UPDATE SKIP LOCKED)`,
      values: [runId],
    });
    return rowCount === 1;
  }

  /**
   * The job's run that ended `success` or `failed` latest before this one, and the record counts
   * of its last HISTORY successful runs before this one, latest first (however many failed between).
   */
  async #earlier(
    client: pg.PoolClient,
    run: EndedRun,
  ): Promise<{ previous: EarlierRun | null; history: number[] }> {
    const before = (status: string, limit: number) =>
      `SELECT e.id, e.results_count, e.query_matches
         FROM runs r JOIN runs e ON e.job_id = r.job_id
        WHERE r.id = $1 AND e.status IN (${status}) AND NOT e.deleting
          AND (e.finished_at, e.id) < (r.finished_at, r.id)
        ORDER BY e.finished_at DESC, e.id DESC LIMIT ${limit}`;
    const { rows } = await client.query<EarlierRun & { latest: boolean }>({
      name: 'analysis-earlier',
      text: `SELECT *, true AS latest FROM (${before(`'success', 'failed'`, 1)}) p
             UNION ALL
             SELECT *, false FROM (${before(`'success'`, HISTORY)}) h`,
      values: [run.id],
    });
    return {
      previous: rows.find((row) => row.latest) ?? null,
      history: rows.filter((row) => !row.latest).map((row) => row.results_count),
    };
  }

  /**
   * Degraded when a query matched nothing on every fetched page although it matched in the
   * previous ended run (on a first run: matched nothing at all), or when the run has under half
   * the median of the records of the job's last five successful runs (given three).
   */
  async #health(
    client: pg.PoolClient,
    run: EndedRun,
    names: readonly string[],
    matches: Record<string, number>,
    previous: EarlierRun | null,
    history: readonly number[],
  ): Promise<RunHealth> {
    const reasons: RunHealth['reasons'] = [];
    if (run.successful_urls > 0) {
      const before = previous && (previous.query_matches ?? (await queryMatches(client, previous.id, names)));
      for (const name of names) {
        if ((matches[name] ?? 0) > 0) continue;
        if (before && !((before[name] ?? 0) > 0)) continue;
        reasons.push({
          code: 'EMPTY_QUERY',
          query: name,
          message: before
            ? `"${name}" matched nothing on any of the ${run.successful_urls} pages fetched; it matched ${before[name]} times in the previous run`
            : `"${name}" matched nothing on any of the ${run.successful_urls} pages fetched`,
        });
      }
    }
    if (history.length >= MIN_HISTORY) {
      const median = medianOf(history);
      if (run.results_count < median / 2)
        reasons.push({
          code: 'RECORDS_DROP',
          query: null,
          message: `${run.results_count} records, under half the median (${median}) of the last ${history.length} successful runs`,
        });
    }
    return { status: reasons.length > 0 ? 'degraded' : 'ok', reasons };
  }
}

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** For each query name, how many of the run's records have a value for it. */
async function queryMatches(
  client: pg.PoolClient,
  runId: string,
  names: readonly string[],
): Promise<Record<string, number>> {
  if (names.length === 0) return {};
  const counts = names.map((_, i) => `count(data->>$${i + 2})::int`).join(', ');
  const { rows } = await client.query<unknown[]>({
    text: `SELECT ${counts} FROM results WHERE run_id = $1`,
    values: [runId, ...names],
    rowMode: 'array',
  });
  return Object.fromEntries(names.map((name, i) => [name, Number(rows[0]?.[i] ?? 0)]));
}

/**
 * Compares a run's records with its base run's in one statement and stores the changes. An item
 * is identified by the values of the key names (`url` is the page's URL), or by the whole record
 * when the key is empty; within a run the first record of a key (in result order) counts.
 *
 * Keys are sorted and joined by their text (a jsonb of strings and nulls has one text form) in
 * the C collation, and each side's sorted order feeds the merge join unmaterialised: with whole
 * records built only for the changed items, 200,000 records against 200,000 take 0.9 s instead
 * of 2.3 s (bench/README.md).
 */
async function compare(
  client: pg.PoolClient,
  runId: string,
  baseRunId: string | null,
  key: readonly string[],
  names: readonly string[],
): Promise<ChangeCounts> {
  // $1 run, $2 base run, $3 the field order for changed_fields, then the key names.
  const keyExpr =
    key.length === 0
      ? `jsonb_build_object('url', url) || data`
      : `jsonb_build_object(${key
          .map((name, i) => `$${i + 4}::text, ${name === 'url' ? 'to_jsonb(url)' : `data->$${i + 4}::text`}`)
          .join(', ')})`;
  const firsts = (run: string) => `
    SELECT DISTINCT ON (kt) kt, k, seq, url, data, scraped_at
      FROM (SELECT ${keyExpr} AS k, seq, url, data, scraped_at FROM results WHERE run_id = ${run}) s,
           LATERAL (SELECT k::text COLLATE "C" AS kt) t
     ORDER BY kt, seq`;
  const { rows } = await client.query<ChangeCounts>({
    text: `WITH cur AS (${firsts('$1')}),
                base AS (${firsts('$2')}),
                j AS MATERIALIZED (
                  SELECT coalesce(c.k, b.k) AS k, c.seq AS cseq, b.seq AS bseq,
                         c.url AS curl, c.data AS cdata, b.url AS burl, b.data AS bdata,
                         coalesce(c.scraped_at, b.scraped_at) AS scraped_at,
                         CASE WHEN b.kt IS NULL THEN 'added' WHEN c.kt IS NULL THEN 'removed'
                              WHEN c.url = b.url AND c.data = b.data THEN 'unchanged' ELSE 'changed' END AS type
                    FROM cur c FULL JOIN base b ON b.kt = c.kt),
                stored AS (
                  INSERT INTO run_changes (run_id, seq, type, key, data, previous, changed_fields, scraped_at)
                  SELECT $1, (row_number() OVER (ORDER BY cseq NULLS LAST, bseq))::int - 1, type::"ChangeType",
                         k, crec, brec,
                         CASE WHEN type = 'changed' THEN ARRAY(
                           SELECT f FROM (SELECT jsonb_object_keys(crec) UNION SELECT jsonb_object_keys(brec)) AS x(f)
                            WHERE crec->f IS DISTINCT FROM brec->f
                            ORDER BY array_position($3::text[], f) NULLS LAST, f)
                         ELSE '{}' END,
                         scraped_at
                    FROM (SELECT *, CASE WHEN cseq IS NULL THEN NULL ELSE jsonb_build_object('url', curl) || cdata END AS crec,
                                    CASE WHEN bseq IS NULL THEN NULL ELSE jsonb_build_object('url', burl) || bdata END AS brec
                            FROM j WHERE type <> 'unchanged') d)
           SELECT count(*) FILTER (WHERE type = 'added')::int AS added,
                  count(*) FILTER (WHERE type = 'removed')::int AS removed,
                  count(*) FILTER (WHERE type = 'changed')::int AS changed,
                  count(*) FILTER (WHERE type = 'unchanged')::int AS unchanged,
                  ((SELECT count(*) FROM results WHERE run_id = $1) - count(*) FILTER (WHERE cseq IS NOT NULL))::int
                    AS duplicate_keys
             FROM j`,
    values: [runId, baseRunId, ['url', ...names], ...key],
  });
  return rows[0]!;
}

/** An outbox event written on the analysis's own connection, in its transaction. */
async function insertEvent<K extends 'job.changed' | 'job.degraded'>(
  client: pg.PoolClient,
  run: EndedRun,
  kind: K,
  at: Date,
  data: OutboxData[K],
): Promise<void> {
  const event = outboxEvent({ userId: run.user_id, mode: run.mode }, kind, data, {
    jobId: run.job_id,
    at,
  });
  await client.query({
    name: 'analysis-event',
    text: `INSERT INTO events (id, user_id, mode, job_id, kind, data, created_at)
           VALUES ($1, $2, $3::"Mode", $4, $5, $6, $7)`,
    values: [
      event.id,
      event.userId,
      event.mode,
      event.jobId,
      event.kind,
      JSON.stringify(event.data),
      wallTime(at),
    ],
  });
}
