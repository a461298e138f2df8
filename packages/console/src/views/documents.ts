import type { DocumentView } from '@scrapejobs/contracts';
import type { Job, Run } from '@scrapejobs/domain';
import { badge } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { type PageContext, page } from './layout.ts';
import { runFormats, runTabs } from './runs.ts';

// Everything a document holds came from the page fetched: untrusted. It is shown as text, always
// escaped by `html`; markdown and HTML in <pre>, never rendered.

/** HTML shown of a document's html and raw_html, at most: the download has them whole. */
const HTML_SHOWN = 200_000;

const none = html`<span class="muted">none</span>`;
const dash = html`<span class="muted">—</span>`;

const runBase = (job: Job, run: Run) => `/console/jobs/${job.id}/runs/${run.id}`;

/** The console's address of one document of a run. */
export const documentPath = (job: Job, run: Run, url: string) =>
  `${runBase(job, run)}/documents/view?${new URLSearchParams({ url }).toString()}`;

function crumbs(job: Job, run: Run, documents = false): SafeHtml {
  return html`<p class="crumbs"><a href="/console/jobs">Jobs</a> / <a href="/console/jobs/${job.id}">${job.name}</a> / <a href="${runBase(job, run)}">Run <span class="mono">${run.id}</span></a> /${documents ? html` <a href="${runBase(job, run)}/documents">Documents</a> /` : ''}</p>`;
}

const truncatedText = (names: string[]) => (names.length === 0 ? 'no' : names.join(', '));

/** One page of a run's documents (docs/api.md §17): URL, HTTP status, what was cut; each links to its view. */
export function documentsPage(
  ctx: PageContext,
  job: Job,
  run: Run,
  list: { items: DocumentView[]; nextCursor: string | null },
): SafeHtml {
  const formats = runFormats(run);
  const empty =
    formats.length === 0
      ? 'This run kept no documents: its job had no formats when it started (choose them on a new job, under “Page content”).'
      : run.status === 'running'
        ? 'No documents yet: they are kept as the run fetches its pages.'
        : 'This run kept no documents.';
  return page(
    ctx,
    'jobs',
    `Documents of a run of ${job.name}`,
    html`${crumbs(job, run)}
<div class="title-row"><h1>Documents</h1>${badge(run.status)}</div>
${runTabs(job.id, run, 'documents')}
<section aria-labelledby="documents-title" class="panel">
<h2 id="documents-title">Pages</h2>
${formats.length > 0 && html`<p class="muted">Each page fetched, in the run’s URL order, with its ${formats.join(', ')}.</p>`}
${
  list.items.length === 0
    ? html`<p class="empty">${empty}</p>`
    : html`<table class="cards documents">
<caption class="visually-hidden">Documents of the run, in its URL order</caption>
<thead><tr><th scope="col">URL</th><th scope="col" class="num">HTTP status</th><th scope="col">Truncated</th></tr></thead>
<tbody>${list.items.map(
        (d) => html`<tr>
<td data-label="URL"><a class="mono wrap" href="${documentPath(job, run, d.url)}">${d.url}</a></td>
<td data-label="HTTP status" class="num">${d.status_code ?? dash}</td>
<td data-label="Truncated">${truncatedText(d.truncated)}</td>
</tr>`,
      )}</tbody>
</table>`
}
${list.nextCursor && html`<p><a href="${runBase(job, run)}/documents?${new URLSearchParams({ cursor: list.nextCursor }).toString()}">Next documents →</a></p>`}
</section>`,
    '/console/jobs',
  );
}

/** A metadata value: text, a nested key/value list (og, twitter), or JSON (json_ld, anything else). */
function metadataValue(name: string, value: unknown): SafeHtml | string {
  if (value === null || value === undefined || value === '') return none;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return html`<span class="wrap">${String(value)}</span>`;
  if (name === 'json_ld' && Array.isArray(value))
    return value.length === 0
      ? none
      : html`${value.map((block) => html`<pre class="text">${JSON.stringify(block, null, 2)}</pre>`)}`;
  if (typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return none;
    if (entries.every(([, v]) => typeof v === 'string'))
      return html`<dl class="record">${entries.map(([k, v]) => html`<div><dt>${k}</dt><dd>${v as string}</dd></div>`)}</dl>`;
  }
  return html`<pre class="text">${JSON.stringify(value, null, 2)}</pre>`;
}

function metadataSection(metadata: DocumentView['metadata']): SafeHtml {
  const body = !metadata
    ? html`<p class="empty">Not kept: the run’s formats leave metadata out.</p>`
    : html`<table class="kv metadata">
<caption class="visually-hidden">Metadata of the page</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
<tbody>${Object.entries(metadata).map(
        ([name, value]) =>
          html`<tr><th scope="row" class="mono">${name}</th><td>${metadataValue(name, value)}</td></tr>`,
      )}</tbody>
</table>`;
  return html`<section aria-labelledby="metadata-title" class="panel">
<h2 id="metadata-title">Metadata</h2>
${body}
</section>`;
}

/** A link of the page: a link only when it is http(s), never any other scheme. */
const linkItem = (href: string) =>
  /^https?:\/\//i.test(href)
    ? html`<li><a class="mono wrap" href="${href}" rel="noreferrer nofollow">${href}</a></li>`
    : html`<li class="mono wrap">${href}</li>`;

/** Markup of the page (html, raw_html) as text, cut for the page when long. */
function markupBlock(title: string, text: string | undefined): SafeHtml | '' {
  if (text === undefined) return '';
  const cut = text.length > HTML_SHOWN;
  return html`<details class="panel">
<summary>${title} (${text.length.toLocaleString('en')} characters)</summary>
${cut && html`<p class="muted">The first ${HTML_SHOWN.toLocaleString('en')} characters; the download has it whole.</p>`}
<pre class="text">${cut ? text.slice(0, HTML_SHOWN) : text}</pre>
</details>`;
}

/** One document: its facts, metadata as a table, markdown as preformatted text, links as a list. */
export function documentPage(ctx: PageContext, job: Job, run: Run, doc: DocumentView): SafeHtml {
  const finalUrl = doc.metadata?.url;
  return page(
    ctx,
    'jobs',
    `Document of ${job.name}`,
    html`${crumbs(job, run, true)}
<h1>Document</h1>
<p class="mono wrap">${doc.url}</p>
${runTabs(job.id, run, 'documents')}
<dl class="facts">
  <div><dt>HTTP status</dt><dd>${doc.status_code ?? dash}</dd></div>
  <div><dt>Final URL</dt><dd>${finalUrl && finalUrl !== doc.url ? html`<span class="mono">${finalUrl}</span>` : 'the same'}</dd></div>
  <div><dt>Truncated</dt><dd>${truncatedText(doc.truncated)}</dd></div>
</dl>
${metadataSection(doc.metadata)}
<section aria-labelledby="markdown-title" class="panel">
<h2 id="markdown-title">Markdown</h2>
${
  doc.markdown === undefined
    ? html`<p class="empty">Not kept: the run’s formats leave markdown out.</p>`
    : doc.markdown === ''
      ? html`<p class="empty">The page has no text.</p>`
      : html`<pre class="text markdown">${doc.markdown}</pre>`
}
</section>
${
  doc.links &&
  html`<section aria-labelledby="links-title" class="panel">
<h2 id="links-title">Links (${doc.links.length})</h2>
${doc.links.length === 0 ? html`<p class="empty">The page links nowhere.</p>` : html`<ol class="links">${doc.links.map(linkItem)}</ol>`}
</section>`
}
${markupBlock('Clean HTML', doc.html)}
${markupBlock('Raw HTML', doc.raw_html)}`,
    '/console/jobs',
  );
}
