import {
  type ProxyConfig,
  proxyConfigSchema,
  type Query,
  querySchema,
  type RenderConfig,
  renderConfigSchema,
} from '@scrapejobs/contracts';
import { type Database, type JobModel, newId, Prisma, type RunModel } from '@scrapejobs/db';
import { z } from 'zod';
import { type RunFailure, toRun } from '../model.ts';
import { outboxEvent } from '../outbox.ts';

/** One page's records, serialised as soon as they are extracted: row index = position in `rows`. */
export interface PageRows {
  url: string;
  urlIndex: number;
  scrapedAt: Date;
  /** Each record as JSON text. */
  rows: string[];
}

/** How one URL ended: its records are in a `PageRows`, or it failed. */
export interface UrlOutcome {
  index: number;
  failure: RunFailure | null;
}

/** What a run does, as its job said when the run started (docs/api.md §3.6: changes apply from the next run). */
export interface RunSettings {
  source: string;
  queries: Query[];
  rateLimit: number;
  renderConfig: RenderConfig | null;
  proxyConfig: ProxyConfig | null;
}

const settingsSchema = z
  .object({
    source: z.string(),
    queries: z.array(querySchema),
    rate_limit: z.number(),
    render_config: renderConfigSchema.nullable(),
    proxy_config: proxyConfigSchema.nullable(),
  })
  .transform(
    (s): RunSettings => ({
      source: s.source,
      queries: s.queries,
      rateLimit: s.rate_limit,
      renderConfig: s.render_config,
      proxyConfig: s.proxy_config,
    }),
  );

/** A run's settings; a run started before they were kept takes its job's as they are now. */
const settingsOf = (run: RunModel, job: JobModel): RunSettings =>
  settingsSchema.parse(
    run.settings ?? {
      source: job.source,
      queries: job.queries,
      rate_limit: job.rateLimit,
      render_config: job.renderConfig,
      proxy_config: job.proxyConfig,
    },
  );

/** PostgreSQL refused a value (SQLSTATE class 22, data exception, or 54, program limit). */
const isDataError = (err: unknown): boolean => /^(22|54)/.test(String((err as { code?: unknown }).code));

/** How a run ended, from what is stored: every worker that worked on it counted. */
export interface RunEnding {
  status: 'success' | 'failed';
  successfulUrls: number;
  failedUrls: number;
}

/** The database side of a run: loading it, storing results idempotently, ending it with its event. */
export class RunStore {
  readonly #db: Database;
  readonly #publicBaseUrl: string;

  constructor(db: Database, publicBaseUrl: string) {
    this.#db = db;
    this.#publicBaseUrl = publicBaseUrl.replace(/\/+$/, '');
  }

  /**
   * The run with its job and the settings it runs with, or null when it is gone or no longer
   * running (cancelled, finished, deleted).
   */
  async load(runId: string): Promise<{ run: RunModel; job: JobModel; settings: RunSettings } | null> {
    const run = await this.#db.run.findUnique({ where: { id: runId }, include: { job: true } });
    if (run?.status !== 'running') return null;
    const { job, ...rest } = run;
    return { run: rest, job, settings: settingsOf(rest, job) };
  }

  async setTotal(runId: string, totalUrls: number): Promise<void> {
    await this.#db.run.updateMany({ where: { id: runId, status: 'running' }, data: { totalUrls } });
  }

  /**
   * Stores a batch in one statement: the pages' records, and the URLs' outcomes in the run's
   * counts and `done_urls`, so a worker that takes the run over resumes after them. (run, URL
   * index, row index) is unique and a URL already done is not counted again, so two workers
   * that both processed a page (one of them held up past its lock) store it once. A run paused
   * meanwhile still counts the pages it finished; an ended one is left as it is. (Prisma's
   * createMany spent about 150 ms of CPU per 1,000 rows here; this spends about 10.)
   *
   * A value PostgreSQL refuses fails only its own page: the batch is stored again page by page,
   * and a page still refused is stored as a failed URL (EXTRACTION_ERROR) without its records.
   */
  async saveBatch(
    runId: string,
    jobId: string,
    pages: readonly PageRows[],
    outcomes: readonly UrlOutcome[],
  ): Promise<void> {
    try {
      await this.#insertBatch(runId, jobId, pages, outcomes);
    } catch (err) {
      if (!isDataError(err)) throw err;
      const pageOf = new Map(pages.map((page) => [page.urlIndex, page]));
      for (const outcome of outcomes) {
        const page = pageOf.get(outcome.index);
        try {
          await this.#insertBatch(runId, jobId, page ? [page] : [], [outcome]);
        } catch (pageErr) {
          if (!isDataError(pageErr)) throw pageErr;
          const message = `${page?.url ?? 'a page'}: its records could not be stored: ${(pageErr as Error).message}`;
          await this.#insertBatch(
            runId,
            jobId,
            [],
            [{ index: outcome.index, failure: { code: 'EXTRACTION_ERROR', message } }],
          );
        }
      }
    }
  }

  async #insertBatch(
    runId: string,
    jobId: string,
    pages: readonly PageRows[],
    outcomes: readonly UrlOutcome[],
  ): Promise<void> {
    const ids: string[] = [];
    const urls: string[] = [];
    const urlIndexes: number[] = [];
    const rowIndexes: number[] = [];
    const data: string[] = [];
    const scrapedAts: string[] = [];
    for (const page of pages) {
      const time = page.scrapedAt.getTime();
      // timestamp(3) holds UTC wall time, as Prisma writes it.
      const scrapedAt = page.scrapedAt.toISOString().replace('Z', '');
      page.rows.forEach((json, rowIndex) => {
        ids.push(newId('res', time));
        urls.push(page.url);
        urlIndexes.push(page.urlIndex);
        rowIndexes.push(rowIndex);
        data.push(json);
        scrapedAts.push(scrapedAt);
      });
    }
    if (ids.length === 0 && outcomes.length === 0) return;
    let firstFailure: UrlOutcome | undefined;
    for (const o of outcomes)
      if (o.failure && (!firstFailure || o.index < firstFailure.index)) firstFailure = o;
    try {
      await this.#db.pool.query({
        name: 'runs-save-batch',
        text: `WITH stored AS (
                 INSERT INTO results (id, run_id, job_id, url, url_index, row_index, data, scraped_at)
                 SELECT t.id, $2, $3, t.url, t.url_index, t.row_index, t.data, t.scraped_at
                 FROM unnest($1::text[], $4::text[], $5::int[], $6::int[], $7::jsonb[], $8::timestamp(3)[])
                   AS t(id, url, url_index, row_index, data, scraped_at)
                 ON CONFLICT (run_id, url_index, row_index) DO NOTHING)
               UPDATE runs r SET
                 (done_urls, successful_urls, failed_urls) = (
                   SELECT r.done_urls || coalesce(array_agg(o.i), '{}'),
                          r.successful_urls + count(*) FILTER (WHERE o.ok),
                          r.failed_urls + count(*) FILTER (WHERE NOT o.ok)
                   FROM unnest($9::int[], $10::bool[]) AS o(i, ok)
                   WHERE o.i <> ALL(r.done_urls)),
                 first_failure = CASE
                   WHEN $11::jsonb IS NOT NULL AND (r.first_failure IS NULL
                     OR (r.first_failure->>'index')::int > ($11::jsonb->>'index')::int) THEN $11::jsonb
                   ELSE r.first_failure END
               WHERE r.id = $2 AND r.status IN ('running', 'cancelled')`,
        values: [
          ids,
          runId,
          jobId,
          urls,
          urlIndexes,
          rowIndexes,
          data,
          scrapedAts,
          outcomes.map((o) => o.index),
          outcomes.map((o) => o.failure === null),
          firstFailure ? JSON.stringify({ index: firstFailure.index, ...firstFailure.failure }) : null,
        ],
      });
    } catch (err) {
      // The run was deleted with its job meanwhile: nothing left to keep results for.
      if ((err as { code?: string }).code === '23503') return;
      throw err;
    }
  }

  /**
   * Ends a running run and its job in one transaction with the job.completed or job.failed
   * event, from the counts stored by every batch. A `forced` failure (the run timed out, or could
   * not go on) is the run's error, and URLs never done count as failed. Returns null if the run is
   * no longer running (paused or deleted meanwhile).
   */
  async finish(runId: string, forced: RunFailure | null, now = new Date()): Promise<RunEnding | null> {
    return this.#db.$transaction(async (tx) => {
      const run = await tx.run.findUnique({ where: { id: runId }, include: { job: true } });
      if (run?.status !== 'running') return null;
      const resultsCount = await tx.result.count({ where: { runId } });
      const durationMs = now.getTime() - run.startedAt.getTime();
      const successfulUrls = run.successfulUrls;
      const failedUrls = forced === null ? run.failedUrls : run.totalUrls - successfulUrls;
      const first = toRun(run).firstFailure;
      const failure: RunFailure | null =
        forced !== null
          ? forced
          : failedUrls > 0
            ? {
                code: first?.code ?? 'NETWORK_ERROR',
                message: `${failedUrls} of ${run.totalUrls} URLs failed; first: ${first?.message ?? 'unknown'}`,
              }
            : null;
      const status = failure ? 'failed' : 'success';
      const error = failure && { ...failure, failed_urls: failedUrls, successful_urls: successfulUrls };
      const updated = await tx.run.updateMany({
        where: { id: runId, status: 'running' },
        data: {
          status,
          finishedAt: now,
          durationMs,
          resultsCount,
          successfulUrls,
          failedUrls,
          error: error ?? Prisma.DbNull,
        },
      });
      if (updated.count === 0) return null;
      const job = run.job;
      await tx.job.updateMany({
        where: { id: job.id, status: 'running', lastRunId: runId },
        data: { status, resultsCount, updatedAt: now },
      });
      const data = failure
        ? { job_id: job.id, job_name: job.name, run_id: runId, status, error }
        : {
            job_id: job.id,
            job_name: job.name,
            run_id: runId,
            status,
            results_count: resultsCount,
            duration_ms: durationMs,
            download_url: `${this.#publicBaseUrl}/jobs/${job.id}/download`,
          };
      await tx.event.create({
        data: outboxEvent(
          { userId: job.userId, mode: job.mode },
          failure ? 'job.failed' : 'job.completed',
          data,
          { jobId: job.id, at: now },
        ),
      });
      return { status, successfulUrls, failedUrls };
    });
  }

  /** The user of each of these runs (those that still exist). */
  async ownersOf(runIds: readonly string[]): Promise<Map<string, string>> {
    if (runIds.length === 0) return new Map();
    const rows = await this.#db.run.findMany({
      where: { id: { in: [...runIds] } },
      select: { id: true, job: { select: { userId: true } } },
    });
    return new Map(rows.map((row) => [row.id, row.job.userId]));
  }

  /** After a pause cancelled the run: record how many records it kept. */
  async settleCancelled(runId: string): Promise<void> {
    const run = await this.#db.run.findUnique({ where: { id: runId } });
    if (run?.status !== 'cancelled') return;
    const resultsCount = await this.#db.result.count({ where: { runId } });
    await this.#db.run.update({ where: { id: runId }, data: { resultsCount } });
    await this.#db.job.updateMany({ where: { id: run.jobId, lastRunId: runId }, data: { resultsCount } });
  }
}
