import { type Content, FORMATS, type FormatName } from '@scrapejobs/contracts';
import { fieldError } from './fields.ts';
import { html, type SafeHtml } from './html.ts';

/** The page-content part of the job form as typed (docs/api.md §17). */
export interface ContentFormValues {
  /** The `formats` ticked. */
  formats: string[];
  onlyMainContent: boolean;
  /** CSS selectors, one per line. */
  includeTags: string;
  excludeTags: string;
}

export const emptyContentForm = (): ContentFormValues => ({
  formats: [],
  onlyMainContent: true,
  includeTags: '',
  excludeTags: '',
});

const FORMAT_LABELS: Record<FormatName, string> = {
  markdown: 'Markdown: the text with its headings, lists, tables and links',
  html: 'Clean HTML: the same content, without scripts or styles',
  raw_html: 'Raw HTML: the page as fetched or rendered',
  links: 'Links: every http(s) link of the page',
  metadata: 'Metadata: title, description, Open Graph, JSON-LD…',
  screenshot: 'Screenshot: a full-page PNG (turns rendering on)',
  summary: "Summary: a few sentences by the operator's language model",
};

/** The page-content fieldset of the job form: the formats, and which part of each page is kept. */
export function contentFieldset(v: ContentFormValues, errors: Record<string, string>): SafeHtml {
  const formats = fieldError(errors, 'err-formats', (k) => k === 'formats' || k.startsWith('formats['));
  const main = fieldError(errors, 'err-content', (k) => k === 'content' || k === 'content.only_main_content');
  const selectors = (name: 'include' | 'exclude') =>
    fieldError(
      errors,
      `err-content-${name}`,
      (k) => k === `content.${name}_tags` || k.startsWith(`${name} selector line `),
    );
  const include = selectors('include');
  const exclude = selectors('exclude');
  return html`<fieldset>
<legend>Page content</legend>
<p class="hint">Besides the queries’ records, keep a document of every page fetched, in these formats. With a format ticked, the queries may be left empty.</p>
<div class="checks" role="group" aria-label="Document formats"${formats.aria}>
${FORMATS.map((f) => html`<label class="check"><input type="checkbox" name="formats" value="${f}"${v.formats.includes(f) ? html` checked` : ''}> ${FORMAT_LABELS[f]}</label>`)}
</div>
${formats.text}
<label class="check"><input type="checkbox" name="content_main" value="1"${v.onlyMainContent ? html` checked` : ''}${main.aria}> Keep only the main content (no navigation, header, footer, asides, ads or cookie banners)</label>
${main.text}
<div class="field"><label for="content-include">Include selectors</label><p class="hint" id="hint-content-include">CSS selectors, one per line: only the elements they match are kept (when any is given).</p><textarea id="content-include" name="content_include" class="mono" rows="2"${include.aria || html` aria-describedby="hint-content-include"`}>${v.includeTags}</textarea>${include.text}</div>
<div class="field"><label for="content-exclude">Exclude selectors</label><p class="hint" id="hint-content-exclude">One per line: the elements they match are removed, such as <code>.cookie-banner</code>.</p><textarea id="content-exclude" name="content_exclude" class="mono" rows="2"${exclude.aria || html` aria-describedby="hint-content-exclude"`}>${v.excludeTags}</textarea>${exclude.text}</div>
</fieldset>`;
}

const selectorList = (list: string[]) =>
  list.length === 0
    ? html`<span class="muted">none</span>`
    : html`<ul class="plain">${list.map((s) => html`<li class="mono wrap">${s}</li>`)}</ul>`;

/** A job's formats and content settings for its page. */
export function contentSettings(formats: FormatName[], content: Content | null): SafeHtml {
  const kept =
    formats.length === 0
      ? html`none (records only)`
      : html`${formats.map((f, i) => html`${i > 0 ? ', ' : ''}<span class="mono">${f}</span>`)}`;
  if (formats.length === 0 && !content) return html`<dt>Page documents</dt><dd>${kept}</dd>`;
  const main = content?.only_main_content ?? true;
  return html`<dt>Page documents</dt><dd>${kept}</dd>
<dt>Page content</dt><dd>${main ? 'the main content only' : 'the whole body'}</dd>
<dt>Include selectors</dt><dd>${selectorList(content?.include_tags ?? [])}</dd>
<dt>Exclude selectors</dt><dd>${selectorList(content?.exclude_tags ?? [])}</dd>`;
}
