import { paginate } from './paging.ts';
import type { Transport } from './transport.ts';
import type {
  CreateJobRequest,
  JobDetail,
  JobList,
  JobListItem,
  ListJobsQuery,
  RunAccepted,
  UpdateJobRequest,
} from './types.ts';

export const jobPath = (jobId: string) => `/jobs/${encodeURIComponent(jobId)}`;

/** Jobs: create, read, change, delete, and run, pause or resume them (docs/api.md §3). */
export class Jobs {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** POST /jobs: a new job, `scheduled`. */
  create(body: CreateJobRequest): Promise<JobDetail> {
    return this.#t.json('POST', '/jobs', { body });
  }

  /** GET /jobs/status: one page of the caller's jobs, newest first. */
  list(query: ListJobsQuery = {}): Promise<JobList> {
    return this.#t.json('GET', '/jobs/status', { query });
  }

  /** Every job (of `status`, if given), following `next_cursor` page after page. */
  iterate(query: ListJobsQuery = {}): AsyncGenerator<JobListItem, void, undefined> {
    return paginate(
      (cursor) => this.list({ ...query, cursor }),
      (page) => page.jobs,
      query.cursor,
    );
  }

  /** GET /jobs/{id}. */
  get(jobId: string): Promise<JobDetail> {
    return this.#t.json('GET', jobPath(jobId));
  }

  /** PATCH (or PUT, which behaves the same) /jobs/{id}: omitted fields keep their values. */
  update(
    jobId: string,
    body: UpdateJobRequest,
    options: { method?: 'PATCH' | 'PUT' } = {},
  ): Promise<JobDetail> {
    return this.#t.json(options.method ?? 'PATCH', jobPath(jobId), { body });
  }

  /** DELETE /jobs/{id}: cancels a running run and deletes runs and results. */
  async delete(jobId: string): Promise<void> {
    await this.#t.json('DELETE', jobPath(jobId));
  }

  /** POST /jobs/{id}/run: starts a run now (409 `conflict` while one runs or the job is paused). */
  run(jobId: string): Promise<RunAccepted> {
    return this.#t.json('POST', `${jobPath(jobId)}/run`);
  }

  /** POST /jobs/{id}/pause: cancels a running run, suspends the schedule. */
  pause(jobId: string): Promise<JobDetail> {
    return this.#t.json('POST', `${jobPath(jobId)}/pause`);
  }

  /** POST /jobs/{id}/resume: a paused job back to `scheduled`. */
  resume(jobId: string): Promise<JobDetail> {
    return this.#t.json('POST', `${jobPath(jobId)}/resume`);
  }
}
