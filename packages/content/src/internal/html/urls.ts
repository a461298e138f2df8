/** Longer URLs are left out (links, images); browsers and servers refuse far shorter ones. */
const MAX_URL_CHARS = 8192;

/** Schemes that run code or carry a document of their own when followed: never written as links. */
const UNSAFE_SCHEMES = new Set(['javascript:', 'vbscript:', 'data:']);

/**
 * The URL relative URLs of a page resolve against: its `<base href>` resolved against the page's
 * URL, else the page's URL. As in browsers, a base that does not parse, or is a `data:` or
 * `javascript:` URL, is ignored. Undefined when neither parses (only absolute URLs resolve then).
 */
export function baseUrlOf(baseHref: string | undefined, pageUrl: string): string | undefined {
  const page = withoutCredentials(pageUrl);
  if (baseHref === undefined) return page;
  const url = URL.parse(baseHref.trim(), page);
  if (url === null || url.protocol === 'data:' || url.protocol === 'javascript:') return page;
  return url.href;
}

/**
 * The page's URL without the user name and password it was fetched with: URLs resolved against it
 * (links, images, the favicon) must not carry them into a document.
 */
export function withoutCredentials(pageUrl: string): string | undefined {
  const url = URL.parse(pageUrl);
  if (url === null) return undefined;
  url.username = '';
  url.password = '';
  return url.href;
}

/** `raw` resolved against `base` (white space around it dropped, as browsers do), or null. */
export function resolveUrl(raw: string, base: string | undefined): URL | null {
  if (raw.length > MAX_URL_CHARS) return null;
  return URL.parse(raw.trim(), base);
}

/** The absolute URL of a link or image, or null when it does not parse or would run code. */
export function safeUrl(raw: string, base: string | undefined): string | null {
  const url = resolveUrl(raw, base);
  if (url === null || UNSAFE_SCHEMES.has(url.protocol)) return null;
  return url.href;
}

/** Whether an attribute's URL would run script when followed (`javascript:`, `vbscript:`). */
export function runsScript(raw: string): boolean {
  // Browsers drop ASCII white space and controls inside the scheme, so `java\tscript:` runs.
  let scheme = '';
  for (let i = 0; i < raw.length && scheme.length < 12; i++) {
    const c = raw.charCodeAt(i);
    if (c <= 32) continue;
    if (c === 58) break;
    scheme += raw[i]!.toLowerCase();
  }
  return scheme === 'javascript' || scheme === 'vbscript';
}

/**
 * A `srcset` with each candidate's URL made absolute (descriptors kept); candidates whose URL does
 * not parse are dropped. A linear scan, after the HTML spec's candidate parsing.
 */
export function resolveSrcset(srcset: string, base: string | undefined): string {
  const out: string[] = [];
  let i = 0;
  const n = srcset.length;
  while (i < n) {
    while (i < n && (isAsciiSpace(srcset.charCodeAt(i)) || srcset[i] === ',')) i++;
    if (i >= n) break;
    const start = i;
    while (i < n && !isAsciiSpace(srcset.charCodeAt(i))) i++;
    let raw = srcset.slice(start, i);
    let descriptors = '';
    if (raw.endsWith(',')) {
      raw = trimTrailingCommas(raw);
    } else {
      const from = i;
      let depth = 0;
      while (i < n && (depth > 0 || srcset[i] !== ',')) {
        if (srcset[i] === '(') depth++;
        else if (srcset[i] === ')' && depth > 0) depth--;
        i++;
      }
      descriptors = srcset.slice(from, i).trim();
    }
    const url = safeUrl(raw, base);
    if (url !== null) out.push(descriptors === '' ? url : `${url} ${descriptors}`);
  }
  return out.join(', ');
}

/** The first candidate URL of a `srcset`, or null. */
export function firstSrcsetUrl(srcset: string): string | null {
  let i = 0;
  while (i < srcset.length && (isAsciiSpace(srcset.charCodeAt(i)) || srcset[i] === ',')) i++;
  const start = i;
  while (i < srcset.length && !isAsciiSpace(srcset.charCodeAt(i))) i++;
  const raw = trimTrailingCommas(srcset.slice(start, i));
  return raw === '' ? null : raw;
}

function trimTrailingCommas(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === ',') end--;
  return text.slice(0, end);
}

function isAsciiSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 12 || code === 13;
}
