import type { CreateJobInput, JobStatusName, Scheduling, UpdateJobInput } from '@scrapejobs/contracts';
import { type Database, isId, type JobModel, newId, Prisma, type RunTrigger } from '@scrapejobs/db';
import { conflict, notFound, validationError } from '../errors.ts';
import type { Principal } from '../http/auth.ts';
import { nextRunAt } from '../schedules/cron.ts';
import type { Scheduler } from '../schedules/scheduler.ts';
import { type JobListRow, LIST_SELECT } from './presenter.ts';

type Owner = Pick<Principal, 'userId' | 'mode'>;
type Tx = Prisma.TransactionClient;

/** What the service needs from the queue side; the API wires BullMQ and Redis pub/sub in. */
export interface RunDispatcher {
  /** Enqueues a recorded run for the scraper workers (idempotent per run id). */
  enqueue(runId: string, jobId: string): Promise<void>;
  /** Asks whichever worker holds the run to stop it now. */
  cancel(runId: string): Promise<void>;
}

const STARTABLE: JobStatusName[] = ['scheduled', 'success', 'failed'];

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Cursors are the last id seen, opaque to clients. */
export const encodeCursor = (id: string) => Buffer.from(id).toString('base64url');
function decodeCursor(prefix: 'job' | 'run', cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString();
  if (!isId(prefix, id)) throw validationError({ cursor: 'is not a cursor returned by this endpoint' });
  return id;
}

const jsonOrNull = (v: unknown) => (v === null ? Prisma.DbNull : (v as Prisma.InputJsonValue));

function eventRow(owner: Owner, jobId: string, kind: string, data: Record<string, unknown>, at: Date) {
  return {
    id: newId('evt'),
    userId: owner.userId,
    mode: owner.mode,
    jobId,
    kind,
    data: data as Prisma.InputJsonObject,
    createdAt: at,
  };
}

/**
 * Jobs and their state transitions (contract 3.8). Every change of state is one transaction,
 * and a job's schedule is armed or disarmed inside it, under the job's row lock, so the
 * schedule in Redis follows the committed state.
 */
export class JobsService {
  readonly #db: Database;
  readonly #dispatcher: RunDispatcher;
  readonly #scheduler: Scheduler;
  readonly #now: () => Date;

  constructor(
    db: Database,
    dispatcher: RunDispatcher,
    scheduler: Scheduler,
    now: () => Date = () => new Date(),
  ) {
    this.#db = db;
    this.#dispatcher = dispatcher;
    this.#scheduler = scheduler;
    this.#now = now;
  }

  async list(
    owner: Owner,
    opts: { status?: JobStatusName | undefined; limit: number; cursor?: string | undefined },
  ): Promise<Page<JobListRow>> {
    const before = decodeCursor('job', opts.cursor);
    const rows = await this.#db.job.findMany({
      where: {
        userId: owner.userId,
        mode: owner.mode,
        ...(opts.status && { status: opts.status }),
        ...(before && { id: { lt: before } }),
      },
      orderBy: { id: 'desc' },
      take: opts.limit + 1,
      select: LIST_SELECT,
    });
    const more = rows.length > opts.limit;
    const items = more ? rows.slice(0, opts.limit) : rows;
    return { items, nextCursor: more ? encodeCursor(items[items.length - 1]!.id) : null };
  }

  async get(owner: Owner, id: string, tx: Tx = this.#db): Promise<JobModel> {
    const job = isId('job', id)
      ? await tx.job.findFirst({ where: { id, userId: owner.userId, mode: owner.mode } })
      : null;
    if (!job) throw notFound('Job');
    return job;
  }

  async create(owner: Owner, input: CreateJobInput): Promise<JobModel> {
    const now = this.#now();
    const id = newId('job', now.getTime());
    return this.#db.$transaction(async (tx) => {
      const job = await tx.job.create({
        data: {
          id,
          userId: owner.userId,
          mode: owner.mode,
          name: input.name,
          source: input.source,
          queries: input.queries,
          rateLimit: input.rate_limit,
          scheduling: jsonOrNull(input.scheduling),
          renderConfig: jsonOrNull(input.render_config),
          proxyConfig: jsonOrNull(input.proxy_config),
          status: 'scheduled',
          createdAt: now,
          updatedAt: now,
          nextRunAt: input.scheduling ? nextRunAt(input.scheduling, now) : null,
        },
      });
      if (input.scheduling) await this.#scheduler.arm(id, input.scheduling);
      return job;
    });
  }

  async update(owner: Owner, id: string, input: UpdateJobInput): Promise<JobModel> {
    const now = this.#now();
    return this.#db.$transaction(async (tx) => {
      const current = await this.#lock(tx, owner, id);
      const data: Prisma.JobUpdateInput = { updatedAt: now };
      if (input.name !== undefined) data.name = input.name;
      if (input.source !== undefined) data.source = input.source;
      if (input.queries !== undefined) data.queries = input.queries;
      if (input.rate_limit !== undefined) data.rateLimit = input.rate_limit;
      if (input.render_config !== undefined) data.renderConfig = jsonOrNull(input.render_config);
      if (input.proxy_config !== undefined) data.proxyConfig = jsonOrNull(input.proxy_config);
      if (input.scheduling !== undefined) {
        // A new schedule takes effect at once (contract 3.6); a paused job stays disarmed.
        const scheduling = input.scheduling;
        data.scheduling = jsonOrNull(scheduling);
        const armed = scheduling !== null && current.status !== 'paused';
        data.nextRunAt = armed ? nextRunAt(scheduling, now) : null;
        if (armed) await this.#scheduler.arm(id, scheduling);
        else await this.#scheduler.disarm(id);
      }
      return tx.job.update({ where: { id }, data });
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
    if (runId) await this.#dispatcher.cancel(runId);
  }

  /** Starts a run (manual or scheduled): exactly one of concurrent calls wins, the others get 409. */
  async run(
    owner: Owner,
    id: string,
    trigger: RunTrigger = 'manual',
  ): Promise<{ jobId: string; runId: string }> {
    const now = this.#now();
    const runId = newId('run', now.getTime());
    const job = await this.#db.$transaction(async (tx) => {
      const job = await this.#lock(tx, owner, id);
      if (!STARTABLE.includes(job.status)) throw conflict(`The job is ${job.status}; it cannot be run now.`);
      await tx.job.update({
        where: { id: job.id },
        data: { status: 'running', lastRunAt: now, lastRunId: runId, updatedAt: now },
      });
      await tx.run.create({ data: { id: runId, jobId: job.id, status: 'running', trigger, startedAt: now } });
      await tx.event.create({
        data: eventRow(
          owner,
          job.id,
          'job.started',
          {
            job_id: job.id,
            job_name: job.name,
            run_id: runId,
            status: 'running',
            trigger,
          },
          now,
        ),
      });
      return job;
    });
    await this.#dispatcher.enqueue(runId, job.id);
    return { jobId: job.id, runId };
  }

  /** Pauses a job; a running run is cancelled and keeps the results it already stored. */
  async pause(owner: Owner, id: string): Promise<JobModel> {
    const now = this.#now();
    const { job, cancelledRun } = await this.#db.$transaction(async (tx) => {
      const current = await this.#lock(tx, owner, id);
      if (current.status === 'paused') throw conflict('The job is already paused.');
      let cancelledRun: string | null = null;
      if (current.status === 'running' && current.lastRunId) {
        const run = await tx.run.findUnique({ where: { id: current.lastRunId } });
        if (run?.status === 'running') {
          await tx.run.update({
            where: { id: run.id },
            data: {
              status: 'cancelled',
              finishedAt: now,
              durationMs: now.getTime() - run.startedAt.getTime(),
            },
          });
          cancelledRun = run.id;
        }
      }
      const job = await tx.job.update({
        where: { id: current.id },
        data: { status: 'paused', updatedAt: now, nextRunAt: null },
      });
      await tx.event.create({
        data: eventRow(
          owner,
          job.id,
          'job.paused',
          { job_id: job.id, job_name: job.name, status: 'paused' },
          now,
        ),
      });
      await this.#scheduler.disarm(job.id);
      return { job, cancelledRun };
    });
    if (cancelledRun) await this.#dispatcher.cancel(cancelledRun);
    return job;
  }

  async resume(owner: Owner, id: string): Promise<JobModel> {
    return this.#db.$transaction(async (tx) => {
      const current = await this.#lock(tx, owner, id);
      if (current.status !== 'paused') throw conflict(`The job is ${current.status}, not paused.`);
      const now = this.#now();
      const scheduling = current.scheduling as Scheduling | null;
      if (scheduling) await this.#scheduler.arm(current.id, scheduling);
      return tx.job.update({
        where: { id: current.id },
        data: {
          status: 'scheduled',
          updatedAt: now,
          nextRunAt: scheduling ? nextRunAt(scheduling, now) : null,
        },
      });
    });
  }

  async listRuns(owner: Owner, id: string, opts: { limit: number; cursor?: string | undefined }) {
    await this.get(owner, id);
    const before = decodeCursor('run', opts.cursor);
    const rows = await this.#db.run.findMany({
      where: { jobId: id, ...(before && { id: { lt: before } }) },
      orderBy: { id: 'desc' },
      take: opts.limit + 1,
    });
    const more = rows.length > opts.limit;
    const items = more ? rows.slice(0, opts.limit) : rows;
    return { items, nextCursor: more ? encodeCursor(items[items.length - 1]!.id) : null };
  }

  /** Reads the job with a row lock, so transitions of one job are serialised across processes. */
  async #lock(tx: Tx, owner: Owner, id: string): Promise<JobModel> {
    if (!isId('job', id)) throw notFound('Job');
    const rows = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM jobs WHERE id = ${id} AND user_id = ${owner.userId} AND mode = ${owner.mode}::"Mode" FOR UPDATE`;
    if (rows.length === 0) throw notFound('Job');
    return this.get(owner, id, tx);
  }
}
