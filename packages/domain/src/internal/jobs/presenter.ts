import type { JobDetail, JobListItem, RunView } from '@scrapejobs/contracts';
import type { JobModel, RunModel } from '@scrapejobs/db';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toListItem(job: JobModel): JobListItem {
  return {
    job_id: job.id,
    name: job.name,
    source: job.source,
    status: job.status,
    created_at: job.createdAt.toISOString(),
    last_run: iso(job.lastRunAt),
    results_count: job.resultsCount,
    next_run_at: iso(job.nextRunAt),
  };
}

export function toDetail(job: JobModel): JobDetail {
  return {
    ...toListItem(job),
    updated_at: job.updatedAt.toISOString(),
    rate_limit: job.rateLimit,
    queries: job.queries as JobDetail['queries'],
    scheduling: job.scheduling as JobDetail['scheduling'],
    render_config: job.renderConfig as JobDetail['render_config'],
    proxy_config: job.proxyConfig as JobDetail['proxy_config'],
    last_run_id: job.lastRunId,
    mode: job.mode,
  };
}

export function toRunView(run: RunModel): RunView {
  return {
    run_id: run.id,
    status: run.status,
    trigger: run.trigger,
    started_at: run.startedAt.toISOString(),
    finished_at: iso(run.finishedAt),
    duration_ms: run.durationMs,
    results_count: run.resultsCount,
    successful_urls: run.successfulUrls,
    failed_urls: run.failedUrls,
    error: run.error as RunView['error'],
  };
}
