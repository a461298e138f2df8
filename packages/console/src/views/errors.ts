import { html, type SafeHtml } from './html.ts';
import { barePage, type PageContext, page } from './layout.ts';

const TITLES: Record<number, string> = {
  400: 'Bad request',
  403: 'Refused',
  404: 'Not found',
  409: 'Not possible now',
  429: 'Too many attempts',
  500: 'Something went wrong',
  503: 'Temporarily unavailable',
};

/** An error page, inside the console frame when the visitor is signed in. */
export function errorPage(status: number, message: string, ctx?: PageContext): SafeHtml {
  const title = TITLES[status] ?? 'Error';
  const body = html`<h1>${title}</h1><p>${message}</p><p><a href="/console/jobs">Back to your jobs</a></p>`;
  return ctx ? page(ctx, null, title, body) : barePage(title, body);
}
