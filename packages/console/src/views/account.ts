import { when } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { type PageContext, page, postButton } from './layout.ts';

/** What the account page shows of the Firecrawl webhook secret. */
export interface FirecrawlSecretState {
  /** When the current secret was made, or null without one. */
  createdAt: Date | null;
  /** The secret, shown on this page only: just rotated, or asked for. */
  shown?: { secret: string; rotated: boolean } | undefined;
}

function secretPanel({ secret, rotated }: { secret: string; rotated: boolean }): SafeHtml {
  return html`<div class="panel panel-token">
  <p><strong>Copy this secret now: it is shown on this page only.</strong>${
    rotated ? html` Any previous secret no longer signs deliveries.` : html``
  }</p>
  <div class="copy-row">
    <label for="new-firecrawl-secret" class="visually-hidden">Firecrawl webhook secret</label>
    <textarea id="new-firecrawl-secret" class="token" rows="2" readonly spellcheck="false" autocomplete="off">${secret}</textarea>
    <button type="button" class="btn btn-primary" data-copy="new-firecrawl-secret">Copy</button>
  </div>
</div>`;
}

function firecrawlSecretBlock(ctx: PageContext, state: FirecrawlSecretState): SafeHtml {
  const has = state.createdAt !== null;
  return html`<section class="panel" aria-labelledby="firecrawl-secret-title">
<h2 id="firecrawl-secret-title">Firecrawl webhook secret</h2>
<p>Webhooks of crawls and batch scrapes started through the Firecrawl-compatible API
(<code>webhook</code> of <code>POST /v2/crawl</code> and <code>POST /v2/batch/scrape</code>) are signed with it:
<code>X-Firecrawl-Signature: sha256=&lt;hex HMAC-SHA256 of the body&gt;</code>. One secret for the account, both modes.</p>
<p>${
    has
      ? html`A secret is set (made ${when(state.createdAt)}).`
      : html`<span class="muted">No secret yet: one is made with the first crawl or batch scrape that has a webhook.</span>`
  }</p>
<p class="muted small">The secret is read when each delivery is sent: a new one signs every delivery from then on, those of crawls already running and retries included.</p>
${state.shown && secretPanel(state.shown)}
<div class="actions">${postButton(ctx.csrf, '/console/account/firecrawl-webhook-secret/show', 'Show secret', {
    variant: 'primary',
    title: 'Show the current secret on this page',
  })}${postButton(ctx.csrf, '/console/account/firecrawl-webhook-secret', 'Rotate secret', {
    title: 'Make a new secret: the current one stops signing deliveries',
  })}</div>
</section>`;
}

/** The account page: settings of the signed-in account that belong to no mode. */
export function accountPage(ctx: PageContext, firecrawl: FirecrawlSecretState): SafeHtml {
  return page(
    ctx,
    'account',
    'Account',
    html`<h1>Account</h1>
<p class="lead">Signed in as ${ctx.email}.</p>
${firecrawlSecretBlock(ctx, firecrawl)}`,
  );
}
