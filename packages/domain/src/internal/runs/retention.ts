import type { Database } from '@scrapejobs/db';

/** The tables holding a run's rows, deleted batch by batch before the run's own row. */
const TABLES = [
  { table: 'result_pages', key: 'seq' },
  { table: 'run_urls', key: 'seq' },
  { table: 'run_changes', key: 'seq' },
  { table: 'run_screenshots', key: 'seq' },
  { table: 'run_documents', key: 'seq' },
  { table: 'tracked_pages', key: 'seq' },
  { table: 'run_robots', key: 'origin' },
] as const;

export type RetentionTable = (typeof TABLES)[number]['table'] | 'runs';

/** What a sweep deleted: rows and bytes (as stored, before compression) by table, and runs. */
export interface SweepResult {
  runs: number;
  /** Expired jobs of the Firecrawl-compatible API deleted, once their runs were. */
  jobs: number;
  deleted: { table: RetentionTable; rows: number; bytes: number }[];
}

export interface RetentionOptions {
  /** RESULTS_RETENTION_DAYS: runs of jobs without `retention_days` that ended longer ago go; 0 keeps them. */
  defaultDays: number;
  /** Rows per DELETE statement: each is a short transaction of its own. */
  batchSize?: number;
  /** Runs marked for deletion per sweep. */
  maxRuns?: number;
}

/**
 * Deletes the runs whose retention passed (docs/api.md §15): ended longer ago than the job's
 * `retention_days` (or RESULTS_RETENTION_DAYS), except each job's latest ended run, the base run
 * of a tracked job's latest comparison, and the runs of a job with a run still to be analysed.
 *
 * A run is first marked `deleting` in one short statement: from then on every read treats it as
 * gone (404). Its results, URLs, changes, screenshots, documents and robots rows are then deleted in batches,
 * each its own short statement, and the run's row last. A sweep that dies half way leaves marked
 * runs, never a half-deleted visible one; the next sweep (any process) finishes them.
 */
export class RetentionSweep {
  readonly #db: Database;
  readonly #defaultDays: number;
  readonly #batchSize: number;
  readonly #maxRuns: number;

  constructor(db: Database, options: RetentionOptions) {
    this.#db = db;
    this.#defaultDays = options.defaultDays;
    this.#batchSize = options.batchSize ?? 5_000;
    this.#maxRuns = options.maxRuns ?? 100;
  }

  async sweep(): Promise<SweepResult> {
    await this.#mark();
    const totals = new Map<RetentionTable, { rows: number; bytes: number }>();
    const add = (table: RetentionTable, rows: number, bytes: number) => {
      const t = totals.get(table) ?? { rows: 0, bytes: 0 };
      totals.set(table, { rows: t.rows + rows, bytes: t.bytes + bytes });
    };
    let runs = 0;
    for (const runId of await this.#marked()) {
      for (const { table, key } of TABLES) {
        for (;;) {
          const { rows, bytes } = await this.#deleteBatch(table, key, runId);
          add(table, rows, bytes);
          if (rows < this.#batchSize) break;
        }
      }
      const { rows, bytes } = await this.#deleteRun(runId);
      add('runs', rows, bytes);
      runs += rows;
    }
    const jobs = await this.#deleteExpiredJobs();
    return { runs, jobs, deleted: [...totals].map(([table, t]) => ({ table, ...t })) };
  }

  /** Marks the runs past their retention, a bounded number at a time. */
  async #mark(): Promise<void> {
    await this.#db.pool.query({
      name: 'retention-mark',
      text: `WITH kept AS (
               SELECT DISTINCT ON (job_id) id FROM runs
                WHERE status IN ('success', 'failed', 'cancelled') AND NOT deleting
                ORDER BY job_id, finished_at DESC NULLS LAST, id DESC),
             bases AS (
               SELECT DISTINCT ON (job_id) base_run_id AS id FROM runs
                WHERE changes IS NOT NULL AND NOT deleting
                ORDER BY job_id, finished_at DESC NULLS LAST, id DESC),
             due AS (
               SELECT r.id FROM runs r JOIN jobs j ON j.id = r.job_id
                WHERE r.status IN ('success', 'failed', 'cancelled') AND NOT r.deleting
                  AND coalesce(j.retention_days, $1) > 0
                  AND r.finished_at < (now() AT TIME ZONE 'UTC') - make_interval(days => coalesce(j.retention_days, $1))
                  AND r.id NOT IN (SELECT id FROM kept)
                  AND r.id NOT IN (SELECT id FROM bases WHERE id IS NOT NULL)
                  AND NOT EXISTS (SELECT 1 FROM runs d WHERE d.job_id = r.job_id AND d.analysis_due)
                LIMIT $2
                  FOR UPDATE OF r SKIP LOCKED)
           UPDATE runs SET deleting = true FROM due WHERE runs.id = due.id`,
      values: [this.#defaultDays, this.#maxRuns],
    });
    // Jobs of the Firecrawl-compatible API expire whole (docs/api.md §18): every ended run goes.
    await this.#db.pool.query({
      name: 'retention-mark-expired',
      text: `UPDATE runs SET deleting = true WHERE id IN (
               SELECT r.id FROM jobs j JOIN runs r ON r.job_id = j.id
                WHERE j.expires_at < (now() AT TIME ZONE 'UTC') AND r.status <> 'running'
                  AND NOT r.deleting AND NOT r.analysis_due
                LIMIT $1
                  FOR UPDATE OF r SKIP LOCKED)`,
      values: [this.#maxRuns],
    });
  }

  /** Deletes expired jobs whose runs are all gone; how many. */
  async #deleteExpiredJobs(): Promise<number> {
    const { rowCount } = await this.#db.pool.query({
      name: 'retention-delete-expired-jobs',
      text: `DELETE FROM jobs WHERE id IN (
               SELECT j.id FROM jobs j
                WHERE j.expires_at < (now() AT TIME ZONE 'UTC')
                  AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id)
                LIMIT $1
                  FOR UPDATE SKIP LOCKED)`,
      values: [this.#batchSize],
    });
    return rowCount ?? 0;
  }

  async #marked(): Promise<string[]> {
    const { rows } = await this.#db.pool.query<{ id: string }>({
      name: 'retention-marked',
      text: 'SELECT id FROM runs WHERE deleting ORDER BY id LIMIT $1',
      values: [this.#maxRuns],
    });
    return rows.map((r) => r.id);
  }

  async #deleteBatch(table: string, key: string, runId: string): Promise<{ rows: number; bytes: number }> {
    const { rows } = await this.#db.pool.query<{ rows: number; bytes: string | null }>({
      name: `retention-delete-${table}`,
      text: `WITH gone AS (
               DELETE FROM ${table} WHERE run_id = $1 AND ${key} IN (
                 SELECT ${key} FROM ${table} WHERE run_id = $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
               RETURNING pg_column_size(${table}.*) AS size)
           SELECT count(*)::int AS rows, sum(size)::text AS bytes FROM gone`,
      values: [runId, this.#batchSize],
    });
    return { rows: rows[0]?.rows ?? 0, bytes: Number(rows[0]?.bytes ?? 0) };
  }

  async #deleteRun(runId: string): Promise<{ rows: number; bytes: number }> {
    const { rows } = await this.#db.pool.query<{ size: number }>({
      name: 'retention-delete-run',
      text: 'DELETE FROM runs WHERE id = $1 AND deleting RETURNING pg_column_size(runs.*) AS size',
      values: [runId],
    });
    return { rows: rows.length, bytes: rows[0]?.size ?? 0 };
  }
}
