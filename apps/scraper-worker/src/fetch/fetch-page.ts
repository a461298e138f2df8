import type { LookupFunction } from 'node:net';
import { type OutgoingRequest, outgoingHeaders } from '../request/outgoing.ts';
import { type AddressPolicy, addressPolicy } from './address.ts';
import { type AttemptResponse, sendAttempt } from './attempt.ts';
import { abortable, backoffDelay, parseRetryAfter, sleep } from './backoff.ts';
import type { ConnectionPool } from './connections.ts';
import { FetchError } from './errors.ts';
import { systemLookup } from './guard.ts';
import { requestHeaders } from './headers.ts';
import { NoProxyAvailableError, type ProxyPicker } from './proxy-picker.ts';

export interface FetchedPage {
  /** The URL after redirects. */
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as received (after content decoding), not converted to text. */
  body: Buffer;
  contentType: string | undefined;
}

export interface FetchOptions {
  /** ALLOW_PRIVATE_NETWORK_TARGETS: lifts the block on loopback and private ranges, never on metadata. */
  allowPrivate: boolean;
  /** Per request (each retry and redirect hop), from name resolution to the body's last byte. */
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  /** Retries of transient failures (network errors, 5xx, 429, proxy failures). */
  retries?: number;
  /** Aborts in-flight requests and waits at once; fetchPage then rejects with the signal's reason. */
  signal?: AbortSignal;
  proxy?: ProxyPicker;
  /** DNS resolver override; tests map names to 127.0.0.1. */
  lookup?: LookupFunction;
  /**
   * Awaited before every request, retries and redirect hops included, with the request's target
   * (the job's rate limit, a place at the host); what it returns is called with the answer.
   */
  beforeAttempt?: BeforeAttempt;
  /**
   * 429 and 503 answers retried once the host's pause is over (the wait is `beforeAttempt`'s), then
   * HTTP_ERROR; without it they are retried like other 5xx, after their Retry-After.
   */
  throttleRetries?: number;
  userAgent?: string;
  /** The job's headers, cookies, credentials and user agent (docs/api.md §14), sent on every attempt. */
  request?: OutgoingRequest;
  /** Kept-alive connections for direct requests (one run's); without it each request has its own. */
  connections?: ConnectionPool;
  /**
   * The validators of the page's last fetch (docs/api.md §20), sent as If-None-Match and
   * If-Modified-Since; a 304 then resolves as a page with that status and no body.
   */
  conditional?: Validators;
}

/** A page's ETag and Last-Modified, as its host sent them. */
export interface Validators {
  etag: string | null;
  lastModified: string | null;
}

/** What a host answered a request: its status, or null when there was no answer (a network failure). */
export interface HostAnswer {
  status: number | null;
  retryAfter?: string;
}

/** Told what a host answered a request. */
export type Answered = (answer: HostAnswer) => void;

/** Called before a request to `target`; may resolve what to tell once the request is over. */
export type BeforeAttempt = (target: URL) => Promise<Answered | undefined>;

/** How a run paces its requests: what fetchPage's `beforeAttempt` and `throttleRetries` say. */
export type RequestPace = Pick<FetchOptions, 'beforeAttempt' | 'throttleRetries'>;

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
const DEFAULT_MAX_REDIRECTS = 5;
const DEFAULT_RETRIES = 2;
const DEFAULT_USER_AGENT = 'Mozilla/5.0 (compatible; scrapejobs/1.0)';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Fetches a page with GET, following up to `maxRedirects` redirects, each hop a new request
 * whose connected address is checked (docs/api.md §7). Throws FetchError, or the abort reason.
 */
export function fetchPage(url: string, opts: FetchOptions): Promise<FetchedPage> {
  return fetchPageWithPolicy(url, opts, addressPolicy(opts.allowPrivate));
}

/** fetchPage with the address policy supplied; tests use it to let one loopback address pass. */
export async function fetchPageWithPolicy(
  url: string,
  opts: FetchOptions,
  policy: AddressPolicy,
): Promise<FetchedPage> {
  const retries = opts.retries ?? DEFAULT_RETRIES;
  const maxRedirects = opts.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const { signal } = opts;
  let current = parseTarget(url, url);
  // The job's headers go to the origin asked for alone, and no longer once a redirect left it:
  // a hop back is the other site's choice of URL.
  const origin = current.origin;
  let request = opts.request;
  const userAgent = request?.userAgent ?? opts.userAgent ?? DEFAULT_USER_AGENT;
  let redirects = 0;
  let failures = 0;
  let proxy = pickProxy(opts.proxy, 0, url);

  let throttles = 0;
  const conditional: Record<string, string> = {};
  if (opts.conditional?.etag) conditional['if-none-match'] = opts.conditional.etag;
  if (opts.conditional?.lastModified) conditional['if-modified-since'] = opts.conditional.lastModified;

  for (;;) {
    signal?.throwIfAborted();
    const answered = opts.beforeAttempt ? await prepared(opts.beforeAttempt(current), signal) : undefined;
    let response: AttemptResponse;
    try {
      response = await sendAttempt({
        url: current,
        proxyUrl: proxy,
        policy,
        lookup: opts.lookup ?? systemLookup,
        timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxBytes: opts.maxBytes ?? DEFAULT_MAX_BYTES,
        signal,
        headers: requestHeaders(
          userAgent,
          request ? outgoingHeaders(request, current, origin) : {},
          conditional,
        ),
        connections: opts.connections,
        skipTlsVerification: opts.request?.skipTlsVerification === true,
      });
    } catch (error) {
      answered?.({ status: null });
      if (!(error instanceof FetchError)) throw error;
      if (error.code === 'PROXY_ERROR' && proxy) opts.proxy?.reportFailure(proxy);
      if (!isRetriedFailure(error) || failures >= retries) throw error;
      failures++;
      if (error.code === 'PROXY_ERROR') proxy = pickProxy(opts.proxy, failures, url);
      await sleep(backoffDelay(failures), signal);
      continue;
    }

    const { status, headers } = response;
    const retryAfter = firstValue(headers['retry-after']);
    answered?.({ status, ...(retryAfter !== undefined && { retryAfter }) });
    const location = headers.location;
    if (REDIRECT_STATUSES.has(status) && location) {
      if (redirects >= maxRedirects) {
        throw new FetchError('HTTP_ERROR', `more than ${maxRedirects} redirects`, {
          url: current.href,
          retryable: false,
          status,
        });
      }
      redirects++;
      current = parseTarget(location, current.href, current);
      if (current.origin !== origin) request = undefined;
      continue;
    }
    if ((status >= 200 && status < 300) || (status === 304 && opts.conditional)) {
      const contentType = headers['content-type'];
      return { url: current.href, status, headers, body: response.body, contentType };
    }
    const transient = status === 429 || status >= 500;
    if (opts.throttleRetries !== undefined && (status === 429 || status === 503)) {
      // The host is paused for the whole fleet: the next attempt waits for it in beforeAttempt.
      if (throttles < opts.throttleRetries) {
        throttles++;
        continue;
      }
    } else if (transient && failures < retries) {
      failures++;
      await sleep(parseRetryAfter(retryAfter) ?? backoffDelay(failures), signal);
      continue;
    }
    throw new FetchError('HTTP_ERROR', `target answered HTTP ${status}`, {
      url: current.href,
      retryable: transient,
      status,
    });
  }
}

/**
 * Waits for `before`, or rejects as soon as `signal` aborts; what it resolves later is told there
 * was no request, so that nothing it took (a host's place) is held.
 */
async function prepared(
  before: ReturnType<BeforeAttempt>,
  signal: AbortSignal | undefined,
): Promise<Answered | undefined> {
  try {
    return await abortable(before, signal);
  } catch (error) {
    before.then((answered) => answered?.({ status: null })).catch(() => {});
    throw error;
  }
}

function isRetriedFailure(error: FetchError): boolean {
  // A timeout is not retried here: one slow page would otherwise hold a worker for retries × 30 s.
  return error.retryable && (error.code === 'NETWORK_ERROR' || error.code === 'PROXY_ERROR');
}

function parseTarget(location: string, reportedUrl: string, base?: URL): URL {
  let target: URL;
  try {
    target = new URL(location, base);
  } catch {
    throw new FetchError('HTTP_ERROR', `invalid URL: ${location}`, { url: reportedUrl, retryable: false });
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new FetchError(
      'BLOCKED_TARGET',
      `only http and https targets are fetched, not ${target.protocol}`,
      {
        url: target.href,
        retryable: false,
      },
    );
  }
  target.hash = '';
  return target;
}

function pickProxy(picker: ProxyPicker | undefined, attempt: number, url: string): string | null {
  if (!picker) return null;
  try {
    return picker.pick(attempt)?.url ?? null;
  } catch (error) {
    if (!(error instanceof NoProxyAvailableError)) throw error;
    throw new FetchError('PROXY_ERROR', error.message, { url, retryable: false, cause: error });
  }
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
