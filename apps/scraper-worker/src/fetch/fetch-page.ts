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
  /** Awaited before every request, retries and redirect hops included (the per-job rate limiter). */
  beforeAttempt?: () => Promise<void>;
  userAgent?: string;
  /** The job's headers, cookies, credentials and user agent (docs/api.md §14), sent on every attempt. */
  request?: OutgoingRequest;
  /** Kept-alive connections for direct requests (one run's); without it each request has its own. */
  connections?: ConnectionPool;
}

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

  for (;;) {
    signal?.throwIfAborted();
    if (opts.beforeAttempt) await abortable(opts.beforeAttempt(), signal);
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
        headers: requestHeaders(userAgent, request ? outgoingHeaders(request, current, origin) : {}),
        connections: opts.connections,
      });
    } catch (error) {
      if (!(error instanceof FetchError)) throw error;
      if (error.code === 'PROXY_ERROR' && proxy) opts.proxy?.reportFailure(proxy);
      if (!isRetriedFailure(error) || failures >= retries) throw error;
      failures++;
      if (error.code === 'PROXY_ERROR') proxy = pickProxy(opts.proxy, failures, url);
      await sleep(backoffDelay(failures), signal);
      continue;
    }

    const { status, headers } = response;
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
    if (status >= 200 && status < 300) {
      const contentType = headers['content-type'];
      return { url: current.href, status, headers, body: response.body, contentType };
    }
    const transient = status === 429 || status >= 500;
    if (transient && failures < retries) {
      failures++;
      await sleep(parseRetryAfter(firstValue(headers['retry-after'])) ?? backoffDelay(failures), signal);
      continue;
    }
    throw new FetchError('HTTP_ERROR', `target answered HTTP ${status}`, {
      url: current.href,
      retryable: transient,
      status,
    });
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
