import type { Mode } from '@scrapejobs/db';
import type { KeyView } from '../deps.ts';
import { when } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { csrfField, type PageContext, page, postButton } from './layout.ts';

export const SCOPES = ['jobs:read', 'jobs:write', 'webhooks:read', 'webhooks:write'] as const;

export interface NewToken {
  name: string;
  token: string;
  replaced: boolean;
}

export interface KeyForm {
  name: string;
  mode: Mode;
  scopes: readonly string[];
  errors: Record<string, string>;
}

function tokenPanel(t: NewToken): SafeHtml {
  return html`<section class="panel panel-token" aria-labelledby="new-token-title">
  <h2 id="new-token-title">${t.replaced ? `Key “${t.name}” regenerated` : `New key “${t.name}”`}</h2>
  <p><strong>Copy this token now: it is shown only once.</strong> ${t.replaced ? 'The previous token no longer works.' : ''}</p>
  <div class="copy-row">
    <label for="new-token" class="visually-hidden">Token</label>
    <textarea id="new-token" class="token" rows="2" readonly spellcheck="false" autocomplete="off">${t.token}</textarea>
    <button type="button" class="btn btn-primary" data-copy="new-token">Copy</button>
  </div>
  <p class="muted small">Use it as <code>Authorization: Bearer &lt;token&gt;</code>.</p>
</section>`;
}

function keyRow(ctx: PageContext, k: KeyView): SafeHtml {
  return html`<tr>
  <td data-label="Name">${k.name}</td>
  <td data-label="Mode">${k.mode}</td>
  <td data-label="Scopes"><ul class="plain">${k.scopes.map((s) => html`<li>${s}</li>`)}</ul></td>
  <td data-label="Prefix" class="mono">${k.prefix}…</td>
  <td data-label="Created">${when(k.created_at)}</td>
  <td data-label="Last used">${k.last_used_at ? when(k.last_used_at) : html`<span class="muted">never</span>`}</td>
  <td class="row-actions"><div class="actions">
    ${postButton(ctx.csrf, `/console/keys/${k.key_id}/regenerate`, 'Regenerate', { title: `Regenerate ${k.name}: the current token stops working` })}
    ${postButton(ctx.csrf, `/console/keys/${k.key_id}/revoke`, 'Revoke', { variant: 'danger', title: `Revoke ${k.name}` })}
  </div></td>
</tr>`;
}

function generateForm(ctx: PageContext, form: KeyForm): SafeHtml {
  const err = (f: string) => form.errors[f] && html`<p class="error" id="err-key-${f}">${form.errors[f]}</p>`;
  const described = (f: string) =>
    form.errors[f] ? html` aria-describedby="err-key-${f}" aria-invalid="true"` : '';
  return html`<section class="panel" aria-labelledby="generate-title">
<h2 id="generate-title">Generate New Key</h2>
<form method="post" action="/console/keys" class="stack">
  ${csrfField(ctx.csrf)}
  <div class="field">
    <label for="key-name">Name</label>
    <input id="key-name" name="name" required maxlength="100" value="${form.name}"${described('name')}>
    ${err('name')}
  </div>
  <fieldset${described('mode')}>
    <legend>Mode</legend>
    ${(['test', 'live'] as const).map(
      (m) =>
        html`<label class="check"><input type="radio" name="mode" value="${m}"${form.mode === m ? html` checked` : ''}> ${m === 'test' ? 'Test (sk_test_…)' : 'Live (sk_live_…)'}</label>`,
    )}
    ${err('mode')}
  </fieldset>
  <fieldset${described('scopes')}>
    <legend>Scopes</legend>
    ${SCOPES.map(
      (s) =>
        html`<label class="check"><input type="checkbox" name="scopes" value="${s}"${form.scopes.includes(s) ? html` checked` : ''}> <code>${s}</code></label>`,
    )}
    ${err('scopes')}
  </fieldset>
  <div><button type="submit" class="btn btn-primary">Generate New Key</button></div>
</form>
</section>`;
}

export function keysPage(
  ctx: PageContext,
  keys: KeyView[],
  opts: { newToken?: NewToken | undefined; form?: KeyForm | undefined } = {},
): SafeHtml {
  const active = keys.filter((k) => !k.revoked_at);
  const revoked = keys.filter((k) => k.revoked_at);
  const form = opts.form ?? { name: '', mode: ctx.mode, scopes: SCOPES, errors: {} };
  return page(
    ctx,
    'keys',
    'API Keys',
    html`<h1>API Keys</h1>
<p class="lead">Keys authenticate requests to the API. A key's mode decides which jobs and webhooks it sees.</p>
${opts.newToken && tokenPanel(opts.newToken)}
<section aria-labelledby="keys-title">
<h2 id="keys-title">Active keys</h2>
${
  active.length === 0
    ? html`<p class="empty">No active keys. Generate one below.</p>`
    : html`<table class="cards">
<thead><tr><th scope="col">Name</th><th scope="col">Mode</th><th scope="col">Scopes</th><th scope="col">Prefix</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${active.map((k) => keyRow(ctx, k))}</tbody>
</table>`
}
</section>
${generateForm(ctx, form)}
${
  revoked.length > 0 &&
  html`<details class="panel">
<summary>Revoked keys (${revoked.length})</summary>
<table class="cards">
<thead><tr><th scope="col">Name</th><th scope="col">Mode</th><th scope="col">Prefix</th><th scope="col">Created</th><th scope="col">Revoked</th></tr></thead>
<tbody>${revoked.map(
    (k) =>
      html`<tr><td data-label="Name">${k.name}</td><td data-label="Mode">${k.mode}</td><td data-label="Prefix" class="mono">${k.prefix}…</td><td data-label="Created">${when(k.created_at)}</td><td data-label="Revoked">${when(k.revoked_at)}</td></tr>`,
  )}</tbody>
</table>
</details>`
}`,
  );
}
