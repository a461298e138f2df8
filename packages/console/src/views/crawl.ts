import type { Crawl } from '@scrapejobs/contracts';
import { errorId, fieldError } from './fields.ts';
import { plural } from './format.ts';
import { html, type SafeHtml } from './html.ts';

/** The crawl part of the job form as typed (docs/api.md §11). */
export interface CrawlFormValues {
  enabled: boolean;
  follow: { type: string; query: string }[];
  maxDepth: string;
  maxPages: string;
  sameOrigin: boolean;
  robots: boolean;
  sitemap: boolean;
  /** One regular expression per line. */
  include: string;
  exclude: string;
}

export const FOLLOW_ROWS = 3;

export const emptyCrawlForm = (): CrawlFormValues => ({
  enabled: false,
  follow: Array.from({ length: FOLLOW_ROWS }, () => ({ type: 'css', query: '' })),
  maxDepth: '3',
  maxPages: '1000',
  sameOrigin: true,
  robots: true,
  sitemap: false,
  include: '',
  exclude: '',
});

/** The crawl fieldset of the job form, with the API's errors at each field. */
export function crawlFieldset(v: CrawlFormValues, errors: Record<string, string>): SafeHtml {
  const at = (key: string) => fieldError(errors, errorId(key), (k) => k === key);
  const follow = fieldError(errors, 'err-crawl-follow', (k) => k === 'crawl.follow');
  const depth = at('crawl.max_depth');
  const pages = at('crawl.max_pages');
  const patterns = (name: 'include' | 'exclude') =>
    fieldError(errors, `err-crawl-${name}`, (k) => k === `crawl.${name}` || k.startsWith(`${name} line `));
  const include = patterns('include');
  const exclude = patterns('exclude');
  const check = (name: string, on: boolean, label: string) =>
    html`<label class="check"><input type="checkbox" name="${name}" value="1"${on ? html` checked` : ''}> ${label}</label>`;
  return html`<fieldset>
<legend>Crawl</legend>
${check('crawl', v.enabled, 'Follow links from the fetched pages')}
<p class="hint">Each link query yields URLs to fetch next, such as <code>a.next::attr(href)</code> or <code>//a/@href</code>. Leave unused rows empty.</p>
${v.follow.map((q, i) => {
  const rowError = (f: string) => errors[`link row ${i + 1}: ${f}`];
  const rowAria = (f: string) =>
    rowError(f) ? html` aria-invalid="true" aria-describedby="err-crawl-f-${f}-${i}"` : '';
  const rowErr = (f: string) =>
    rowError(f) && html`<p class="error" id="err-crawl-f-${f}-${i}">${rowError(f)}</p>`;
  return html`<div class="query-row link-row">
  <div class="field"><label for="crawl-f-type-${i}">Link type ${i + 1}</label><select id="crawl-f-type-${i}" name="crawl_f_type_${i}"${rowAria('type')}>${(['css', 'xpath', 'regex'] as const).map((t) => html`<option value="${t}"${q.type === t ? html` selected` : ''}>${t}</option>`)}</select>${rowErr('type')}</div>
  <div class="field grow"><label for="crawl-f-query-${i}">Link query ${i + 1}</label><input id="crawl-f-query-${i}" name="crawl_f_query_${i}" class="mono" value="${q.query}" maxlength="2000"${rowAria('query')}>${rowErr('query')}</div>
</div>`;
})}
${follow.text}
<div class="grid-4">
<div class="field"><label for="crawl-depth">Maximum depth</label><input id="crawl-depth" name="crawl_max_depth" type="text" inputmode="numeric" value="${v.maxDepth}"${depth.aria}>${depth.text}</div>
<div class="field"><label for="crawl-pages">Maximum pages</label><input id="crawl-pages" name="crawl_max_pages" type="text" inputmode="numeric" value="${v.maxPages}"${pages.aria}>${pages.text}</div>
</div>
${check('crawl_same_origin', v.sameOrigin, 'Follow only links to the origins of the seed pages')}
${check('crawl_robots', v.robots, 'Respect robots.txt')}
${check('crawl_sitemap', v.sitemap, 'Add the URLs of the sites’ sitemaps')}
<div class="field"><label for="crawl-include">Include patterns</label><p class="hint" id="hint-crawl-include">JavaScript regular expressions, one per line: a followed link must match one of them (when any is given).</p><textarea id="crawl-include" name="crawl_include" class="mono" rows="2"${include.aria || html` aria-describedby="hint-crawl-include"`}>${v.include}</textarea>${include.text}</div>
<div class="field"><label for="crawl-exclude">Exclude patterns</label><p class="hint" id="hint-crawl-exclude">One per line: a link that matches any of them is not followed.</p><textarea id="crawl-exclude" name="crawl_exclude" class="mono" rows="2"${exclude.aria || html` aria-describedby="hint-crawl-exclude"`}>${v.exclude}</textarea>${exclude.text}</div>
</fieldset>`;
}

/** A job's crawl settings for its page. */
export function crawlSettings(crawl: Crawl | null): SafeHtml {
  if (!crawl) return html`<dt>Crawl</dt><dd>off (only the source URLs are fetched)</dd>`;
  const patterns = (list: string[]) =>
    list.length === 0
      ? html`<span class="muted">none</span>`
      : html`<ul class="plain">${list.map((p) => html`<li class="mono wrap">${p}</li>`)}</ul>`;
  return html`<dt>Crawl</dt><dd>links followed to depth ${crawl.max_depth}, at most ${plural(crawl.max_pages, 'page')} per run; ${crawl.same_origin ? 'same origins only' : 'any origin'}; robots.txt ${crawl.respect_robots_txt ? 'respected' : 'ignored'}; sitemaps ${crawl.sitemap ? 'read' : 'not read'}</dd>
<dt>Link queries</dt><dd><ul class="plain">${crawl.follow.map((q) => html`<li><span class="muted">${q.type}</span> <span class="mono wrap">${q.query}</span></li>`)}</ul></dd>
<dt>Include</dt><dd>${patterns(crawl.include)}</dd>
<dt>Exclude</dt><dd>${patterns(crawl.exclude)}</dd>`;
}
