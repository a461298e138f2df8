import type { JobListItem, JobStatusName, Scheduling } from '@scrapejobs/contracts';
import { type Job, type Run, toDetail } from '@scrapejobs/domain';
import type { StoredResult } from '../deps.ts';
import { emptyTrackingForm, type TrackingFormValues, trackingFieldset, trackingSettings } from './changes.ts';
import { type ContentFormValues, contentFieldset, contentSettings, emptyContentForm } from './content.ts';
import { type CrawlFormValues, crawlFieldset, crawlSettings, emptyCrawlForm } from './crawl.ts';
import { type ExtractFormValues, emptyExtractForm, extractFieldset, extractSettings } from './extract.ts';
import { badge, duration, plural, when } from './format.ts';
import { healthHistory } from './health.ts';
import { html, type SafeHtml } from './html.ts';
import { csrfField, type PageContext, page, postButton } from './layout.ts';
import { renderSettings, requestSettings } from './request.ts';

export const STATUSES: JobStatusName[] = ['scheduled', 'running', 'success', 'failed', 'paused'];
/** docs/api.md §3.8: the states from which a run may start. */
const STARTABLE: JobStatusName[] = ['scheduled', 'success', 'failed'];

export function jobsListPage(
  ctx: PageContext,
  opts: {
    jobs: JobListItem[];
    counts: Partial<Record<JobStatusName, number>>;
    status: JobStatusName | undefined;
    nextCursor: string | null;
  },
): SafeHtml {
  const total = Object.values(opts.counts).reduce((a, b) => a + (b ?? 0), 0);
  const filterLink = (s: JobStatusName | undefined, label: string, n: number) =>
    html`<li><a href="/console/jobs${s ? `?status=${s}` : ''}"${opts.status === s ? html` aria-current="true"` : ''} class="stat${s ? ` stat-${s}` : ''}"><span class="stat-n">${n}</span> <span class="stat-label">${label}</span></a></li>`;
  return page(
    ctx,
    'jobs',
    'Jobs',
    html`<div class="title-row"><h1>Jobs</h1><a class="btn btn-primary" href="/console/jobs/new">New job</a></div>
<nav aria-label="Filter jobs by status"><ul class="stats">
${filterLink(undefined, 'all', total)}
${STATUSES.map((s) => filterLink(s, s, opts.counts[s] ?? 0))}
</ul></nav>
${
  opts.jobs.length === 0
    ? html`<p class="empty">${opts.status ? `No ${opts.status} jobs.` : html`No jobs in ${ctx.mode} mode yet. <a href="/console/jobs/new">Create one</a>.`}</p>`
    : html`<table class="cards jobs">
<caption class="visually-hidden">Your ${ctx.mode}-mode jobs${opts.status ? `, ${opts.status}` : ''}, newest first</caption>
<thead><tr><th scope="col">Job</th><th scope="col">Status</th><th scope="col">Last run</th><th scope="col">Next run</th><th scope="col" class="num">Results</th></tr></thead>
<tbody>${opts.jobs.map(
        (j) => html`<tr>
<td data-label="Job"><a href="/console/jobs/${j.job_id}" class="strong">${j.name}</a><div class="muted small clip" title="${j.source}">${j.source}</div></td>
<td data-label="Status">${badge(j.status)}</td>
<td data-label="Last run">${when(j.last_run)}</td>
<td data-label="Next run">${when(j.next_run_at)}</td>
<td data-label="Results" class="num">${j.results_count}</td>
</tr>`,
      )}</tbody>
</table>`
}
${opts.nextCursor && html`<p><a href="/console/jobs?${new URLSearchParams({ ...(opts.status && { status: opts.status }), cursor: opts.nextCursor }).toString()}">Older jobs →</a></p>`}`,
  );
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

function describeSchedule(s: Scheduling | null): string {
  if (!s) return 'None (runs only when started)';
  const list = (v: number[] | undefined, every: string, f: (n: number) => string = String) =>
    v?.length ? v.map(f).join(', ') : every;
  const minutes = s.minutes?.length ? s.minutes : [0];
  return `minute ${minutes.join(', ')} of ${list(s.hours, 'every hour', (h) => `${h}h`)}, on ${list(s.days, 'every day', (d) => DAYS[d] ?? String(d))} (${s.timezone ?? 'UTC'})`;
}

const text = (v: unknown) => (v == null ? null : typeof v === 'string' ? v : JSON.stringify(v));

interface Preview {
  runId: string | null;
  queryNames: string[];
  items: StoredResult[];
}

export function jobDetailPage(
  ctx: PageContext,
  job: Job,
  runs: { latest: Run[]; ended: Run[] },
  preview: Preview,
  previewRun: Run | undefined,
): SafeHtml {
  const { queries } = job;
  const proxy = job.proxyConfig as {
    enabled?: boolean;
    rotation_strategy?: string;
    geo_targeting?: string;
  } | null;
  const base = `/console/jobs/${job.id}`;
  const canRun = STARTABLE.includes(job.status);
  const actions = html`<div class="actions" role="group" aria-label="Job actions">
${postButton(ctx.csrf, `${base}/run`, 'Run now', { variant: 'primary', disabled: !canRun, title: canRun ? 'Start a run now' : `A ${job.status} job cannot be started` })}
${postButton(ctx.csrf, `${base}/pause`, 'Pause', { disabled: job.status === 'paused', title: job.status === 'running' ? 'Pause: the running run is cancelled, its results kept' : 'Pause the schedule' })}
${postButton(ctx.csrf, `${base}/resume`, 'Resume', { disabled: job.status !== 'paused', title: 'Resume: the schedule is re-armed' })}
<a class="btn btn-plain" href="${base}">Refresh</a>
</div>`;

  const download = (query: string, label: string) =>
    html`<a class="btn btn-plain" href="${base}/download?${query}${preview.runId ? `&run_id=${preview.runId}` : ''}" download>${label}</a>`;
  const downloads = html`<div class="actions" role="group" aria-label="Download the latest results">
${(
  [
    ['json', 'JSON'],
    ['jsonl', 'JSON Lines'],
    ['csv', 'CSV'],
    ['xlsx', 'Excel (XLSX)'],
    ['sql', 'SQL'],
  ] as const
).map(([f, label]) => download(`format=${f}`, `Download ${label}`))}
${job.formats.length > 0 && download('content=documents&format=jsonl', 'Download documents (JSON Lines)')}
</div>`;

  return page(
    ctx,
    'jobs',
    job.name,
    html`<p class="crumbs"><a href="/console/jobs">Jobs</a> /</p>
<div class="title-row"><h1>${job.name}</h1>${badge(job.status)}</div>
${actions}
<dl class="facts">
  <div><dt>Status</dt><dd>${job.status}</dd></div>
  <div><dt>Last run</dt><dd>${when(job.lastRunAt)}</dd></div>
  <div><dt>Next run</dt><dd>${when(job.nextRunAt)}</dd></div>
  <div><dt>Results (latest run)</dt><dd>${job.resultsCount}</dd></div>
  <div><dt>Created</dt><dd>${when(job.createdAt)}</dd></div>
  <div><dt>Job id</dt><dd class="mono">${job.id}</dd></div>
</dl>

<section aria-labelledby="config-title" class="panel">
<h2 id="config-title">Configuration</h2>
<dl class="config">
  <dt>Source</dt><dd class="mono wrap">${job.source}</dd>
  <dt>Rate limit</dt><dd>${job.rateLimit} requests per minute</dd>
  <dt>Schedule</dt><dd>${describeSchedule(job.scheduling)}</dd>
  ${contentSettings(job.formats, job.content)}
  ${extractSettings(job.extract)}
  ${renderSettings(job.renderConfig)}
  <dt>Proxies</dt><dd>${proxy?.enabled ? `${proxy.rotation_strategy ?? 'round_robin'}${proxy.geo_targeting ? `, ${proxy.geo_targeting}` : ''}` : 'off'}</dd>
  ${crawlSettings(job.crawl)}
  ${trackingSettings(job.changeTracking)}
  ${requestSettings(toDetail(job).request)}
</dl>
${
  queries.length === 0
    ? html`<p class="empty">No queries: ${job.extract ? 'each page’s record is the object the language model extracts' : 'the job keeps its pages’ documents only'}.</p>`
    : html`<table class="cards">
<caption>Queries</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Query</th><th scope="col">Joined</th></tr></thead>
<tbody>${queries.map(
        (q) =>
          html`<tr><td data-label="Name" class="mono">${q.name}</td><td data-label="Type">${q.type}</td><td data-label="Query" class="mono wrap">${q.query}</td><td data-label="Joined">${q.join ? 'yes' : 'no'}</td></tr>`,
      )}</tbody>
</table>`
}
</section>

<section aria-labelledby="results-title" class="panel">
<h2 id="results-title">Latest results</h2>
${
  preview.runId === null
    ? html`<p class="empty">No finished run yet.</p>`
    : html`<p class="muted">Run <span class="mono">${preview.runId}</span>${previewRun ? html`, ${previewRun.status}, ${plural(previewRun.resultsCount, 'record')}` : ''}. ${preview.items.length ? `The first ${preview.items.length} are shown.` : ''}</p>
${
  preview.items.length === 0
    ? html`<p class="empty">This run produced no records.</p>`
    : html`<table class="cards results">
<caption class="visually-hidden">First records of the latest run</caption>
<thead><tr><th scope="col">URL</th>${preview.queryNames.map((n) => html`<th scope="col">${n}</th>`)}</tr></thead>
<tbody>${preview.items.map(
        (r) =>
          html`<tr><td data-label="URL" class="mono wrap">${r.url}</td>${preview.queryNames.map((n) => {
            const v = text(Object.hasOwn(r.data, n) ? r.data[n] : null);
            return html`<td data-label="${n}" class="wrap">${v ?? html`<span class="muted">null</span>`}</td>`;
          })}</tr>`,
      )}</tbody>
</table>`
}`
}
${downloads}
</section>

${healthHistory(job.id, runs.ended)}

<section aria-labelledby="runs-title" class="panel">
<h2 id="runs-title">Runs</h2>
${
  runs.latest.length === 0
    ? html`<p class="empty">The job has not run yet.</p>`
    : html`<table class="cards">
<caption class="visually-hidden">Runs, newest first</caption>
<thead><tr><th scope="col">Started</th><th scope="col">Status</th><th scope="col">Trigger</th><th scope="col">Duration</th><th scope="col" class="num">Records</th><th scope="col" class="num">URLs ok / failed / skipped</th><th scope="col">Error</th></tr></thead>
<tbody>${runs.latest.map((r) => {
        const { error } = r;
        return html`<tr>
<td data-label="Started"><a href="${base}/runs/${r.id}" title="The run and its URLs">${when(r.startedAt)}</a></td>
<td data-label="Status">${badge(r.status)}${r.health?.status === 'degraded' && html` ${badge('degraded')}`}</td>
<td data-label="Trigger">${r.trigger}</td>
<td data-label="Duration">${duration(r.durationMs)}</td>
<td data-label="Records" class="num">${r.resultsCount}</td>
<td data-label="URLs ok / failed / skipped" class="num">${r.successfulUrls} / ${r.failedUrls} / ${r.skippedUrls}</td>
<td data-label="Error" class="wrap">${error ? `${error.code} ${error.message}` : html`<span class="muted">—</span>`}</td>
</tr>`;
      })}</tbody>
</table>`
}
</section>`,
    '/console/jobs',
  );
}

export interface JobFormValues {
  name: string;
  source: string;
  rateLimit: string;
  queries: { name: string; type: string; query: string; join: boolean }[];
  schedule: boolean;
  minutes: string;
  hours: string;
  days: string;
  timezone: string;
  render: boolean;
  /** render_config.mode: `auto` renders only the pages that need it (docs/api.md §23). */
  renderMode: string;
  content: ContentFormValues;
  extract: ExtractFormValues;
  crawl: CrawlFormValues;
  tracking: TrackingFormValues;
}

/** The choices of render_config.mode, as the form offers them. */
const RENDER_MODE_CHOICES = [
  ['auto', 'Only pages that need it (fetched plainly first)'],
  ['always', 'Every page'],
] as const;

export const emptyJobForm = (): JobFormValues => ({
  name: '',
  source: '',
  rateLimit: '10',
  queries: [
    { name: '', type: 'css', query: '', join: false },
    { name: '', type: 'css', query: '', join: false },
    { name: '', type: 'css', query: '', join: false },
  ],
  schedule: false,
  minutes: '0',
  hours: '',
  days: '',
  timezone: 'UTC',
  render: false,
  renderMode: 'auto',
  content: emptyContentForm(),
  extract: emptyExtractForm(),
  crawl: emptyCrawlForm(),
  tracking: emptyTrackingForm(),
});

export function jobFormPage(ctx: PageContext, v: JobFormValues, errors: Record<string, string>): SafeHtml {
  const entries = Object.entries(errors);
  const err = (f: string) =>
    errors[f] && html`<p class="error" id="err-${f.replace(/\W/g, '-')}">${errors[f]}</p>`;
  const aria = (f: string) =>
    errors[f] ? html` aria-invalid="true" aria-describedby="err-${f.replace(/\W/g, '-')}"` : '';
  const field = (id: string, key: string, label: string, input: SafeHtml, hint?: string) =>
    html`<div class="field"><label for="${id}">${label}</label>${hint ? html`<p class="hint" id="hint-${id}">${hint}</p>` : ''}${input}${err(key)}</div>`;
  return page(
    ctx,
    'jobs',
    'New job',
    html`<p class="crumbs"><a href="/console/jobs">Jobs</a> /</p>
<h1>New job</h1>
<p class="lead">The job is created in <strong>${ctx.mode}</strong> mode.</p>
${
  entries.length > 0 &&
  html`<div class="flash flash-error" role="alert"><p>The job configuration is invalid:</p><ul>${entries.map(([k, m]) => html`<li><code>${k}</code>: ${m}</li>`)}</ul></div>`
}
<form method="post" action="/console/jobs" class="stack">
${csrfField(ctx.csrf)}
${field('job-name', 'name', 'Name', html`<input id="job-name" name="name" required maxlength="200" value="${v.name}"${aria('name')}>`)}
${field('job-source', 'source', 'Source URL', html`<input id="job-source" name="source" type="text" inputmode="url" required maxlength="2048" value="${v.source}"${errors.source ? html` aria-invalid="true" aria-describedby="hint-job-source err-source"` : html` aria-describedby="hint-job-source"`}>`, 'An http(s) URL; curl-style globs such as [1-10] or {a,b} expand to several pages.')}
${field('job-rate', 'rate_limit', 'Rate limit (requests per minute)', html`<input id="job-rate" name="rate_limit" type="text" inputmode="decimal" value="${v.rateLimit}"${aria('rate_limit')}>`)}
<fieldset>
<legend>Queries</legend>
<p class="hint">Each named query extracts values from every page. Leave unused rows empty.</p>
${v.queries.map((q, i) => {
  const rowError = (f: string) => errors[`query row ${i + 1}: ${f}`];
  const rowAria = (f: string) =>
    rowError(f) ? html` aria-invalid="true" aria-describedby="err-q-${f}-${i}"` : '';
  const rowErr = (f: string) => rowError(f) && html`<p class="error" id="err-q-${f}-${i}">${rowError(f)}</p>`;
  return html`<div class="query-row">
  <div class="field"><label for="q-name-${i}">Query ${i + 1} name</label><input id="q-name-${i}" name="q_name_${i}" value="${q.name}" maxlength="64"${rowAria('name')}>${rowErr('name')}</div>
  <div class="field"><label for="q-type-${i}">Type<span class="visually-hidden"> of query ${i + 1}</span></label><select id="q-type-${i}" name="q_type_${i}"${rowAria('type')}>${(['css', 'xpath', 'regex'] as const).map((t) => html`<option value="${t}"${q.type === t ? html` selected` : ''}>${t}</option>`)}</select>${rowErr('type')}</div>
  <div class="field grow"><label for="q-query-${i}">Expression<span class="visually-hidden"> of query ${i + 1}</span></label><input id="q-query-${i}" name="q_query_${i}" class="mono" value="${q.query}" maxlength="2000"${rowAria('query')}>${rowErr('query')}</div>
  <label class="check join"><input type="checkbox" name="q_join_${i}" value="1"${q.join ? html` checked` : ''}> Join matches<span class="visually-hidden"> of query ${i + 1}</span></label>
</div>`;
})}
<input type="hidden" name="q_rows" value="${v.queries.length}">
</fieldset>
<fieldset>
<legend>Schedule</legend>
<label class="check"><input type="checkbox" name="schedule" value="1"${v.schedule ? html` checked` : ''}> Run on a schedule</label>
<div class="grid-4">
${field('job-minutes', 'scheduling.minutes', 'Minutes', html`<input id="job-minutes" name="minutes" value="${v.minutes}" placeholder="0">`)}
${field('job-hours', 'scheduling.hours', 'Hours', html`<input id="job-hours" name="hours" value="${v.hours}" placeholder="every hour">`)}
${field('job-days', 'scheduling.days', 'Days (0 = Sunday)', html`<input id="job-days" name="days" value="${v.days}" placeholder="every day">`)}
${field('job-timezone', 'scheduling.timezone', 'Time zone', html`<input id="job-timezone" name="timezone" value="${v.timezone}">`)}
</div>
<p class="hint">Comma-separated numbers, like a cron line <code>m h * * d</code>.</p>
</fieldset>
<label class="check"><input type="checkbox" name="render" value="1"${v.render ? html` checked` : ''}> Render pages in a headless browser (for pages built by JavaScript)</label>
<div class="field"><label for="job-render-mode">Pages rendered</label><select id="job-render-mode" name="render_mode">${RENDER_MODE_CHOICES.map(([mode, label]) => html`<option value="${mode}"${v.renderMode === mode ? html` selected` : ''}>${label}</option>`)}</select></div>
${contentFieldset(v.content, errors)}
${extractFieldset(v.extract, errors)}
${crawlFieldset(v.crawl, errors)}
${trackingFieldset(v.tracking, errors)}
<div class="actions"><button type="submit" class="btn btn-primary">Create job</button>
<button type="submit" name="add_row" value="1" class="btn btn-plain" formnovalidate>Add a query row</button>
<a class="btn btn-plain" href="/console/jobs">Cancel</a></div>
</form>`,
  );
}
