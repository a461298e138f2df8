/** A page's failure as this service recorded it (a job.failed error code of docs/api.md §6). */
export interface PageFailure {
  code: string;
  message: string;
  /** The status the site answered, when it answered. */
  httpStatus: number | null;
}

/** The answer of POST /scrape for a page that could not be fetched, in Firecrawl's codes. */
export interface ScrapeFailure {
  status: 403 | 408 | 500;
  code: string;
  error: string;
}

// Node's certificate errors all say "certificate"; Chromium's are net::ERR_CERT_* and ERR_SSL_*.
const TLS = /certificate|ERR_CERT_|ERR_SSL_|SSL routines|\bTLS\b|EPROTO/i;
const DNS = /ENOTFOUND|EAI_AGAIN|EAI_NONAME|ERR_NAME_NOT_RESOLVED|ERR_NAME_RESOLUTION_FAILED/;

/** The renderer's words for a failed action, and for a page it could not reach. */
const ACTION = /^action \d+ \(/;
const UNREACHED = /^The page could not be reached|net::ERR_/;

const TLS_HINT = ' (skipTlsVerification: true accepts it)';

/**
 * Firecrawl's error answer for a page that was never fetched (docs/api.md §26): a bad
 * certificate is SCRAPE_SSL_ERROR, a name that does not resolve SCRAPE_DNS_RESOLUTION_ERROR, a
 * timeout SCRAPE_TIMEOUT (408, as Firecrawl answers it), a target that outbound safety refuses
 * BLOCKED_TARGET (403, as Firecrawl answers a blocked site), any other connection failure
 * SCRAPE_SITE_ERROR, a failed action SCRAPE_ACTION_ERROR; all others 500. Null for a page that answered (any HTTP status, which stays
 * a success with its statusCode) or that failed for a reason other than fetching.
 */
export function scrapeFailure(failure: PageFailure): ScrapeFailure | null {
  const { code, message } = failure;
  if (code === 'TIMEOUT') return { status: 408, code: 'SCRAPE_TIMEOUT', error: message };
  if (code === 'BLOCKED_TARGET') return { status: 403, code: 'BLOCKED_TARGET', error: message };
  if (code === 'PROXY_ERROR') return { status: 500, code: 'SCRAPE_ALL_ENGINES_FAILED', error: message };
  if (code === 'RENDER_ERROR' && ACTION.test(message))
    return { status: 500, code: 'SCRAPE_ACTION_ERROR', error: message };
  // A render's other failures are not fetching's unless the page was not reached.
  if (code === 'RENDER_ERROR' && !UNREACHED.test(message)) return null;
  if ((code !== 'NETWORK_ERROR' && code !== 'RENDER_ERROR') || failure.httpStatus !== null) return null;
  if (TLS.test(message))
    return {
      status: 500,
      code: 'SCRAPE_SSL_ERROR',
      error: `The TLS certificate is invalid: ${message}${TLS_HINT}`,
    };
  if (DNS.test(message))
    return { status: 500, code: 'SCRAPE_DNS_RESOLUTION_ERROR', error: `DNS resolution failed: ${message}` };
  return { status: 500, code: 'SCRAPE_SITE_ERROR', error: message };
}
