import type { HTTPRequest, HTTPResponse, Page } from 'puppeteer';
import {
  applyRequestSettings,
  documentFailure,
  navigationFailure,
  navigationTimeout,
  type PageJob,
  type RenderRequest,
} from './page-render.ts';
import type { ProxyLease } from './proxy.ts';

/** The page of an interact session: its own context, every request through the safety proxy. */
export interface SessionPage {
  page: Page;
  /** Closes the page and its context. */
  close(): void;
}

/**
 * Loads `req.url` in a session's fresh page as a render does (the job's user agent, headers,
 * cookies, credentials, certificate choice and proxy; the same checks of the main document), but
 * blocks nothing and runs no actions: the page is then the session's to act on.
 */
export async function loadSessionPage(
  page: Page,
  lease: ProxyLease,
  req: RenderRequest,
  mark: string,
): Promise<void> {
  lease.useUpstream(req.proxyUrl);
  const navigations: URL[] = [];
  const watch = (request: HTTPRequest) => {
    if (!request.isNavigationRequest() || request.frame() !== page.mainFrame()) return;
    const url = URL.parse(request.url());
    if (url) navigations.push(url);
  };
  page.on('request', watch);
  const job: PageJob = { req, aborted: false, page };
  let response: HTTPResponse | null;
  try {
    await applyRequestSettings(page, req);
    response = await page.goto(req.url, { waitUntil: req.waitStrategy, timeout: navigationTimeout(req) });
  } catch (err) {
    throw navigationFailure(err, lease, job, navigations);
  } finally {
    page.off('request', watch);
  }
  const failure = documentFailure(response, lease, navigations, mark);
  if (failure) throw failure;
}
