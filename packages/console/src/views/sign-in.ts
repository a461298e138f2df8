import { html, type SafeHtml } from './html.ts';
import { barePage, csrfField } from './layout.ts';

export function signInPage(opts: {
  csrf: string;
  email?: string;
  error?: string;
  notice?: string;
}): SafeHtml {
  const err = opts.error;
  return barePage(
    'Sign in',
    html`<h1>Sign in</h1>
${err ? html`<div class="flash flash-error" role="alert" id="signin-error">${err}</div>` : ''}
${opts.notice ? html`<div class="flash flash-ok" role="status">${opts.notice}</div>` : ''}
<form method="post" action="/console/login" class="stack"${err ? html` aria-describedby="signin-error"` : ''}>
  ${csrfField(opts.csrf)}
  <div class="field">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required${opts.email ? '' : html` autofocus`} value="${opts.email ?? ''}">
  </div>
  <div class="field">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required${opts.email ? html` autofocus` : ''}>
  </div>
  <button type="submit" class="btn btn-primary">Sign in</button>
</form>
<p class="muted small">No account yet? Accounts are created by the operator, with the console’s <code>account</code> command.</p>`,
  );
}
