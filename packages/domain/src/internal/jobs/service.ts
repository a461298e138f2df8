import {
  type ChangeTracking,
  type ChangeView,
  type CreateJobInput,
  type FormatName,
  type JobListItem,
  type JobOriginName,
  type JobStatusName,
  noQueriesIssue,
  type PageChangeView,
  type Query,
  type RenderConfig,
  type RunUrlView,
  renderConfigSchema,
  schedulingSchema,
  type UpdateJobInput,
  unknownKeyNames,
} from '@scrapejobs/contracts';
import { type Database, isId, newId, Prisma, type RunTrigger, transaction } from '@scrapejobs/db';
import type { SecretBox } from '@scrapejobs/outbound';
import { AppError, conflict, notFound, validationError } from '../errors.ts';
import { fieldNames, type Job, type Run, type StoredExtract, storeExtract, toJob, toRun } from '../model.ts';
import { outboxDataSql, outboxEvent } from '../outbox.ts';
import { decodeCursor, type Page, pageOf } from '../paging.ts';
import type { Owner } from '../principal.ts';
import { type RunChangesQuery, readRunChanges } from '../runs/changes.ts';
import { jobSettingsSql } from '../runs/settings.ts';
import type { PageTracking } from '../runs/tracked-pages.ts';
import { type RunUrlsQuery, readRunUrls } from '../runs/urls.ts';
import { nextRunAt, type ScheduleUnit } from './cron.ts';
import { sealRequest } from './request.ts';
import type { Scheduler } from './scheduler.ts';

type Tx = Prisma.TransactionClient;

export interface JobsServiceOptions {
  /** Seals the secrets of a job's `request` (the key of webhook secrets). */
  box: SecretBox;
  /** PUBLIC_BASE_URL: the links in answers (a URL's screenshot). */
  publicBaseUrl: string;
  /** SCHEDULE_UNIT (tests only): what a schedule's minutes count; the QueueScheduler's too. */
  scheduleUnit?: ScheduleUnit;
  now?: () => Date;
}

/** A job made through the Firecrawl-compatible API (docs/api.md §18): marked, expiring, a batch's URLs. */
export interface CompatJob {
  origin: 'firecrawl';
  expiresAt: Date;
  urls: string[] | null;
  /** Firecrawl's changeTracking format (docs/api.md §24); null or absent: none. */
  pageTracking?: PageTracking | null;
}

/** What a planned time of a job's schedule did. */
export type TickOutcome = 'started' | 'skipped-running' | 'skipped-paused' | 'orphan';

/**
 * Tells the scraper workers of runs started and cancelled (the API wires Redis pub/sub in). A run
 * is in PostgreSQL before it is announced: the workers find it there anyway.
 */
export interface RunAnnouncer {
  /** A recorded run started: the workers look at the frontier now rather than at their next poll. */
  started(runId: string, jobId: string): Promise<void>;
  /** Asks whichever workers hold the run's URLs to stop them now. */
  cancel(runId: string): Promise<void>;
}

/** job.started's data, built by the statement that starts the run from the job it updates. */
const STARTED_DATA = outboxDataSql('job.started', {
  job_id: 'id',
  job_name: 'name',
  run_id: '$5::text',
  status: "'running'",
  trigger: '$6::text',
});

const jsonOrNull = (v: unknown) => (v === null ? Prisma.DbNull : (v as Prisma.InputJsonValue));
const jsonText = (v: unknown) => (v === null ? null : JSON.stringify(v));
/** A timestamp column (UTC) as the API's ISO 8601 text, formatted by PostgreSQL. */
const iso = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Jobs and their state transitions (docs/api.md §3.8). Every change of state is one transaction,
 * and a job's schedule is armed or disarmed inside it, under the job's row lock, so the
 * schedule in Redis follows the committed state.
 */
export class JobsService {
  readonly #db: Database;
  readonly #announcer: RunAnnouncer;
  readonly #scheduler: Scheduler;
  readonly #now: () => Date;
  readonly #box: SecretBox;
  readonly #publicBaseUrl: string;
  readonly #scheduleUnit: ScheduleUnit;

  constructor(db: Database, announcer: RunAnnouncer, scheduler: Scheduler, options: JobsServiceOptions) {
    this.#db = db;
    this.#box = options.box;
    this.#publicBaseUrl = options.publicBaseUrl.replace(/\/+$/, '');
    this.#announcer = announcer;
    this.#scheduler = scheduler;
    this.#now = options.now ?? (() => new Date());
    this.#scheduleUnit = options.scheduleUnit ?? 'minute';
  }

  /** One page of the owner's jobs, newest first, read straight into the list shape of docs/api.md §3.2. */
  async list(
    owner: Owner,
    opts: {
      status?: JobStatusName | undefined;
      origin?: JobOriginName | undefined;
      limit: number;
      cursor?: string | undefined;
    },
  ): Promise<Page<JobListItem>> {
    const before = decodeCursor('job', opts.cursor);
    const values: unknown[] = [owner.userId, owner.mode, opts.limit + 1, opts.origin ?? 'api'];
    let where = 'user_id = $1 AND mode = $2::"Mode" AND origin = $4::"JobOrigin"';
    if (opts.status) where += ` AND status = $${values.push(opts.status)}::"JobStatus"`;
    if (before) where += ` AND id < $${values.push(before)}`;
    // A prepared statement per filter combination; rows come as arrays with the timestamps
    // already in ISO form, which is several times cheaper than the ORM for this hot path.
    const { rows } = await this.#db.pool.query<unknown[]>({
      name: `jobs-list${opts.status ? '-status' : ''}${before ? '-before' : ''}`,
      text: `SELECT id, name, source, status::text, ${iso('created_at')}, ${iso('last_run_at')},
                    results_count, ${iso('next_run_at')}
               FROM jobs WHERE ${where} ORDER BY id DESC LIMIT $3`,
      values,
      rowMode: 'array',
    });
    const items = rows.map(
      (c): JobListItem => ({
        job_id: c[0] as string,
        name: c[1] as string,
        source: c[2] as string,
        status: c[3] as JobStatusName,
        created_at: c[4] as string,
        last_run: c[5] as string | null,
        results_count: c[6] as number,
        next_run_at: c[7] as string | null,
      }),
    );
    return pageOf(items, opts.limit, (item) => item.job_id);
  }

  async get(owner: Owner, id: string, tx: Tx = this.#db): Promise<Job> {
    const job = isId('job', id)
      ? await tx.job.findFirst({ where: { id, userId: owner.userId, mode: owner.mode } })
      : null;
    if (!job) throw notFound('Job');
    return toJob(job);
  }

  async create(owner: Owner, input: CreateJobInput, compat?: CompatJob): Promise<Job> {
    const now = this.#now();
    const id = newId('job', now.getTime());
    const job: Job = {
      id,
      userId: owner.userId,
      mode: owner.mode,
      name: input.name,
      source: input.source,
      queries: input.queries,
      formats: input.formats,
      content: input.content,
      rateLimit: input.rate_limit,
      scheduling: input.scheduling,
      renderConfig: withScreenshot(input.render_config, input.formats),
      proxyConfig: input.proxy_config,
      crawl: input.crawl,
      changeTracking: input.change_tracking,
      request: sealRequest(this.#box, id, input.request, null, input.source),
      retentionDays: input.retention_days,
      refetch: input.refetch,
      status: 'scheduled',
      createdAt: now,
      updatedAt: now,
      lastRunAt: null,
      lastRunId: null,
      resultsCount: 0,
      nextRunAt: input.scheduling ? nextRunAt(input.scheduling, now, this.#scheduleUnit) : null,
      origin: compat?.origin ?? 'api',
      urls: compat?.urls ?? null,
      expiresAt: compat?.expiresAt ?? null,
      extract: storeExtract(input.extract),
      pageTracking: compat?.pageTracking ?? null,
    };
    const insert = {
      name: 'jobs-insert',
      text: `INSERT INTO jobs (id, user_id, mode, name, source, queries, rate_limit, scheduling,
                               render_config, proxy_config, crawl, change_tracking, request, retention_days,
                               formats, content, origin, urls, expires_at, refetch, status, created_at, updated_at,
                               next_run_at, extract, page_tracking)
             VALUES ($1, $2, $3::"Mode", $4, $5, $6::jsonb, $7, $8::jsonb, $9::jsonb, $10::jsonb, $13::jsonb,
                     $14::jsonb, $15::jsonb, $16, $17::jsonb, $18::jsonb, $19::"JobOrigin", $20::jsonb, $21,
                     $22::"RefetchMode", 'scheduled', $11, $11, $12, $23::jsonb, $24::jsonb)`,
      values: [
        job.id,
        job.userId,
        job.mode,
        job.name,
        job.source,
        JSON.stringify(input.queries),
        job.rateLimit,
        jsonText(input.scheduling),
        jsonText(job.renderConfig),
        jsonText(input.proxy_config),
        now.toISOString(),
        job.nextRunAt?.toISOString() ?? null,
        jsonText(input.crawl),
        jsonText(input.change_tracking),
        jsonText(job.request),
        job.retentionDays,
        JSON.stringify(input.formats),
        jsonText(input.content),
        job.origin,
        jsonText(job.urls),
        job.expiresAt?.toISOString() ?? null,
        job.refetch,
        jsonText(job.extract),
        jsonText(job.pageTracking),
      ],
    };
    const unknown = keyIssues(input.change_tracking, job);
    if (unknown) throw unknown;
    const scheduling = input.scheduling;
    if (!scheduling) await this.#db.pool.query(insert);
    else
      await transaction(this.#db.pool, async (client) => {
        await client.query(insert);
        await this.#scheduler.arm(job.id, scheduling);
      });
    return job;
  }

  async update(owner: Owner, id: string, input: UpdateJobInput): Promise<Job> {
    const now = this.#now();
    return this.#db.$transaction(async (tx) => {
      const current = await this.#lock(tx, owner, id);
      const data: Prisma.JobUpdateInput = { updatedAt: now };
      if (input.name !== undefined) data.name = input.name;
      if (input.source !== undefined) data.source = input.source;
      if (input.queries !== undefined) data.queries = input.queries;
      if (input.rate_limit !== undefined) data.rateLimit = input.rate_limit;
      if (input.formats !== undefined) data.formats = input.formats;
      if (input.content !== undefined) data.content = jsonOrNull(input.content);
      const formats = input.formats ?? current.formats;
      const queries = input.queries ?? current.queries;
      const extract = input.extract === undefined ? current.extract : storeExtract(input.extract);
      if (input.extract !== undefined) data.extract = jsonOrNull(extract);
      const empty = noQueriesIssue(queries, formats, extract);
      if (empty) throw validationError({ queries: empty }, 'The job configuration is invalid.');
      if (input.render_config !== undefined || input.formats !== undefined) {
        const render = input.render_config === undefined ? current.renderConfig : input.render_config;
        data.renderConfig = jsonOrNull(withScreenshot(render, formats));
      }
      if (input.proxy_config !== undefined) data.proxyConfig = jsonOrNull(input.proxy_config);
      if (input.crawl !== undefined) data.crawl = jsonOrNull(input.crawl);
      if (input.change_tracking !== undefined) data.changeTracking = jsonOrNull(input.change_tracking);
      if (input.retention_days !== undefined) data.retentionDays = input.retention_days;
      if (input.refetch !== undefined) data.refetch = input.refetch;
      if (input.request !== undefined)
        data.request = jsonOrNull(
          sealRequest(this.#box, id, input.request, current.request, input.source ?? current.source),
        );
      const unknown = keyIssues(
        input.change_tracking === undefined ? current.changeTracking : input.change_tracking,
        { queries, extract },
      );
      if (unknown) throw unknown;
      if (input.scheduling !== undefined) {
        // A new schedule takes effect at once (docs/api.md §3.6); a paused job stays disarmed.
        const scheduling = input.scheduling;
        data.scheduling = jsonOrNull(scheduling);
        const armed = scheduling !== null && current.status !== 'paused';
        data.nextRunAt = armed ? nextRunAt(scheduling, now, this.#scheduleUnit) : null;
        if (armed) await this.#scheduler.arm(id, scheduling);
        else await this.#scheduler.disarm(id);
      }
      // Whatever changed, the next run fetches and extracts every page again (docs/api.md §20). A
      // run still running keeps none of its pages' validators either: it started before this.
      await tx.pageValidators.deleteMany({ where: { jobId: id } });
      return toJob(await tx.job.update({ where: { id }, data }));
    });
  }

  /** Deletes the job with its runs and results, cancelling a running run first. */
  async delete(owner: Owner, id: string): Promise<void> {
    const runId = await this.#db.$transaction(async (tx) => {
      const job = await this.#lock(tx, owner, id);
      await tx.job.delete({ where: { id: job.id } });
      await this.#scheduler.disarm(job.id);
      return job.status === 'running' ? job.lastRunId : null;
    });
    if (runId) await this.#announcer.cancel(runId);
  }

  /**
   * Starts a run (manual or scheduled): exactly one of concurrent calls wins, the others get 409.
   * One statement moves a scheduled, successful or failed job to running (docs/api.md §3.8; the row
   * lock and the state check are the UPDATE's own), records the run and writes the job.started
   * event, so it commits all or nothing.
   */
  async run(
    owner: Owner,
    id: string,
    trigger: RunTrigger = 'manual',
    nextRun?: Date | null,
  ): Promise<{ jobId: string; runId: string }> {
    if (!isId('job', id)) throw notFound('Job');
    const now = this.#now().toISOString();
    const runId = newId('run', Date.parse(now));
    const { rowCount } = await this.#db.pool.query({
      name: 'jobs-run',
      text: `WITH started AS (
               UPDATE jobs SET status = 'running', last_run_at = $4, last_run_id = $5, updated_at = $4,
                               next_run_at = CASE WHEN $8 THEN $9::timestamp ELSE next_run_at END
                WHERE id = $1 AND user_id = $2 AND mode = $3::"Mode" AND status IN ('scheduled', 'success', 'failed')
                RETURNING id, name, source, queries, rate_limit, render_config, proxy_config, crawl, request,
                          formats, content, change_tracking, urls, refetch, extract, page_tracking),
             run AS (
               INSERT INTO runs (id, job_id, status, trigger, started_at, settings)
               SELECT $5, id, 'running', $6::"RunTrigger", $4, ${jobSettingsSql('started')}
                 FROM started)
           INSERT INTO events (id, user_id, mode, job_id, kind, data, created_at)
           SELECT $7, $2, $3::"Mode", id, 'job.started', ${STARTED_DATA}, $4
             FROM started`,
      values: [
        id,
        owner.userId,
        owner.mode,
        now,
        runId,
        trigger,
        newId('evt', Date.parse(now)),
        nextRun !== undefined,
        nextRun?.toISOString() ?? null,
      ],
    });
    if (rowCount === 0) {
      const job = await this.get(owner, id);
      throw conflict(`The job is ${job.status}; it cannot be run now.`);
    }
    await this.#announcer.started(runId, id);
    return { jobId: id, runId };
  }

  /**
   * A planned time of a job's schedule: the same start as `run` (trigger `schedule`), skipped while
   * the previous run is still running (its next planned time still moves on) or the job is paused.
   * A tick of a job that has no schedule any more disarms it.
   */
  async tick(jobId: string, now = this.#now()): Promise<TickOutcome> {
    const { rows } = await this.#db.pool.query<{
      user_id: string;
      mode: Owner['mode'];
      status: string;
      scheduling: unknown;
    }>({
      name: 'ticks-job',
      text: 'SELECT user_id, mode::text AS mode, status::text AS status, scheduling FROM jobs WHERE id = $1',
      values: [jobId],
    });
    const job = rows[0];
    if (!job?.scheduling) {
      await this.#scheduler.disarm(jobId);
      return 'orphan';
    }
    if (job.status === 'paused') return 'skipped-paused';
    const next = nextRunAt(schedulingSchema.parse(job.scheduling), now, this.#scheduleUnit);
    try {
      await this.run({ userId: job.user_id, mode: job.mode }, jobId, 'schedule', next);
      return 'started';
    } catch (err) {
      if (!(err instanceof AppError && err.status === 409)) throw err;
    }
    await this.#db.pool.query({
      name: 'ticks-next-run',
      text: `UPDATE jobs SET next_run_at = $2 WHERE id = $1 AND status <> 'paused'`,
      values: [jobId, next.toISOString()],
    });
    return 'skipped-running';
  }

  /** Pauses a job; a running run is cancelled and keeps the results it already stored. */
  async pause(owner: Owner, id: string): Promise<Job> {
    const now = this.#now();
    const { job, cancelledRun } = await this.#db.$transaction(async (tx) => {
      const current = await this.#lock(tx, owner, id);
      if (current.status === 'paused') throw conflict('The job is already paused.');
      let cancelledRun: string | null = null;
      let resultsCount: number | undefined;
      if (current.status === 'running' && current.lastRunId) {
        const run = await tx.run.findUnique({ where: { id: current.lastRunId } });
        if (run?.status === 'running') {
          // The update waits for a batch being stored and counts its records; later batches of
          // workers that still hold URLs count theirs themselves.
          ({ resultsCount } = await tx.run.update({
            where: { id: run.id },
            data: {
              status: 'cancelled',
              finishedAt: now,
              durationMs: now.getTime() - run.startedAt.getTime(),
            },
          }));
          cancelledRun = run.id;
        }
      }
      const job = await tx.job.update({
        where: { id: current.id },
        data: { status: 'paused', updatedAt: now, nextRunAt: null, resultsCount },
      });
      await tx.event.create({
        data: outboxEvent(
          owner,
          'job.paused',
          { job_id: job.id, job_name: job.name, status: 'paused' },
          { jobId: job.id, at: now },
        ),
      });
      await this.#scheduler.disarm(job.id);
      return { job, cancelledRun };
    });
    if (cancelledRun) await this.#announcer.cancel(cancelledRun);
    return toJob(job);
  }

  async resume(owner: Owner, id: string): Promise<Job> {
    return this.#db.$transaction(async (tx) => {
      const current = await this.#lock(tx, owner, id);
      if (current.status !== 'paused') throw conflict(`The job is ${current.status}, not paused.`);
      const now = this.#now();
      const { scheduling } = current;
      if (scheduling) await this.#scheduler.arm(current.id, scheduling);
      const job = await tx.job.update({
        where: { id: current.id },
        data: {
          status: 'scheduled',
          updatedAt: now,
          nextRunAt: scheduling ? nextRunAt(scheduling, now, this.#scheduleUnit) : null,
        },
      });
      return toJob(job);
    });
  }

  /** How many of the owner's jobs are in each state (states with none are left out). */
  async countByStatus(owner: Owner): Promise<Partial<Record<JobStatusName, number>>> {
    const groups = await this.#db.job.groupBy({
      by: ['status'],
      where: { userId: owner.userId, mode: owner.mode },
      _count: { _all: true },
    });
    return Object.fromEntries(groups.map((g) => [g.status, g._count._all]));
  }

  /** One run of one of the owner's jobs; 404 for another owner's, or for a run of another job. */
  async getRun(owner: Owner, jobId: string, runId: string): Promise<Run> {
    await this.get(owner, jobId);
    const run = isId('run', runId)
      ? await this.#db.run.findFirst({ where: { id: runId, jobId, deleting: false } })
      : null;
    if (!run) throw notFound('Run');
    return toRun(run);
  }

  /** One page of the URLs of one run of one of the owner's jobs (docs/api.md §12), in the order accepted. */
  async listRunUrls(
    owner: Owner,
    jobId: string,
    runId: string,
    query: RunUrlsQuery,
  ): Promise<Page<RunUrlView>> {
    await this.getRun(owner, jobId, runId);
    const screenshotUrl = (seq: number) =>
      `${this.#publicBaseUrl}/jobs/${jobId}/runs/${runId}/screenshots/${seq}`;
    return readRunUrls(this.#db, runId, query, screenshotUrl);
  }

  /** The screenshot (PNG, or JPEG with a quality) of one rendered URL of a run (docs/api.md §14); 404 when there is none. */
  async screenshot(owner: Owner, jobId: string, runId: string, seq: string): Promise<Buffer> {
    await this.getRun(owner, jobId, runId);
    const n = /^(0|[1-9]\d{0,8})$/.test(seq) ? Number(seq) : null;
    const shot =
      n === null
        ? null
        : await this.#db.runScreenshot.findUnique({ where: { runId_seq: { runId, seq: n } } });
    if (!shot) throw notFound('Screenshot');
    return Buffer.from(shot.png);
  }

  /**
   * One page of what changed in a run against its base run (docs/api.md §13), with the run; 404
   * when the job does not track changes or the run has not been compared.
   */
  async listRunChanges(
    owner: Owner,
    jobId: string,
    runId: string,
    query: RunChangesQuery,
  ): Promise<{ run: Run; page: Page<ChangeView | PageChangeView> }> {
    const job = await this.get(owner, jobId);
    const run = await this.getRun(owner, jobId, runId);
    if (!job.changeTracking) throw notFound('Change tracking of this job');
    if (!run.changes) throw notFound('Comparison of this run');
    const names = fieldNames(job);
    return { run, page: await readRunChanges(this.#db, runId, query, names, job.changeTracking.key) };
  }

  async listRuns(
    owner: Owner,
    id: string,
    opts: { limit: number; cursor?: string | undefined },
  ): Promise<Page<Run>> {
    await this.get(owner, id);
    const before = decodeCursor('run', opts.cursor);
    const rows = await this.#db.run.findMany({
      where: { jobId: id, deleting: false, ...(before && { id: { lt: before } }) },
      orderBy: { id: 'desc' },
      take: opts.limit + 1,
    });
    return pageOf(rows.map(toRun), opts.limit, (row) => row.id);
  }

  /** Reads the job with a row lock, so transitions of one job are serialised across processes. */
  async #lock(tx: Tx, owner: Owner, id: string): Promise<Job> {
    if (!isId('job', id)) throw notFound('Job');
    const rows = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM jobs WHERE id = ${id} AND user_id = ${owner.userId} AND mode = ${owner.mode}::"Mode" FOR UPDATE`;
    if (rows.length === 0) throw notFound('Job');
    return this.get(owner, id, tx);
  }
}

/** The `screenshot` format is render_config.screenshot, and turns rendering on (docs/api.md §17). */
function withScreenshot(render: RenderConfig | null, formats: readonly FormatName[]): RenderConfig | null {
  if (!formats.includes('screenshot')) return render;
  return { ...(render ?? renderConfigSchema.parse({})), enabled: true, screenshot: true };
}

/** The 400 for a change-tracking key naming neither `url` nor a record field (docs/api.md §13), else null. */
function keyIssues(
  tracking: ChangeTracking | null,
  job: { queries: readonly Query[]; extract: StoredExtract | null },
): AppError | null {
  if (!tracking) return null;
  const details = unknownKeyNames(tracking.key, fieldNames(job));
  return Object.keys(details).length > 0
    ? validationError(details, 'The job configuration is invalid.')
    : null;
}

/** A stored screenshot's media type: a JPEG (render_config.screenshot_options.quality) or a PNG. */
export const screenshotType = (image: Buffer): 'image/jpeg' | 'image/png' =>
  image[0] === 0xff && image[1] === 0xd8 && image[2] === 0xff ? 'image/jpeg' : 'image/png';
