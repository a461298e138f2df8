import { type Database, type JobModel, newId, Prisma, type RunModel } from '@scrapejobs/db';

/** One page's records, serialised as soon as they are extracted: row index = position in `rows`. */
export interface PageRows {
  url: string;
  urlIndex: number;
  scrapedAt: Date;
  /** Each record as JSON text. */
  rows: string[];
}

export interface RunTally {
  successfulUrls: number;
  failedUrls: number;
}

export interface RunFailure {
  code: string;
  message: string;
}

/** The database side of a run: loading it, storing results idempotently, ending it with its event. */
export class RunStore {
  readonly #db: Database;
  readonly #publicBaseUrl: string;

  constructor(db: Database, publicBaseUrl: string) {
    this.#db = db;
    this.#publicBaseUrl = publicBaseUrl.replace(/\/+$/, '');
  }

  /** The run with its job, or null when it is gone or no longer running (cancelled, finished, deleted). */
  async load(runId: string): Promise<{ run: RunModel; job: JobModel } | null> {
    const run = await this.#db.run.findUnique({ where: { id: runId }, include: { job: true } });
    if (run?.status !== 'running') return null;
    const { job, ...rest } = run;
    return { run: rest, job };
  }

  async setTotal(runId: string, totalUrls: number): Promise<void> {
    await this.#db.run.updateMany({ where: { id: runId, status: 'running' }, data: { totalUrls } });
  }

  /**
   * Stores a batch in one statement; (run, url index, row index) is unique, so a run taken over
   * after a crash writes each record once however often its pages are processed. (Prisma's
   * createMany spent about 150 ms of CPU per 1,000 rows here; this spends about 10.)
   */
  async saveResults(runId: string, jobId: string, pages: readonly PageRows[]): Promise<void> {
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
    if (ids.length === 0) return;
    try {
      await this.#db.pool.query(
        `INSERT INTO results (id, run_id, job_id, url, url_index, row_index, data, scraped_at)
         SELECT t.id, $2, $3, t.url, t.url_index, t.row_index, t.data, t.scraped_at
         FROM unnest($1::text[], $4::text[], $5::int[], $6::int[], $7::jsonb[], $8::timestamp(3)[])
           AS t(id, url, url_index, row_index, data, scraped_at)
         ON CONFLICT (run_id, url_index, row_index) DO NOTHING`,
        [ids, runId, jobId, urls, urlIndexes, rowIndexes, data, scrapedAts],
      );
    } catch (err) {
      // The run was deleted with its job meanwhile: nothing left to keep results for.
      if ((err as { code?: string }).code === '23503') return;
      throw err;
    }
  }

  /** URL counts so far, while the run is running. */
  async saveProgress(runId: string, tally: RunTally): Promise<void> {
    await this.#db.run.updateMany({ where: { id: runId, status: 'running' }, data: { ...tally } });
  }

  /**
   * Ends a running run and its job in one transaction with the job.completed or job.failed
   * event. Does nothing if the run is no longer running (paused or deleted meanwhile).
   */
  async finish(
    runId: string,
    tally: RunTally,
    failure: RunFailure | null,
    now = new Date(),
  ): Promise<boolean> {
    return this.#db.$transaction(async (tx) => {
      const run = await tx.run.findUnique({ where: { id: runId }, include: { job: true } });
      if (run?.status !== 'running') return false;
      const resultsCount = await tx.result.count({ where: { runId } });
      const durationMs = now.getTime() - run.startedAt.getTime();
      const status = failure ? 'failed' : 'success';
      const error = failure && {
        ...failure,
        failed_urls: tally.failedUrls,
        successful_urls: tally.successfulUrls,
      };
      const updated = await tx.run.updateMany({
        where: { id: runId, status: 'running' },
        data: {
          status,
          finishedAt: now,
          durationMs,
          resultsCount,
          successfulUrls: tally.successfulUrls,
          failedUrls: tally.failedUrls,
          error: error ?? Prisma.DbNull,
        },
      });
      if (updated.count === 0) return false;
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
        data: {
          id: newId('evt', now.getTime()),
          userId: job.userId,
          mode: job.mode,
          jobId: job.id,
          kind: failure ? 'job.failed' : 'job.completed',
          data,
          createdAt: now,
        },
      });
      return true;
    });
  }

  /** After a pause cancelled the run: record what it did before it stopped. */
  async settleCancelled(runId: string, tally: RunTally): Promise<void> {
    const run = await this.#db.run.findUnique({ where: { id: runId } });
    if (run?.status !== 'cancelled') return;
    const resultsCount = await this.#db.result.count({ where: { runId } });
    await this.#db.run.update({ where: { id: runId }, data: { resultsCount, ...tally } });
    await this.#db.job.updateMany({ where: { id: run.jobId, lastRunId: runId }, data: { resultsCount } });
  }
}
