import type { RenderAction, ScreenshotOptions } from '@scrapejobs/contracts';
import type { HTTPRequest, HTTPResponse, Page } from 'puppeteer';
import type { OutgoingRequest } from '../request/outgoing.ts';
import { runActions, type ScriptReturn } from './actions.ts';
import { abortReason, RenderError } from './errors.ts';
import { sendJobRequest } from './job-request.ts';
import { PROXY_MARK_HEADER, type ProxyEvent, type ProxyEventKind, type ProxyLease } from './proxy.ts';
import { refuseResources } from './resources.ts';
import { applyViewport, type Screenshot, takeScreenshot } from './screenshot.ts';
import { settledHtml } from './settle.ts';

export type WaitStrategy = 'load' | 'domcontentloaded' | 'networkidle0' | 'networkidle2';

export interface RenderRequest {
  url: string;
  waitStrategy: WaitStrategy;
  /** Navigation timeout for the wait strategy; 0 means the job sets none (ZERO_WAIT_CAP_MS holds). */
  waitTimeoutMs: number;
  signal?: AbortSignal;
  /** Upstream proxy for this render (`http(s)://[user:pass@]host:port`), or none. */
  proxyUrl?: string | null;
  /** SCRAPER_USER_AGENT; Chromium's own when not given. */
  userAgent?: string;
  /** The job's headers, cookies and credentials (docs/api.md §14); its user agent replaces `userAgent`. */
  request?: OutgoingRequest;
  /** Steps run after the wait strategy, before the DOM is read; all within the render's time limit. */
  actions?: readonly RenderAction[];
  /** A full-page PNG after the actions. */
  screenshot?: boolean;
  /** The screenshot's viewport (the window the page is laid out in), JPEG quality and extent. */
  screenshotOptions?: ScreenshotOptions | null;
  /**
   * Renders with the same key may share a browser context and page, one after another (the
   * renderer adds the render's settings to it); without one the render gets a context of its own.
   * Never the same for two users (docs/api.md §23).
   */
  isolationKey?: string;
  /**
   * Refuse what the DOM does not need beyond images, fonts and media (refused unless a screenshot
   * is asked): style sheets, beacons and other requests of no document (render_config.block_resources).
   */
  blockResources?: boolean;
}

export interface RenderedPage extends Screenshot {
  /** The URL of the document returned, after redirects (and after a navigation an action started). */
  url: string;
  /** Status of the main document's response, null when there was none (same-document URL). */
  status: number | null;
  html: string;
  /** The values of the execute_javascript steps, in order; absent without any. */
  scriptReturns?: ScriptReturn[];
}

/** The cap when wait_timeout_ms is 0: the 30 s limit of a fetched page (docs/api.md §7). */
const ZERO_WAIT_CAP_MS = 30_000;
/**
 * Time after navigation for the actions and reading the DOM; a page whose script never yields runs
 * into it. The whole render stays within the navigation timeout plus this (docs/api.md §7).
 */
const CONTENT_GRACE_MS = 10_000;
/** What the actions leave of the render's time for reading the DOM and taking the screenshot. */
const READ_RESERVE_MS = 2_000;
const MAX_REDIRECTS = 5;
const MAX_HTML_BYTES = 10 * 1024 * 1024;

/** Pages told to accept bad certificates (once, a kept page stays so). */
const ignoresCertificates = new WeakSet<Page>();
/** The user agent each page was given. */
const userAgents = new WeakMap<Page, string>();
/** Pages given their screenshot viewport (a kept page keeps it: the slot's key has the options). */
const viewportSet = new WeakSet<Page>();

/** The navigation timeout of `req`: its wait timeout, or ZERO_WAIT_CAP_MS when it sets none. */
export const navigationTimeout = (req: RenderRequest) =>
  req.waitTimeoutMs > 0 ? req.waitTimeoutMs : ZERO_WAIT_CAP_MS;

/**
 * Gives `page` the request's user agent, the job's headers, cookies and credentials, and its
 * certificate choice (each once for a kept page); whether the page's requests are now intercepted.
 */
export async function applyRequestSettings(page: Page, req: RenderRequest): Promise<boolean> {
  const userAgent = req.request?.userAgent ?? req.userAgent;
  if (userAgent && userAgents.get(page) !== userAgent) {
    await page.setUserAgent({ userAgent });
    userAgents.set(page, userAgent);
  }
  const intercepting = req.request ? await sendJobRequest(page, req.request, req.url) : false;
  // The page's own session: the page's context (this render's, or kept for renders of the same
  // job and settings) alone accepts bad certificates.
  if (req.request?.skipTlsVerification && !ignoresCertificates.has(page)) {
    await (await page.createCDPSession()).send('Security.setIgnoreCertificateErrors', { ignore: true });
    ignoresCertificates.add(page);
  }
  return intercepting;
}

/** One render as the renderer carries it; `page` is set while a page works on it. */
export interface PageJob {
  req: RenderRequest;
  aborted: boolean;
  page: Page | null;
}

/**
 * Navigates `page` (whose context uses `lease`), waits as asked, runs the actions and returns the
 * DOM as HTML (and a screenshot when asked), all within the navigation timeout plus CONTENT_GRACE_MS.
 */
export async function renderInPage(
  page: Page,
  lease: ProxyLease,
  job: PageJob,
  mark: string,
): Promise<RenderedPage> {
  const { req } = job;
  lease.useUpstream(req.proxyUrl);
  // A kept page's listener heard the last render's refusals.
  lease.events.length = 0;
  const navigations: URL[] = [];
  const inFlight = new Set<HTTPRequest>();
  page.on('request', (request) => {
    inFlight.add(request);
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) {
      const url = URL.parse(request.url());
      if (url) navigations.push(url);
    }
  });
  const finished = (request: HTTPRequest) => void inFlight.delete(request);
  page.on('requestfinished', finished);
  page.on('requestfailed', finished);
  const navTimeout = navigationTimeout(req);
  const deadlineAt = Date.now() + navTimeout + CONTENT_GRACE_MS;
  const checkDocument = (response: HTTPResponse | null) => {
    const failure = documentFailure(response, lease, navigations, mark);
    if (failure) throw failure;
  };

  const work = async (): Promise<RenderedPage> => {
    let response: HTTPResponse | null;
    try {
      const intercepting = await applyRequestSettings(page, req);
      if (req.screenshot && !viewportSet.has(page)) {
        await applyViewport(page, req.screenshotOptions);
        viewportSet.add(page);
      }
      await refuseResources(
        page,
        { keepMedia: req.screenshot === true, extras: req.blockResources === true },
        intercepting,
      );
      response = await page.goto(req.url, { waitUntil: req.waitStrategy, timeout: navTimeout });
    } catch (err) {
      throw interruption(err, page, job) ?? navigationFailure(err, lease, job, navigations);
    }
    checkDocument(response);
    const scriptReturns: ScriptReturn[] = [];
    if (req.actions?.length) {
      const navigated = await runActions(req.actions, {
        returns: scriptReturns,
        page,
        until: deadlineAt - READ_RESERVE_MS,
        waitUntil: req.waitStrategy,
        navigationCount: () => navigations.length,
        interruption: (err) => interruption(err, page, job),
      });
      if (navigated) {
        checkDocument(navigated.response);
        response = navigated.response ?? response;
      }
    }
    const settleMs = Math.min(navTimeout, deadlineAt - READ_RESERVE_MS - Date.now());
    const html = await settledHtml(page, settleMs, () => inFlight.size).catch(async (err) => {
      // A page may break the wait (its own MutationObserver replaced): it is read as it is.
      const interrupted = interruption(err, page, job);
      if (interrupted) throw interrupted;
      return page.content();
    });
    // A script may have sent the main frame to a forbidden address after the load.
    const late = mainDocumentEvent(lease.events, navigations, ['blocked']);
    if (late) throw fromEvent(late);
    if (Buffer.byteLength(html) > MAX_HTML_BYTES) {
      throw new RenderError('RENDER_ERROR', 'The rendered page is larger than 10 MiB.', { retryable: false });
    }
    const shot = req.screenshot ? await screenshotOf(page, job) : { screenshot: null, screenshotError: null };
    const status = response?.status() ?? null;
    return { url: page.url(), status, html, ...shot, ...(scriptReturns.length > 0 && { scriptReturns }) };
  };

  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void page.close().catch(() => {});
      reject(
        new RenderError('TIMEOUT', `The page did not finish within ${navTimeout} ms.`, { retryable: true }),
      );
    }, deadlineAt - Date.now());
  });
  try {
    return await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
    // The page may be kept for the key's next render: this render's handlers leave with it.
    for (const event of ['request', 'requestfinished', 'requestfailed'] as const)
      page.removeAllListeners(event);
  }
}

/**
 * Why a main document that arrived still fails the render: when it is the proxy's own answer, its
 * events say why; otherwise only a block counts. Then the redirect limit.
 */
export function documentFailure(
  response: HTTPResponse | null,
  lease: ProxyLease,
  navigations: readonly URL[],
  mark: string,
): RenderError | null {
  const own = ownAnswerKind(response, mark);
  const event = own
    ? (mainDocumentEvent(lease.events, navigations, null) ?? {
        kind: own,
        host: '',
        port: 0,
        detail: 'refused',
      })
    : mainDocumentEvent(lease.events, navigations, ['blocked']);
  if (event) return fromEvent(event);
  if (response?.status() === 401 && response.headers()['www-authenticate']) return loginRefused();
  if (response && response.request().redirectChain().length > MAX_REDIRECTS) {
    return new RenderError('RENDER_ERROR', `More than ${MAX_REDIRECTS} redirects.`, { retryable: false });
  }
  return null;
}

/** A screenshot that fails for the page's sake is reported, not fatal: the HTML still counts. */
async function screenshotOf(page: Page, job: PageJob): Promise<Screenshot> {
  try {
    return await takeScreenshot(page, job.req.screenshotOptions ?? null);
  } catch (err) {
    const interrupted = interruption(err, page, job);
    if (interrupted) throw interrupted;
    return { screenshot: null, screenshotError: `The screenshot failed: ${(err as Error).message}` };
  }
}

/** The abort or browser crash behind a failure, which decides how the render fails; else null. */
function interruption(err: unknown, page: Page, job: PageJob): Error | null {
  if (job.aborted && job.req.signal) return abortReason(job.req.signal);
  if (!page.browser().connected) {
    return new RenderError('RENDER_ERROR', 'The browser crashed during the render.', {
      retryable: true,
      browserCrashed: true,
      cause: err,
    });
  }
  return null;
}

export function navigationFailure(err: unknown, lease: ProxyLease, job: PageJob, navigations: URL[]): Error {
  const event = mainDocumentEvent(lease.events, navigations, null);
  if (event) return fromEvent(event);
  // The full Chromium's headless mode answers a 401 challenge this way, with or without
  // credentials sent (its headless shell shows the 401 page: documentFailure).
  if ((err as Error).message?.startsWith('net::ERR_INVALID_AUTH_CREDENTIALS')) return loginRefused(err);
  if ((err as Error).name === 'TimeoutError') {
    return new RenderError(
      'TIMEOUT',
      `The page did not reach "${job.req.waitStrategy}" within ${navigationTimeout(job.req)} ms.`,
      {
        retryable: true,
        cause: err,
      },
    );
  }
  return new RenderError('RENDER_ERROR', (err as Error).message, { retryable: true, cause: err });
}

/** A main document that asks for a login (HTTP 401 with a challenge): not a passing failure, so no retry. */
function loginRefused(cause?: unknown): RenderError {
  return new RenderError(
    'RENDER_ERROR',
    'The page asks for a login (HTTP 401 with a challenge); the credentials sent, if any, were refused.',
    { retryable: false, cause },
  );
}

/** The kind of the safety proxy's own answer, when the main document is one. */
function ownAnswerKind(response: HTTPResponse | null, mark: string): ProxyEventKind | null {
  const value = response?.headers()[PROXY_MARK_HEADER];
  if (!value?.startsWith(`${mark} `)) return null;
  const kind = value.slice(mark.length + 1);
  return kind === 'blocked' || kind === 'upstream' ? kind : 'unreachable';
}

const PRIORITY: readonly ProxyEventKind[] = ['blocked', 'upstream', 'unreachable'];

/**
 * The most telling proxy event for a host:port that the main frame navigated to. A blocked
 * host is blocked for every request, so matching by host and port (not the full URL) is safe.
 */
function mainDocumentEvent(
  events: readonly ProxyEvent[],
  navigations: readonly URL[],
  kinds: readonly ProxyEventKind[] | null,
): ProxyEvent | null {
  const targets = new Set(navigations.map((url) => `${hostOf(url)}:${portOf(url)}`));
  for (const kind of kinds ?? PRIORITY) {
    const hit = events.find((e) => e.kind === kind && targets.has(`${e.host}:${e.port}`));
    if (hit) return hit;
  }
  return null;
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80;
}

function fromEvent(event: ProxyEvent): RenderError {
  switch (event.kind) {
    case 'blocked':
      return new RenderError('BLOCKED_TARGET', `The page's address is not allowed: ${event.detail}`, {
        retryable: false,
      });
    case 'upstream':
      return new RenderError('PROXY_ERROR', `The proxy failed: ${event.detail}`, { retryable: true });
    default:
      return new RenderError('RENDER_ERROR', `The page could not be reached: ${event.detail}`, {
        retryable: true,
      });
  }
}
