import type { HTTPResponse, Page } from 'puppeteer';
import { abortReason, RenderError } from './errors.ts';
import { PROXY_MARK_HEADER, type ProxyEvent, type ProxyEventKind, type ProxyLease } from './proxy.ts';

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
}

export interface RenderedPage {
  /** The URL of the document returned, after redirects. */
  url: string;
  /** Status of the main document's response, null when there was none (same-document URL). */
  status: number | null;
  html: string;
}

/** The cap when wait_timeout_ms is 0: the 30 s limit of a fetched page (docs/api.md §7). */
const ZERO_WAIT_CAP_MS = 30_000;
/** Time after navigation for reading the DOM; a page whose script never yields runs into it. */
const CONTENT_GRACE_MS = 10_000;
const MAX_REDIRECTS = 5;
const MAX_HTML_BYTES = 10 * 1024 * 1024;

/** One render as the cluster carries it; `page` is set while a page works on it. */
export interface PageJob {
  req: RenderRequest;
  aborted: boolean;
  page: Page | null;
}

/** Navigates `page` (whose context uses `lease`), waits as asked and returns the DOM as HTML. */
export async function renderInPage(
  page: Page,
  lease: ProxyLease,
  job: PageJob,
  mark: string,
): Promise<RenderedPage> {
  lease.useUpstream(job.req.proxyUrl);
  const navigations: URL[] = [];
  page.on('request', (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) {
      const url = URL.parse(request.url());
      if (url) navigations.push(url);
    }
  });
  // An unanswered alert() would hold the page until the timeout.
  page.on('dialog', (dialog) => void dialog.dismiss().catch(() => {}));
  const navTimeout = job.req.waitTimeoutMs > 0 ? job.req.waitTimeoutMs : ZERO_WAIT_CAP_MS;

  const work = async (): Promise<RenderedPage> => {
    let response: HTTPResponse | null;
    try {
      if (job.req.userAgent) await page.setUserAgent({ userAgent: job.req.userAgent });
      response = await page.goto(job.req.url, { waitUntil: job.req.waitStrategy, timeout: navTimeout });
    } catch (err) {
      throw navigationFailure(err, page, lease, job, navigations);
    }
    // When the document is the proxy's own answer, its events say why; otherwise only a block counts.
    const own = ownAnswerKind(response, mark);
    const event = own
      ? (mainDocumentEvent(lease.events, navigations, null) ?? {
          kind: own,
          host: '',
          port: 0,
          detail: 'refused',
        })
      : mainDocumentEvent(lease.events, navigations, ['blocked']);
    if (event) throw fromEvent(event);
    if (response && response.request().redirectChain().length > MAX_REDIRECTS) {
      throw new RenderError('RENDER_ERROR', `More than ${MAX_REDIRECTS} redirects.`, { retryable: false });
    }
    const html = await page.content();
    // A script may have sent the main frame to a forbidden address after the load.
    const late = mainDocumentEvent(lease.events, navigations, ['blocked']);
    if (late) throw fromEvent(late);
    if (Buffer.byteLength(html) > MAX_HTML_BYTES) {
      throw new RenderError('RENDER_ERROR', 'The rendered page is larger than 10 MiB.', { retryable: false });
    }
    return { url: page.url(), status: response?.status() ?? null, html };
  };

  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void page.close().catch(() => {});
      reject(
        new RenderError('TIMEOUT', `The page did not finish within ${navTimeout} ms.`, { retryable: true }),
      );
    }, navTimeout + CONTENT_GRACE_MS);
  });
  try {
    return await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function navigationFailure(
  err: unknown,
  page: Page,
  lease: ProxyLease,
  job: PageJob,
  navigations: URL[],
): Error {
  if (job.aborted && job.req.signal) return abortReason(job.req.signal);
  if (!page.browser().connected) {
    return new RenderError('RENDER_ERROR', 'The browser crashed during the render.', {
      retryable: true,
      browserCrashed: true,
      cause: err,
    });
  }
  const event = mainDocumentEvent(lease.events, navigations, null);
  if (event) return fromEvent(event);
  if ((err as Error).name === 'TimeoutError') {
    return new RenderError(
      'TIMEOUT',
      `The page did not reach "${job.req.waitStrategy}" within ${job.req.waitTimeoutMs || ZERO_WAIT_CAP_MS} ms.`,
      {
        retryable: true,
        cause: err,
      },
    );
  }
  return new RenderError('RENDER_ERROR', (err as Error).message, { retryable: true, cause: err });
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
