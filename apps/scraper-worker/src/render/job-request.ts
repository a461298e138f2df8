import type { HTTPRequest, Page } from 'puppeteer';
import { type OutgoingRequest, outgoingHeaders } from '../request/outgoing.ts';
import { INTERCEPT_PRIORITY } from './resources.ts';

/**
 * Makes Chromium send the job's headers, cookies and basic-auth credentials (docs/api.md §14):
 * every request of the page to the origin asked for gets them, until the main frame leaves that
 * origin; from then on nothing of the job's is sent, even back to it. They are added to each
 * request as it leaves (request interception), never put in the browser's cookie jar, so neither
 * a redirect nor a subresource on another origin can carry them. Does nothing (no interception,
 * no cost) when the job has nothing to send. Says whether the page's requests are intercepted.
 */
export async function sendJobRequest(
  page: Page,
  request: OutgoingRequest,
  askedUrl: string,
): Promise<boolean> {
  if (!hasAnythingToSend(request)) return false;
  const origin = new URL(askedUrl).origin;
  let left = false;
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    const url = URL.parse(req.url());
    if (req.isNavigationRequest() && req.frame() === page.mainFrame() && url?.origin !== origin) left = true;
    const ours = left || !url ? {} : outgoingHeaders(request, url, origin);
    // A request the page already cancelled cannot be continued; nothing to do then.
    const overrides = req.continueRequestOverrides();
    const resumed = req.continue(
      Object.keys(ours).length > 0 ? { ...overrides, headers: merged(req, ours) } : overrides,
      INTERCEPT_PRIORITY,
    );
    void resumed.catch(() => {});
  });
  return true;
}

function hasAnythingToSend(request: OutgoingRequest): boolean {
  return (
    Object.keys(request.headers).length > 0 ||
    request.cookies.length > 0 ||
    ((request.basicAuth !== null || Boolean(request.authorization)) && request.authOrigins.length > 0)
  );
}

/**
 * Chromium's own headers with the job's added; a job header replaces Chromium's of the same name
 * (names compare case-insensitively). Cookies merge by name instead, and one the browser holds
 * wins: the site set it during this render (a login, a rotated session), as it would overwrite a
 * cookie in a browser's jar.
 */
function merged(req: HTTPRequest, ours: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  const replaced = new Set(Object.keys(ours).map((name) => name.toLowerCase()));
  const own = req.headers();
  for (const [name, value] of Object.entries(own)) {
    if (!replaced.has(name.toLowerCase())) out[name] = value;
  }
  for (const [name, value] of Object.entries(ours)) {
    out[name] = name.toLowerCase() === 'cookie' ? mergedCookies(value, ownCookie(own)) : value;
  }
  return out;
}

function ownCookie(headers: Record<string, string>): string | null {
  for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === 'cookie') return value;
  return null;
}

function mergedCookies(ours: string, browsers: string | null): string {
  if (!browsers) return ours;
  const held = new Set(browsers.split(';').map((pair) => cookieName(pair)));
  const kept = ours.split('; ').filter((pair) => !held.has(cookieName(pair)));
  return [...kept, browsers].join('; ');
}

function cookieName(pair: string): string {
  const eq = pair.indexOf('=');
  return (eq < 0 ? pair : pair.slice(0, eq)).trim();
}
