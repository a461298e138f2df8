import {
  type ChangeTypeName,
  type ChangeView,
  type PageChangeView,
  type RunUrlView,
  URL_STATUSES,
  type UrlStatusName,
} from '@scrapejobs/contracts';
import type { Job, Page, Run } from '@scrapejobs/domain';
import { type ChangesTable, changesSection } from './changes.ts';
import { badge, duration, when } from './format.ts';
import { healthFact, healthReasons } from './health.ts';
import { html, type SafeHtml } from './html.ts';
import { type PageContext, page } from './layout.ts';

const dash = html`<span class="muted">—</span>`;
const orDash = (v: number | null) => (v === null ? dash : v);

/**
 * The console's address of a URL's screenshot: the API's `screenshot_url` ends with the URL's
 * number (`…/screenshots/<n>`), which the console route takes as well.
 */
function screenshotPath(base: string, apiUrl: string): string {
  return `${base}/screenshots/${encodeURIComponent(apiUrl.slice(apiUrl.lastIndexOf('/') + 1))}`;
}

function urlRow(u: RunUrlView, base: string, shots: boolean): SafeHtml {
  const shot = u.screenshot_url && screenshotPath(base, u.screenshot_url);
  return html`<tr>
<td data-label="URL"><span class="mono wrap">${u.url}</span>${u.parent_url ? html`<div class="muted small wrap">found on <span class="mono">${u.parent_url}</span></div>` : ''}</td>
<td data-label="Status">${badge(u.status)}</td>
<td data-label="Depth" class="num">${u.depth}</td>
<td data-label="HTTP" class="num">${orDash(u.http_status)}${u.unchanged ? html` <span class="muted small" title="Not changed since its last successful run: its records and document were copied">unchanged</span>` : ''}${u.rendered ? html` <span class="muted small" title="Rendered in a headless browser${u.render_reason ? ` (${u.render_reason})` : ''}">rendered</span>` : ''}</td>
<td data-label="Records" class="num">${orDash(u.records)}</td>
<td data-label="Duration">${u.duration_ms === null ? dash : duration(u.duration_ms)}</td>
<td data-label="Fetched">${when(u.fetched_at)}</td>
<td data-label="Error" class="wrap">${u.error ? html`<span><code>${u.error.code}</code> ${u.error.message}</span>` : dash}</td>
${shots && html`<td data-label="Screenshot">${shot ? html`<a class="thumb" href="${shot}"><img src="${shot}" loading="lazy" width="120" alt="Screenshot of ${u.url}"></a>` : dash}</td>`}
</tr>`;
}

/** The formats of a run's documents, from the settings it started with (none: it kept no documents). */
export function runFormats(run: Run): string[] {
  const formats = (run.settings as { formats?: unknown } | null)?.formats;
  return Array.isArray(formats) ? formats.filter((f): f is string => typeof f === 'string') : [];
}

/** The run's views: its overview (URLs, changes) and its pages' documents, when it kept any. */
export function runTabs(jobId: string, run: Run, current: 'overview' | 'documents'): SafeHtml | '' {
  if (current === 'overview' && runFormats(run).length === 0) return '';
  const base = `/console/jobs/${jobId}/runs/${run.id}`;
  const tab = (name: typeof current, href: string, label: string) =>
    html`<li><a class="tab" href="${href}"${name === current ? html` aria-current="page"` : ''}>${label}</a></li>`;
  return html`<nav aria-label="Views of the run"><ul class="tab-list">
${tab('overview', base, 'Overview')}
${tab('documents', `${base}/documents`, 'Documents')}
</ul></nav>`;
}

/** The state of the run page in its address: each table's filter and cursor. */
export interface RunPageState {
  status?: UrlStatusName | undefined;
  cursor?: string | undefined;
  change?: ChangeTypeName | undefined;
  change_cursor?: string | undefined;
}

/**
 * A run of a job: its health, what changed against its base run (docs/api.md §13, a page of
 * changes filterable by type) and one page of its URLs (§12), filterable by status.
 */
export function runPage(
  ctx: PageContext,
  job: Job,
  run: Run,
  urls: Page<RunUrlView>,
  changes: Page<ChangeView | PageChangeView> | null,
  state: RunPageState,
): SafeHtml {
  const base = `/console/jobs/${job.id}/runs/${run.id}`;
  // Each table's links keep the other table's filter and page.
  const query = (params: RunPageState) => {
    const entries = Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined);
    return entries.length ? `?${new URLSearchParams(entries).toString()}` : '';
  };
  const { change, change_cursor, ...urlState } = state;
  const changeState = { change, change_cursor };
  const filterLink = (s: UrlStatusName | undefined) =>
    html`<li><a href="${base}${query({ status: s, ...changeState })}"${state.status === s ? html` aria-current="true"` : ''} class="stat${s ? ` stat-${s}` : ''}"><span class="stat-label">${s ?? 'all'}</span></a></li>`;
  const table: ChangesTable = {
    page: changes,
    type: change,
    link: (type, cursor) => `${base}${query({ ...urlState, change: type, change_cursor: cursor })}#changes`,
  };
  const { error } = run;
  // The column is there only when a URL of this page has a screenshot.
  const shots = urls.items.some((u) => u.screenshot_url !== null);
  return page(
    ctx,
    'jobs',
    `Run of ${job.name}`,
    html`<p class="crumbs"><a href="/console/jobs">Jobs</a> / <a href="/console/jobs/${job.id}">${job.name}</a> /</p>
<div class="title-row"><h1>Run <span class="mono">${run.id}</span></h1>${badge(run.status)}</div>
${runTabs(job.id, run, 'overview')}
<div class="actions"><a class="btn btn-plain" href="${base}${query({ ...urlState, ...changeState, cursor: undefined, change_cursor: undefined })}">Refresh</a></div>
<dl class="facts">
  <div><dt>Trigger</dt><dd>${run.trigger}</dd></div>
  <div><dt>Started</dt><dd>${when(run.startedAt)}</dd></div>
  <div><dt>Finished</dt><dd>${when(run.finishedAt)}</dd></div>
  <div><dt>Duration</dt><dd>${duration(run.durationMs)}</dd></div>
  <div><dt>Records</dt><dd>${run.resultsCount}</dd></div>
  <div><dt>URLs ok</dt><dd>${run.successfulUrls}</dd></div>
  <div><dt>URLs failed</dt><dd>${run.failedUrls}</dd></div>
  <div><dt>URLs skipped</dt><dd>${run.skippedUrls}</dd></div>
  ${healthFact(run.health)}
</dl>
${error && html`<div class="flash flash-error"><p><code>${error.code}</code> ${error.message}</p></div>`}
${healthReasons(run.health)}

${changesSection(job, run, table)}

<section aria-labelledby="urls-title" class="panel">
<h2 id="urls-title">URLs</h2>
<nav aria-label="Filter URLs by status"><ul class="stats">
${filterLink(undefined)}
${URL_STATUSES.map((s) => filterLink(s))}
</ul></nav>
${
  urls.items.length === 0
    ? html`<p class="empty">${state.status ? `No ${state.status} URLs.` : 'The run has no URLs yet.'}</p>`
    : html`<table class="cards urls">
<caption class="visually-hidden">URLs of the run${state.status ? `, ${state.status}` : ''}, in the order accepted</caption>
<thead><tr><th scope="col">URL</th><th scope="col">Status</th><th scope="col" class="num">Depth</th><th scope="col" class="num">HTTP</th><th scope="col" class="num">Records</th><th scope="col">Duration</th><th scope="col">Fetched</th><th scope="col">Error</th>${shots && html`<th scope="col">Screenshot</th>`}</tr></thead>
<tbody>${urls.items.map((u) => urlRow(u, base, shots))}</tbody>
</table>`
}
${urls.nextCursor && html`<p><a href="${base}${query({ status: state.status, cursor: urls.nextCursor, ...changeState })}">Next URLs →</a></p>`}
</section>`,
    '/console/jobs',
  );
}
