import { createHash } from 'node:crypto';

/** URLs longer than this are not crawled (the common limit of browsers, sitemaps and search engines). */
const MAX_URL_LENGTH = 2048;

/**
 * Resolves `raw` against `base` into the absolute http(s) URL the crawl stores, without its
 * fragment; null when it does not parse, is not http(s) or is longer than MAX_URL_LENGTH.
 */
export function normalizeUrl(raw: string, base?: string): string | null {
  const url = URL.parse(trimAsciiWhitespace(raw), base);
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) return null;
  url.hash = '';
  const href = url.href;
  return href.length > MAX_URL_LENGTH ? null : href;
}

/** The origin (`scheme://host[:port]`) of an absolute URL; throws TypeError when it does not parse. */
export function originOf(url: string): string {
  return new URL(url).origin;
}

/** True for an absolute http(s) URL. */
export function isHttpUrl(text: string): boolean {
  const url = URL.parse(text);
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:');
}

// A loop, not a RegExp: `[ ]+$` backtracks quadratically over white space inside a hostile link.
function trimAsciiWhitespace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isAsciiWhitespace(text.charCodeAt(start))) start++;
  while (end > start && isAsciiWhitespace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

function isAsciiWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d;
}

/** The 16-byte key of a URL in the crawl's tables: the first half of SHA-256 of `${kind} ${url}`. */
export function urlKey(kind: string, url: string): Buffer {
  // A copy, so the key does not keep the whole digest alive or alias its memory.
  return Buffer.from(createHash('sha256').update(`${kind} ${url}`).digest().subarray(0, 16));
}
