import {
  CHANGE_TYPES,
  type ChangeTracking,
  type ChangeTypeName,
  type ChangeView,
  MAX_KEY_NAMES,
  type PageChangeView,
} from '@scrapejobs/contracts';
import type { Job, Page, Run } from '@scrapejobs/domain';
import { fieldError } from './fields.ts';
import { html, type SafeHtml } from './html.ts';

/** The change-tracking part of the job form as typed (docs/api.md §13). */
export interface TrackingFormValues {
  enabled: boolean;
  /** Key names, comma separated; empty = the whole record. */
  key: string;
  /** Compare each page's markdown too (`change_tracking.content`). */
  content: boolean;
}

export const emptyTrackingForm = (): TrackingFormValues => ({ enabled: false, key: '', content: false });

/** The change-tracking fieldset of the job form, with the API's errors at the key field. */
export function trackingFieldset(v: TrackingFormValues, errors: Record<string, string>): SafeHtml {
  const error = fieldError(
    errors,
    'err-change-tracking',
    (k) => k === 'change_tracking' || k.startsWith('change_tracking.') || k.startsWith('key name '),
  );
  return html`<fieldset>
<legend>Change tracking</legend>
<label class="check"><input type="checkbox" name="change_tracking" value="1"${v.enabled ? html` checked` : ''}> Track what is added, removed and changed between runs</label>
<div class="field"><label for="tracking-key">Key names</label><p class="hint" id="hint-tracking-key">Comma separated, at most ${MAX_KEY_NAMES}: <code>url</code> or query names whose values identify an item, such as <code>url, title</code>. Leave empty to compare whole records.</p><input id="tracking-key" name="change_tracking_key" class="mono" value="${v.key}" maxlength="400"${error.aria || html` aria-describedby="hint-tracking-key"`}>${error.text}</div>
<label class="check"><input type="checkbox" name="change_tracking_content" value="1"${v.content ? html` checked` : ''}> Compare each page’s markdown too, and show what changed in it</label>
</fieldset>`;
}

/** A job's change-tracking setting for its page. */
export function trackingSettings(tracking: ChangeTracking | null): SafeHtml {
  const text = !tracking
    ? 'off'
    : tracking.key.length === 0
      ? 'on: an item is identified by its whole record'
      : html`on: an item is identified by ${tracking.key.map((n, i) => html`${i > 0 ? ', ' : ''}<span class="mono">${n}</span>`)}`;
  return html`<dt>Change tracking</dt><dd>${text}${tracking?.content ? '; each page’s markdown is compared too' : ''}</dd>`;
}

type Values = Record<string, unknown>;

/** A value as text: a query's string, or an extracted field's JSON (docs/api.md §24). */
const value = (v: unknown) =>
  v == null
    ? html`<span class="muted">null</span>`
    : html`<span class="wrap">${typeof v === 'string' ? v : JSON.stringify(v)}</span>`;

/** A record as name/value pairs; in a changed item, the changed names show old → new, marked. */
function record(shown: Values, change?: { previous: Values; fields: string[] }): SafeHtml {
  const names = [...Object.keys(shown), ...Object.keys(change?.previous ?? {})].filter(
    (n, i, all) => all.indexOf(n) === i,
  );
  return html`<dl class="record">${names.map((n) => {
    if (!change?.fields.includes(n)) return html`<div><dt>${n}</dt><dd>${value(shown[n])}</dd></div>`;
    return html`<div class="changed"><dt>${n}</dt><dd><span class="visually-hidden">changed from </span><del>${value(change.previous[n])}</del> <span aria-hidden="true">→</span><span class="visually-hidden"> to</span> <mark>${value(shown[n])}</mark></dd></div>`;
  })}</dl>`;
}

/** A page whose markdown changed: its URL, and the unified diff as text (never as markup). */
function pageChangeRow(c: PageChangeView): SafeHtml {
  return html`<tr class="change-${c.type} change-page">
<td data-label="Change"><span class="badge badge-change-${c.type}">${c.type}</span> <span class="muted small">page</span></td>
<td data-label="Page"><span class="mono wrap">${c.url}</span></td>
<td data-label="Markdown diff">${c.diff ? html`<pre class="text diff">${c.diff}</pre>` : html`<span class="muted">no diff</span>`}</td>
</tr>`;
}

type ChangeItem = ChangeView | PageChangeView;

function changeRow(c: ChangeItem, wholeRecordKey: boolean): SafeHtml {
  if ('kind' in c) return pageChangeRow(c);
  const shown =
    c.type === 'changed' && c.data && c.previous
      ? record(c.data, { previous: c.previous, fields: c.changed_fields })
      : record(c.data ?? c.previous ?? {});
  return html`<tr class="change-${c.type}">
<td data-label="Change"><span class="badge badge-change-${c.type}">${c.type}</span></td>
<td data-label="Key">${wholeRecordKey ? html`<span class="muted">whole record</span>` : record(c.key)}</td>
<td data-label="${c.type === 'removed' ? 'Previous record' : 'Record'}">${shown}</td>
</tr>`;
}

/** The run page's view of the changes table: its filter, and the link to a state of the page. */
export interface ChangesTable {
  page: Page<ChangeItem> | null;
  type: ChangeTypeName | undefined;
  /** The run page's address with the changes filter and cursor set (other state kept). */
  link(type: ChangeTypeName | undefined, cursor?: string): string;
}

/** Why a run has no comparison: the job does not track changes, or the run is not compared yet. */
function notCompared(job: Job, run: Run): string {
  if (!job.changeTracking) return 'This job does not track changes between runs.';
  if (run.status === 'running') return 'The run is compared with the previous one when it ends.';
  if (run.status === 'cancelled') return 'Cancelled runs are not compared.';
  return 'This run has not been compared with an earlier run yet.';
}

/** The run's change summary and one page of its changes, or why there are none. */
export function changesSection(job: Job, run: Run, table: ChangesTable): SafeHtml {
  const { changes } = run;
  const intro =
    !job.changeTracking || !changes || !table.page
      ? html`<p class="empty">${notCompared(job, run)}</p>`
      : html`<p>${
          run.baseRunId
            ? html`Compared with <a href="/console/jobs/${job.id}/runs/${run.baseRunId}">run <span class="mono">${run.baseRunId}</span></a>.`
            : 'The first compared run: every item is added.'
        }</p>
<dl class="facts change-summary">
  <div><dt>Added</dt><dd>${changes.added}</dd></div>
  <div><dt>Removed</dt><dd>${changes.removed}</dd></div>
  <div><dt>Changed</dt><dd>${changes.changed}</dd></div>
  <div><dt>Unchanged</dt><dd>${changes.unchanged}</dd></div>
  <div><dt>Duplicate keys</dt><dd>${changes.duplicate_keys}</dd></div>
</dl>
${
  changes.pages &&
  html`<dl class="facts change-summary" aria-label="Pages">
  <div><dt>Pages added</dt><dd>${changes.pages.added}</dd></div>
  <div><dt>Pages removed</dt><dd>${changes.pages.removed}</dd></div>
  <div><dt>Pages changed</dt><dd>${changes.pages.changed}</dd></div>
  <div><dt>Pages unchanged</dt><dd>${changes.pages.unchanged}</dd></div>
</dl>`
}`;
  return html`<section aria-labelledby="changes" class="panel">
<h2 id="changes">Changes</h2>
${intro}
${table.page && changesTable(table.page, table, job.changeTracking?.key.length === 0)}
</section>`;
}

function changesTable(page: Page<ChangeItem>, table: ChangesTable, wholeRecordKey: boolean): SafeHtml {
  const filterLink = (t: ChangeTypeName | undefined) =>
    html`<li><a href="${table.link(t)}"${table.type === t ? html` aria-current="true"` : ''} class="stat"><span class="stat-label">${t ?? 'all'}</span></a></li>`;
  return html`<nav aria-label="Filter changes by type"><ul class="stats">
${filterLink(undefined)}
${CHANGE_TYPES.map((t) => filterLink(t))}
</ul></nav>
${
  page.items.length === 0
    ? html`<p class="empty">${table.type ? `No ${table.type} items.` : 'Nothing was added, removed or changed.'}</p>`
    : html`<table class="cards changes">
<caption class="visually-hidden">${table.type ? `${table.type} items` : 'Added, removed and changed items'}, in result order</caption>
<thead><tr><th scope="col">Change</th>${
        page.items.some((c) => 'kind' in c)
          ? html`<th scope="col">Key or page</th><th scope="col">Record or markdown diff</th>`
          : html`<th scope="col">Key</th><th scope="col">Record</th>`
      }</tr></thead>
<tbody>${page.items.map((c) => changeRow(c, wholeRecordKey))}</tbody>
</table>`
}
${page.nextCursor && html`<p><a href="${table.link(table.type, page.nextCursor)}">Next changes →</a></p>`}`;
}
