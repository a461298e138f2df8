import type { Mode } from '@scrapejobs/db';
import type { Flash } from '../http/session.ts';
import { html, type SafeHtml } from './html.ts';

export type Section = 'jobs' | 'webhooks' | 'keys' | 'account';

export interface PageContext {
  csrf: string;
  email: string;
  mode: Mode;
  flash?: Flash | undefined;
}

/** The hidden synchronizer token every form carries. */
export const csrfField = (csrf: string): SafeHtml => html`<input type="hidden" name="_csrf" value="${csrf}">`;

/** A one-button form that POSTs (every state change is a POST with the CSRF token). */
export function postButton(
  csrf: string,
  action: string,
  label: string,
  opts: { variant?: 'primary' | 'danger' | 'plain'; disabled?: boolean; title?: string } = {},
): SafeHtml {
  return html`<form method="post" action="${action}" class="inline">${csrfField(csrf)}<button type="submit" class="btn btn-${opts.variant ?? 'plain'}"${opts.disabled ? html` disabled` : ''}${opts.title ? html` title="${opts.title}"` : ''}>${label}</button></form>`;
}

const NAV: [Section, string, string][] = [
  ['jobs', 'Jobs', '/console/jobs'],
  ['webhooks', 'Webhooks', '/console/webhooks'],
  ['keys', 'API Keys', '/console/keys'],
  ['account', 'Account', '/console/account'],
];

function document(title: string, body: SafeHtml, bodyClass = ''): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Scrape Jobs console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head>
<body class="${bodyClass}">
<a class="skip" href="#main">Skip to content</a>
${body}
</body>
</html>`;
}

function flashBox(flash: Flash | undefined): SafeHtml | false {
  if (!flash) return false;
  const role = flash.kind === 'error' ? 'alert' : 'status';
  return html`<div class="flash flash-${flash.kind}" role="${role}">${flash.text}</div>`;
}

/** A page of the signed-in console: header with navigation, mode switch and sign-out. */
export function page(
  ctx: PageContext,
  section: Section | null,
  title: string,
  content: SafeHtml,
  modeReturn = `/console/${section ?? 'jobs'}`,
): SafeHtml {
  const other: Mode = ctx.mode === 'test' ? 'live' : 'test';
  const header = html`<header class="top mode-${ctx.mode}">
  <div class="bar">
    <a class="brand" href="/console/jobs">Scrape Jobs</a>
    <nav aria-label="Console">
      <ul>${NAV.map(
        ([s, label, href]) =>
          html`<li><a href="${href}"${s === section ? html` aria-current="page"` : ''}>${label}</a></li>`,
      )}</ul>
    </nav>
    <div class="account">
      <form method="post" action="/console/mode" class="mode-switch">
        ${csrfField(ctx.csrf)}<input type="hidden" name="return_to" value="${modeReturn}">
        <span class="mode-label" id="mode-label">Mode</span>
        <span class="mode-now badge badge-mode-${ctx.mode}">${ctx.mode === 'test' ? 'Test' : 'Live'}</span>
        <button type="submit" name="mode" value="${other}" class="btn btn-plain btn-small" aria-describedby="mode-label">Switch to ${other}</button>
      </form>
      <span class="who" title="Signed in as ${ctx.email}">${ctx.email}</span>
      <form method="post" action="/console/logout" class="inline">${csrfField(ctx.csrf)}<button type="submit" class="btn btn-plain btn-small">Sign out</button></form>
    </div>
  </div>
  ${ctx.mode === 'test' ? html`<p class="mode-banner">Test mode: the jobs, results and webhooks shown belong to test-mode keys (sk_test_…). Live data is kept apart.</p>` : ''}
</header>`;
  return document(
    title,
    html`${header}
<main id="main" tabindex="-1">
${flashBox(ctx.flash)}
${content}
</main>`,
  );
}

/** A page outside the signed-in area (sign-in, errors for visitors). */
export function barePage(title: string, content: SafeHtml): SafeHtml {
  return document(
    title,
    html`<main id="main" class="narrow" tabindex="-1"><p class="brand-solo">Scrape Jobs</p>${content}</main>`,
    'bare',
  );
}
