const ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

// The HTTP client sets these from the URL and the (empty) body; a job may not frame the request.
// The API refuses them already (docs/api.md §14): this keeps a stored job from slipping one through.
const FRAMING = new Set(['host', 'content-length', 'connection', 'transfer-encoding']);

/**
 * The headers of one request: the service's defaults (and `own`, lower-case names), each replaced
 * by a job header of the same name in any case (names come out lower case, so none is sent
 * twice), framing headers excepted.
 */
export function requestHeaders(
  userAgent: string,
  jobHeaders: Readonly<Record<string, string>>,
  own: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': userAgent, accept: ACCEPT, ...own };
  for (const [name, value] of Object.entries(jobHeaders)) {
    const lower = name.toLowerCase();
    if (!FRAMING.has(lower)) headers[lower] = value;
  }
  return headers;
}
