import type { JobDetail, JobListItem, RunView } from '@scrapejobs/contracts';
import type { Job, Run } from '../model.ts';
import { maskRequest } from './request.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toListItem(job: Job): JobListItem {
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

export function toDetail(job: Job): JobDetail {
  return {
    ...toListItem(job),
    updated_at: job.updatedAt.toISOString(),
    rate_limit: job.rateLimit,
    queries: job.queries,
    formats: job.formats,
    content: job.content,
    scheduling: job.scheduling,
    render_config: job.renderConfig,
    proxy_config: job.proxyConfig,
    crawl: job.crawl,
    change_tracking: job.changeTracking,
    request: maskRequest(job.request),
    retention_days: job.retentionDays,
    refetch: job.refetch,
    extract: job.extract && { schema: job.extract.schema, prompt: job.extract.prompt },
    last_run_id: job.lastRunId,
    mode: job.mode,
    origin: job.origin,
  };
}

export function toRunView(run: Run): RunView {
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
    skipped_urls: run.skippedUrls,
    error: run.error,
    base_run_id: run.baseRunId,
    changes: run.changes && {
      added: run.changes.added,
      removed: run.changes.removed,
      changed: run.changes.changed,
      unchanged: run.changes.unchanged,
    },
    health: run.health,
  };
}
