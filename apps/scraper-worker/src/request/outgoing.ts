/**
 * What a job sends with every request for one of its pages (docs/api.md §14), opened (secrets in
 * the clear) for the worker's use only: never logged, never stored.
 */
export interface OutgoingRequest {
  /** Sent to the URL asked for and to redirect hops on its origin. */
  headers: Readonly<Record<string, string>>;
  /** Sent as a browser would: to the hosts and paths they match, on every hop. */
  cookies: readonly OutgoingCookie[];
  /** Sent (as `Authorization: Basic`) only to `authOrigins`. */
  basicAuth: { username: string; password: string } | null;
  /** An `Authorization` value of any scheme, sent as it is only to `authOrigins` (a job has this or basicAuth). */
  authorization?: string | null;
  /** The source's origins. */
  authOrigins: readonly string[];
  /** Replaces SCRAPER_USER_AGENT for the job. */
  userAgent: string | null;
  /** An https site's certificate is accepted unchecked (the job's `request.skip_tls_verification`). */
  skipTlsVerification?: boolean;
}

export interface OutgoingCookie {
  name: string;
  value: string;
  /** Lower case, without a leading dot. */
  domain: string;
  /** Only `domain` itself (the default domain, the source's host), not its subdomains. */
  hostOnly: boolean;
  path: string;
}

/** RFC 6265 §5.1.3: `host` is `domain` or, unless host-only, one of its subdomains. */
function domainMatches(host: string, cookie: OutgoingCookie): boolean {
  if (host === cookie.domain) return true;
  return !cookie.hostOnly && host.endsWith(`.${cookie.domain}`) && !/^[\d.]+$|^\[/.test(host);
}

/** RFC 6265 §5.1.4: the request path is the cookie path or below it. */
function pathMatches(path: string, cookiePath: string): boolean {
  if (path === cookiePath) return true;
  if (!path.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || path[cookiePath.length] === '/';
}

/** The `Cookie` header for `url`, longer paths first (RFC 6265 §5.4), or null when none matches. */
export function cookieHeader(url: URL, cookies: readonly OutgoingCookie[]): string | null {
  const host = url.hostname.toLowerCase();
  const matched = cookies
    .filter((c) => domainMatches(host, c) && pathMatches(url.pathname || '/', c.path))
    .sort((a, b) => b.path.length - a.path.length);
  return matched.length > 0 ? matched.map((c) => `${c.name}=${c.value}`).join('; ') : null;
}

/**
 * The job's own headers for one request to `url`, which started as a request to `origin` (the
 * URL asked for; a redirect hop keeps it): nothing once a redirect left that origin; else the
 * headers, the cookies that match, and basic auth or the authorization when it is one of the
 * source's origins.
 */
export function outgoingHeaders(req: OutgoingRequest, url: URL, origin: string): Record<string, string> {
  if (url.origin !== origin) return {};
  const out: Record<string, string> = { ...req.headers };
  const cookie = cookieHeader(url, req.cookies);
  if (cookie) out.cookie = cookie;
  if (req.basicAuth && req.authOrigins.includes(url.origin)) {
    const { username, password } = req.basicAuth;
    out.authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  } else if (req.authorization && req.authOrigins.includes(url.origin)) out.authorization = req.authorization;
  return out;
}
