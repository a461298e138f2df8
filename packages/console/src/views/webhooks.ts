import { WEBHOOK_EVENTS } from '@scrapejobs/contracts';
import type { DeliveryRow, WebhookRow } from '../deps.ts';
import { badge, duration, when } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { csrfField, type PageContext, page, postButton } from './layout.ts';

export interface WebhookFormValues {
  url: string;
  events: readonly string[];
  secret: string;
  description: string;
}

function createForm(ctx: PageContext, v: WebhookFormValues, errors: Record<string, string>): SafeHtml {
  const key = (f: string) => `err-wh-${f.replace(/\W/g, '-')}`;
  const err = (f: string) => errors[f] && html`<p class="error" id="${key(f)}">${errors[f]}</p>`;
  const aria = (f: string) => (errors[f] ? html` aria-invalid="true" aria-describedby="${key(f)}"` : '');
  const eventsError = Object.entries(errors).find(([k]) => k.startsWith('events'))?.[1];
  return html`<section class="panel" aria-labelledby="new-webhook-title">
<h2 id="new-webhook-title">Add a webhook</h2>
<form method="post" action="/console/webhooks" class="stack">
${csrfField(ctx.csrf)}
<div class="field"><label for="wh-url">Endpoint URL</label>
<input id="wh-url" name="url" type="text" inputmode="url" required maxlength="2048" value="${v.url}" placeholder="${ctx.mode === 'live' ? 'https://…' : 'https:// or http://…'}"${aria('url')}>${err('url')}</div>
<fieldset${eventsError ? html` aria-describedby="err-wh-events" aria-invalid="true"` : ''}>
<legend>Events</legend>
${WEBHOOK_EVENTS.map(
  (e) =>
    html`<label class="check"><input type="checkbox" name="events" value="${e}"${v.events.includes(e) ? html` checked` : ''}> <code>${e}</code></label>`,
)}
${eventsError && html`<p class="error" id="err-wh-events">${eventsError}</p>`}
</fieldset>
<div class="field"><label for="wh-secret">Signing secret</label>
<p class="hint" id="hint-wh-secret">16 to 256 characters; the receiver checks signatures with it. It is never shown again.</p>
<div class="copy-row"><input id="wh-secret" name="secret" class="mono" required minlength="16" maxlength="256" value="${v.secret}" autocomplete="off" spellcheck="false"${errors.secret ? html` aria-invalid="true" aria-describedby="hint-wh-secret err-wh-secret"` : html` aria-describedby="hint-wh-secret"`}>
<button type="button" class="btn btn-plain" data-copy="wh-secret">Copy</button></div>${err('secret')}</div>
<div class="field"><label for="wh-description">Description (optional)</label>
<input id="wh-description" name="description" maxlength="500" value="${v.description}"${aria('description')}>${err('description')}</div>
<div><button type="submit" class="btn btn-primary">Add webhook</button></div>
</form>
</section>`;
}

export function webhooksPage(
  ctx: PageContext,
  hooks: WebhookRow[],
  form: WebhookFormValues,
  errors: Record<string, string> = {},
): SafeHtml {
  return page(
    ctx,
    'webhooks',
    'Webhooks',
    html`<h1>Webhooks</h1>
<p class="lead">Endpoints that receive signed events of every ${ctx.mode}-mode job.</p>
${
  hooks.length === 0
    ? html`<p class="empty">No webhooks in ${ctx.mode} mode.</p>`
    : html`<table class="cards">
<caption class="visually-hidden">Your ${ctx.mode}-mode webhooks</caption>
<thead><tr><th scope="col">Endpoint</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${hooks.map(
        (h) => html`<tr>
<td data-label="Endpoint"><a href="/console/webhooks/${h.id}" class="mono wrap">${h.url}</a>${h.description ? html`<div class="muted small">${h.description}</div>` : ''}</td>
<td data-label="Events"><ul class="plain">${h.events.map((e) => html`<li><code>${e}</code></li>`)}</ul></td>
<td data-label="State">${badge(h.active ? 'active' : 'inactive')}</td>
<td data-label="Created">${when(h.createdAt)}</td>
<td class="row-actions"><div class="actions"><a class="btn btn-plain" href="/console/webhooks/${h.id}">Deliveries</a>
${postButton(ctx.csrf, `/console/webhooks/${h.id}/delete`, 'Delete', { variant: 'danger', title: `Delete the webhook for ${h.url}` })}</div></td>
</tr>`,
      )}</tbody>
</table>`
}
${createForm(ctx, form, errors)}`,
  );
}

function attemptsList(d: DeliveryRow): SafeHtml {
  if (d.attemptLog.length === 0) return html`<span class="muted">not attempted yet</span>`;
  return html`<ul class="attempts plain">${d.attemptLog.map(
    (a) =>
      html`<li><span class="mono">#${a.attempt}</span> ${a.statusCode !== null ? html`<span class="code code-${String(a.statusCode)[0]}xx">${a.statusCode}</span>` : html`<span class="code code-err">no answer</span>`} ${a.error ? html`<span class="muted">${a.error}</span>` : ''} <span class="muted small">${duration(a.durationMs)}, ${when(a.createdAt)}</span></li>`,
  )}</ul>`;
}

export function webhookDetailPage(ctx: PageContext, hook: WebhookRow, deliveries: DeliveryRow[]): SafeHtml {
  const base = `/console/webhooks/${hook.id}`;
  return page(
    ctx,
    'webhooks',
    'Webhook',
    html`<p class="crumbs"><a href="/console/webhooks">Webhooks</a> /</p>
<div class="title-row"><h1 class="wrap">Webhook <span class="mono">${hook.url}</span></h1>${badge(hook.active ? 'active' : 'inactive')}</div>
<div class="actions" role="group" aria-label="Webhook actions">
${postButton(ctx.csrf, `${base}/test`, 'Send test event', { variant: 'primary', disabled: !hook.active })}
<a class="btn btn-plain" href="${base}">Refresh</a>
${postButton(ctx.csrf, `${base}/delete`, 'Delete webhook', { variant: 'danger' })}
</div>
<dl class="facts">
<div><dt>Events</dt><dd>${hook.events.join(', ')}</dd></div>
<div><dt>Description</dt><dd>${hook.description ?? '—'}</dd></div>
<div><dt>Created</dt><dd>${when(hook.createdAt)}</dd></div>
<div><dt>Webhook id</dt><dd class="mono">${hook.id}</dd></div>
</dl>
<section aria-labelledby="deliveries-title" class="panel">
<h2 id="deliveries-title">Delivery log</h2>
${
  deliveries.length === 0
    ? html`<p class="empty">No deliveries yet. Send a test event, or run a job.</p>`
    : html`<table class="cards deliveries">
<caption class="visually-hidden">Deliveries, newest first, with every attempt</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts (newest first)</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${deliveries.map(
        (d) => html`<tr>
<td data-label="Event"><code>${d.eventKind}</code><div class="muted small mono">${d.eventId}</div></td>
<td data-label="Status">${badge(d.status)}</td>
<td data-label="Attempts">${attemptsList(d)}</td>
<td data-label="Created">${when(d.createdAt)}</td>
<td class="row-actions">${d.status === 'failed' && postButton(ctx.csrf, `${base}/deliveries/${d.id}/resend`, 'Resend', { disabled: !hook.active })}</td>
</tr>`,
      )}</tbody>
</table>`
}
</section>`,
    '/console/webhooks',
  );
}
