import type { RenderAction, RenderConfig, RequestSettings } from '@scrapejobs/contracts';
import { duration, plural } from './format.ts';
import { html, type SafeHtml } from './html.ts';

const none = html`<span class="muted">none</span>`;
// A typed text can be long (10,000 characters): the page shows its start.
const TYPED_SHOWN = 60;
const clip = (s: string) => (s.length > TYPED_SHOWN ? `${s.slice(0, TYPED_SHOWN)}…` : s);
const code = (s: string) => html`<code class="wrap">${s}</code>`;

/**
 * A job's request settings for its page (docs/api.md §14), from the job's detail: its secrets
 * are already the mask there, and the stored (sealed) values never reach a view.
 */
export function requestSettings(request: RequestSettings | null): SafeHtml {
  const note = html`<p class="hint">Headers, cookies and credentials are set through the API (the job’s <code>request</code> field). Their secret values are never shown, here or in the API.</p>`;
  if (!request)
    return html`<dt>Request</dt><dd>the service’s defaults: no headers, cookies or credentials of the job${note}</dd>`;
  const headers = Object.entries(request.headers);
  return html`<dt>Request</dt><dd>sent with every fetch and render of the job’s pages${note}</dd>
<dt>Headers</dt><dd>${
    headers.length === 0
      ? none
      : html`<ul class="plain">${headers.map(([name, value]) => html`<li><span class="mono">${name}</span>: <span class="mono">${value}</span></li>`)}</ul>`
  }</dd>
<dt>Cookies</dt><dd>${
    request.cookies.length === 0
      ? none
      : html`<ul class="plain">${request.cookies.map((c) => html`<li><span class="mono">${c.name}</span> = <span class="mono">${c.value}</span> <span class="muted">for</span> <span class="mono wrap">${c.domain ?? 'the source’s host'}${c.path}</span></li>`)}</ul>`
  }</dd>
<dt>Basic auth</dt><dd>${
    request.basic_auth
      ? html`user <span class="mono">${request.basic_auth.username}</span>, password <span class="mono">${request.basic_auth.password}</span>`
      : none
  }</dd>
<dt>Authorization</dt><dd>${request.authorization ? html`<span class="mono">${request.authorization}</span>` : none}</dd>
<dt>User agent</dt><dd>${request.user_agent ? html`<span class="mono wrap">${request.user_agent}</span>` : html`<span class="muted">the service’s</span>`}</dd>`;
}

function describeAction(a: RenderAction): SafeHtml {
  switch (a.type) {
    case 'click':
      return a.all ? html`click every ${code(a.selector)}` : html`click ${code(a.selector)}`;
    case 'type':
      return html`type “${clip(a.text)}” into ${code(a.selector)}`;
    case 'press':
      return html`press <kbd>${a.key}</kbd>`;
    case 'wait_for':
      return html`wait for ${code(a.selector)} (at most ${duration(a.timeout_ms)})`;
    case 'wait':
      return html`wait ${duration(a.ms)}`;
    case 'scroll':
      return html`scroll ${a.selector ? html`${code(a.selector)} ` : ''}to the ${a.to}${a.times > 1 ? `, ${plural(a.times, 'time')}` : ''}`;
    case 'execute_javascript':
      return html`run a script (${plural(a.script.length, 'character')})`;
  }
}

/** A job's rendering settings for its page: the wait, the page actions in order, screenshots. */
export function renderSettings(render: RenderConfig | null): SafeHtml {
  if (!render?.enabled) return html`<dt>Rendering</dt><dd>off (plain HTTP)</dd>`;
  const pages = render.mode === 'auto' ? 'the pages that need it (each fetched plainly first)' : 'every page';
  return html`<dt>Rendering</dt><dd>headless browser for ${pages}, wait for ${render.wait_strategy}</dd>
<dt>Page actions</dt><dd>${
    render.actions.length === 0
      ? none
      : html`<ol class="steps">${render.actions.map((a) => html`<li>${describeAction(a)}</li>`)}</ol>`
  }</dd>
<dt>Screenshots</dt><dd>${render.screenshot ? 'a full-page PNG kept with each rendered URL' : 'not kept'}</dd>`;
}
