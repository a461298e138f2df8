import { setTimeout as sleep } from 'node:timers/promises';
import { type CreateJobInput, type FormatName, formatsSchema } from '@scrapejobs/contracts';
import { type Database, isId } from '@scrapejobs/db';
import type { Resolve } from '@scrapejobs/outbound';
import type { RunEnds } from '@scrapejobs/queues';
import { notFound } from '../errors.ts';
import type { Run } from '../model.ts';
import { toRun } from '../model.ts';
import type { Owner } from '../principal.ts';
import type { DocumentPage, ResultsService } from '../results/service.ts';
import type { PageTracking } from '../runs/tracked-pages.ts';
import { checkJobWebhook, type JobWebhook, jobWebhookRow } from '../webhooks/firecrawl.ts';
import type { JobsService } from './service.ts';

export interface CompatOptions {
  /** FIRECRAWL_RETENTION_HOURS: a job made through the compatible API expires this long after its creation. */
  retentionHours: number;
  /** PUBLIC_BASE_URL: the links to screenshots. */
  publicBaseUrl: string;
  /** ALLOW_PRIVATE_NETWORK_TARGETS: a crawl's webhook may target loopback and private addresses. */
  allowPrivateTargets: boolean;
  /** Name resolution for the webhook target check; tests pass a fake one. */
  resolve?: Resolve;
  now?: () => Date;
  /** The runs' ends as the workers announce them: a wait for a run's end then looks seldom. */
  runEnds?: RunEnds;
  /** Makes the account's Firecrawl webhook secret unless it has one: every crawl and batch webhook is signed. */
  ensureWebhookSecret: (owner: Owner) => Promise<void>;
}

/** A run of a job made through the compatible API, with when it expires. */
export interface CompatRun {
  run: Run;
  jobId: string;
  source: string;
  /** The formats its job asked for. */
  formats: FormatName[];
  /** Its job asks the language model for an object a page (Firecrawl's json format). */
  extract: boolean;
  /** Its job compares each page with the previous scrape (Firecrawl's changeTracking format). */
  tracking: boolean;
  /** What made it (`scrape`, `crawl`, …); null for jobs made before kinds were kept. */
  kind: string | null;
  /** The Firecrawl request's own options as the compatible API stored them (opaque here); null: none. */
  firecrawl: unknown;
  expiresAt: Date;
}

/** A URL of a run that failed or that robots.txt kept out. */
export interface CompatError {
  seq: number;
  url: string;
  httpStatus: number | null;
  code: string;
  message: string;
  at: Date | null;
}

/** How long a wait for a run's end sleeps between looks: short first, for pages that are quick. */
const WAIT_STEPS_MS = [5, 5, 10, 10, 20, 20, 40];
const WAIT_MAX_STEP_MS = 50;
/** Between looks while the run's end is to be announced: in case the announcement is lost. */
const ANNOUNCED_STEP_MS = 250;

/**
 * The Firecrawl-compatible API's work in this service's terms (docs/api.md §18): every scrape,
 * crawl, batch and map is an ordinary job of origin `firecrawl` with one run, whose id is the
 * compatible API's id; the job expires with everything it stored after `retentionHours`.
 */
export class CompatService {
  readonly #db: Database;
  readonly #jobs: JobsService;
  readonly #results: ResultsService;
  readonly #options: CompatOptions;
  readonly #now: () => Date;

  constructor(db: Database, jobs: JobsService, results: ResultsService, options: CompatOptions) {
    this.#db = db;
    this.#jobs = jobs;
    this.#results = results;
    this.#options = { ...options, publicBaseUrl: options.publicBaseUrl.replace(/\/+$/, '') };
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * Makes the job (a batch's `urls` seeded instead of its source, with its page tracking, the
   * compatible API's own options and a scrape's cache key) and starts its run. A crawl's or
   * batch's webhook is checked first and stored before the run starts, so that the run's
   * job.started already finds it.
   */
  async start(
    owner: Owner,
    input: CreateJobInput,
    urls: string[] | null = null,
    webhook: JobWebhook | null = null,
    pageTracking: PageTracking | null = null,
    firecrawl: unknown = null,
    cacheKey: string | null = null,
  ): Promise<{ runId: string; jobId: string; expiresAt: Date }> {
    if (webhook) {
      await checkJobWebhook(owner, webhook, {
        allowPrivate: this.#options.allowPrivateTargets,
        resolve: this.#options.resolve,
      });
      await this.#options.ensureWebhookSecret(owner);
    }
    const expiresAt = new Date(this.#now().getTime() + this.#options.retentionHours * 3_600_000);
    const job = await this.#jobs.create(owner, input, { origin: 'firecrawl', urls, expiresAt, pageTracking });
    if (webhook) await this.#db.webhook.create({ data: jobWebhookRow(owner, job.id, webhook, this.#now()) });
    if (firecrawl !== null)
      await this.#db.pool.query({
        name: 'compat-job-options',
        text: 'UPDATE jobs SET firecrawl = $2::jsonb, firecrawl_cache_key = $3 WHERE id = $1',
        values: [job.id, JSON.stringify(firecrawl), cacheKey],
      });
    const { runId } = await this.#jobs.run(owner, job.id);
    return { runId, jobId: job.id, expiresAt };
  }

  /** The owner's run `runId` of a job made through the compatible API; 404 for anything else. */
  async get(owner: Owner, runId: string): Promise<CompatRun> {
    const row = isId('run', runId)
      ? await this.#db.run.findFirst({
          where: {
            id: runId,
            deleting: false,
            job: { userId: owner.userId, mode: owner.mode, origin: 'firecrawl' },
          },
          include: {
            job: {
              select: {
                source: true,
                expiresAt: true,
                formats: true,
                extract: true,
                pageTracking: true,
                firecrawlKind: true,
                firecrawl: true,
              },
            },
          },
        })
      : null;
    const expiresAt = row?.job.expiresAt;
    if (!row || !expiresAt) throw notFound('Job');
    const { job, ...run } = row;
    return {
      run: toRun(run),
      jobId: run.jobId,
      source: job.source,
      formats: formatsSchema.parse(job.formats),
      extract: job.extract !== null,
      tracking: job.pageTracking !== null,
      kind: job.firecrawlKind,
      firecrawl: job.firecrawl,
      expiresAt,
    };
  }

  /**
   * The owner's newest run that succeeded, of a job made with `cacheKey` since `since` and not yet
   * expired (docs/api.md §26: maxAge); null when there is none.
   */
  async cached(owner: Owner, cacheKey: string, since: Date): Promise<CompatRun | null> {
    const { rows } = await this.#db.pool.query<{ run_id: string }>({
      name: 'compat-cached',
      text: `SELECT r.id AS run_id FROM jobs j JOIN runs r ON r.job_id = j.id
              WHERE j.user_id = $1 AND j.mode = $2::"Mode" AND j.origin = 'firecrawl'
                AND j.firecrawl_cache_key = $3 AND j.created_at >= $4 AND j.expires_at > $5
                AND r.status = 'success' AND NOT r.deleting
                AND EXISTS (SELECT 1 FROM run_documents d WHERE d.run_id = r.id)
              ORDER BY j.created_at DESC LIMIT 1`,
      values: [owner.userId, owner.mode, cacheKey, since, this.#now()],
    });
    const runId = rows[0]?.run_id;
    return runId === undefined ? null : this.get(owner, runId);
  }

  /**
   * Waits until the run has ended or `timeoutMs` has passed, looking often at first (a page is
   * usually done in tens of milliseconds), or, with `runEnds`, looking again when the end is
   * announced (and every 250 ms in case the announcement is lost); the run as it is then.
   */
  async waitForEnd(owner: Owner, runId: string, timeoutMs: number, signal?: AbortSignal): Promise<CompatRun> {
    const deadline = Date.now() + timeoutMs;
    // Watched before the first look, so that an end between the look and the watch is heard.
    const watch = this.#options.runEnds?.watch(runId);
    let heard = false;
    void watch?.ended.then(() => {
      heard = true;
    });
    try {
      // The looks read the run's status alone (one indexed row); the whole run is read, and its
      // owner checked, once at the end.
      for (let step = 0; ; step++) {
        const { rows } = await this.#db.pool.query<{ status: string }>({
          name: 'compat-run-status',
          text: 'SELECT status::text FROM runs WHERE id = $1',
          values: [runId],
        });
        const left = deadline - Date.now();
        if (rows[0]?.status !== 'running' || left <= 0 || signal?.aborted) return this.get(owner, runId);
        const waiting = watch && !heard;
        const pause = sleep(
          Math.min(waiting ? ANNOUNCED_STEP_MS : (WAIT_STEPS_MS[step] ?? WAIT_MAX_STEP_MS), left),
        );
        await (waiting ? Promise.race([watch.ended, pause]) : pause);
      }
    } finally {
      watch?.stop();
    }
  }

  /** A page of the run's documents, with the screenshot URL of each that has one. */
  async documents(
    owner: Owner,
    compat: CompatRun,
    opts: { limit: number; cursor?: string | undefined },
  ): Promise<DocumentPage & { screenshots: (string | null)[] }> {
    const page = await this.#results.listDocuments(owner, compat.jobId, compat.run.id, opts);
    const { rows } = await this.#db.pool.query<{ seq: number }>({
      name: 'compat-screenshots',
      text: 'SELECT seq FROM run_screenshots WHERE run_id = $1 AND seq = ANY($2::int[])',
      values: [compat.run.id, page.seqs],
    });
    const shot = new Set(rows.map((row) => row.seq));
    const base = `${this.#options.publicBaseUrl}/jobs/${compat.jobId}/runs/${compat.run.id}/screenshots`;
    return { ...page, screenshots: page.seqs.map((seq) => (shot.has(seq) ? `${base}/${seq}` : null)) };
  }

  /** The run's records (the objects a job with extract got), in the order stored, at most `limit` (≤ 1000). */
  async records(owner: Owner, compat: CompatRun, limit: number): Promise<Record<string, unknown>[]> {
    const page = await this.#results.list(owner, compat.jobId, { runId: compat.run.id, limit });
    return page.items.map((item) => item.data);
  }

  /** Why pages of the run that succeeded lack their language model output (docs/api.md §24), at most `limit`. */
  async warnings(compat: CompatRun, limit: number): Promise<string[]> {
    const { rows } = await this.#db.pool.query<{ error_message: string }>({
      name: 'compat-warnings',
      text: `SELECT error_message FROM run_urls
              WHERE run_id = $1 AND kind = 'page' AND status = 'success' AND error_message IS NOT NULL
              ORDER BY seq LIMIT $2`,
      values: [compat.run.id, limit],
    });
    return rows.map((row) => row.error_message);
  }

  /** Cancels the run (its job is paused); a run that has ended stays as it is. */
  async cancel(owner: Owner, compat: CompatRun): Promise<void> {
    if (compat.run.status !== 'running') return;
    await this.#jobs.pause(owner, compat.jobId).catch((err: { status?: number }) => {
      // Ended or paused meanwhile: nothing left to cancel.
      if (err.status !== 409) throw err;
    });
  }

  /** The run's pages that failed, and those robots.txt kept out, in the run's URL order (at most `limit`). */
  async errors(compat: CompatRun, limit = 1000): Promise<{ failed: CompatError[]; robots: string[] }> {
    const { rows } = await this.#db.pool.query<{
      seq: number;
      url: string;
      http_status: number | null;
      error_code: string;
      error_message: string | null;
      fetched_at: Date | null;
    }>({
      name: 'compat-errors',
      text: `SELECT seq, url, http_status, error_code, error_message, fetched_at FROM run_urls
              WHERE run_id = $1 AND kind = 'page' AND status IN ('failed', 'skipped') AND error_code IS NOT NULL
              ORDER BY seq LIMIT $2`,
      values: [compat.run.id, limit],
    });
    const robots = rows.filter((row) => row.error_code === 'ROBOTS_DISALLOWED').map((row) => row.url);
    const failed = rows
      .filter((row) => row.error_code !== 'ROBOTS_DISALLOWED' && row.error_code !== 'MAX_PAGES')
      .map((row) => ({
        seq: row.seq,
        url: row.url,
        httpStatus: row.http_status,
        code: row.error_code,
        message: row.error_message ?? row.error_code,
        at: row.fetched_at,
      }));
    return { failed, robots };
  }

  /** Keeps what made a job (`scrape`, `crawl`, …) and, for a crawl, its options as given. */
  async describe(jobId: string, kind: string, options: Record<string, unknown> | null = null): Promise<void> {
    await this.#db.job.update({
      where: { id: jobId },
      data: { firecrawlKind: kind, ...(options && { firecrawlOptions: options as object }) },
    });
  }

  /** The owner's running runs of compatible-API jobs of `kind`, newest first, with the options kept. */
  async active(
    owner: Owner,
    kind: string,
    limit = 1000,
  ): Promise<{ runId: string; source: string; startedAt: Date; options: Record<string, unknown> }[]> {
    const rows = await this.#db.run.findMany({
      where: {
        status: 'running',
        job: { userId: owner.userId, mode: owner.mode, origin: 'firecrawl', firecrawlKind: kind },
      },
      select: { id: true, startedAt: true, job: { select: { source: true, firecrawlOptions: true } } },
      orderBy: { id: 'desc' },
      take: limit,
    });
    return rows.map((row) => ({
      runId: row.id,
      source: row.job.source,
      startedAt: row.startedAt,
      options: (row.job.firecrawlOptions ?? {}) as Record<string, unknown>,
    }));
  }

  /** The URLs the run found so far (pages of its frontier), in the order found, with their status. */
  async foundUrls(compat: CompatRun, limit: number): Promise<{ seq: number; url: string }[]> {
    const { rows } = await this.#db.pool.query<{ seq: number; url: string }>({
      name: 'compat-found-urls',
      text: `SELECT seq, url FROM run_urls WHERE run_id = $1 AND kind = 'page' ORDER BY seq LIMIT $2`,
      values: [compat.run.id, limit],
    });
    return rows;
  }
}
