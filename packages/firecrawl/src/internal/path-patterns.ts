import { escapeRegExp } from './urls.ts';

/** Longest include/exclude pattern a job takes (docs/api.md §11). */
const MAX_PATTERN_LENGTH = 500;
/** Include or exclude patterns a job takes (docs/api.md §11). */
export const MAX_PATTERNS = 50;

/** Scheme and authority of an absolute URL: its path starts right after. */
const AUTHORITY = 'https?://[^/?#]+';
/** Where a URL's path starts: after the authority, before its `/`. */
const PATH_START = `(?<=^${AUTHORITY})(?=/)`;
/** Where a URL's path ends: before the query (the job's URLs have no fragment). */
const PATH_END = '(?=[?#]|$)';

type Translated = { ok: true; pattern: string } | { ok: false; message: string };

/** True when `pattern` has a `|` outside groups and classes. */
function hasTopLevelAlternation(pattern: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return true;
  }
  return false;
}

/**
 * Rewrites a pattern meant for a URL's path so that, run on the whole URL, it can only match
 * inside the path: `^` and `\A` become the path's start, `$` and `\z` its end, and `.`, `\S`,
 * `\W`, `\D` and negated classes no longer match `?` or `#` (so never reach the query).
 */
function rewrite(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      i++;
      if (inClass) out += c + next;
      else if (next === 'S' || next === 'W' || next === 'D') out += `[^\\${next.toLowerCase()}?#]`;
      else if (next === 'A') out += PATH_START;
      else if (next === 'z') out += PATH_END;
      else out += c + next;
    } else if (inClass) {
      out += c;
      inClass = c !== ']';
    } else if (c === '[') {
      inClass = true;
      if (pattern[i + 1] === '^') {
        out += '[^?#';
        i++;
      } else out += c;
    } else if (c === '.') out += '[^?#]';
    else if (c === '^') out += PATH_START;
    else if (c === '$') out += PATH_END;
    // RE2's named group, which JavaScript writes without the P.
    else if (pattern.startsWith('(?P<', i)) {
      out += '(?<';
      i += 3;
    } else out += c;
  }
  return out;
}

/** Look-around and back-references: RE2 (Firecrawl's engine) refuses them, so a 400 here too. */
const NOT_RE2 = /\(\?<?[=!]|\\[1-9]|\\k</;

function compiles(pattern: string): string | null {
  try {
    new RegExp(pattern);
    return null;
  } catch (error) {
    return (error as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
  }
}

/** Checks a pattern as the job will compile it: JavaScript syntax, at most 500 characters. */
export function checkUrlPattern(pattern: string): Translated {
  const error = compiles(pattern);
  if (error !== null) return { ok: false, message: `invalid regular expression: ${error}` };
  if (pattern.length > MAX_PATTERN_LENGTH)
    return {
      ok: false,
      message: `is too long as a URL pattern (${pattern.length} characters, at most ${MAX_PATTERN_LENGTH})`,
    };
  return { ok: true, pattern };
}

/**
 * A Firecrawl path pattern (a regular expression searched in the URL's path) as a job pattern
 * (searched in the absolute URL): `^/blog/.*` → `^https?://[^/?#]+/blog/[^?#]*`; a pattern
 * without `^` may match anywhere in the path, never in the host or the query.
 */
export function translatePathPattern(pattern: string): Translated {
  if (NOT_RE2.test(pattern))
    return {
      ok: false,
      message: 'look-around ((?=...), (?!...), (?<=...), (?<!...)) and back-references are not supported',
    };
  const body = rewrite(pattern);
  if (body.startsWith(PATH_START) && !hasTopLevelAlternation(pattern)) {
    const rest = body.slice(PATH_START.length);
    return checkUrlPattern(`^${AUTHORITY}${rest.startsWith('/') ? rest : `(?=/)${rest}`}`);
  }
  return checkUrlPattern(`^${AUTHORITY}(?=/)[^?#]*?(?:${body})`);
}

/** Longest part of a seed's path kept in its guard, so the guard stays under the length limit. */
const MAX_GUARD_PATH = 200;

/**
 * Exclude pattern keeping a crawl under the seed's path (Firecrawl's default without
 * `crawlEntireDomain`: a link's path must start with the seed's); null for the root path.
 */
export function seedPathGuard(seed: string): string | null {
  const path = new URL(seed).pathname;
  if (path === '/' || path === '') return null;
  return `^(?!${AUTHORITY}${escapeRegExp(path.slice(0, MAX_GUARD_PATH))})`;
}

/**
 * Exclude pattern keeping a crawl on the seed's host, with or without `www.` (as Firecrawl
 * treats them), any scheme and port; with `subdomains`, on its subdomains too.
 */
export function hostGuard(seed: string, subdomains: boolean): string {
  const host = escapeRegExp(new URL(seed).hostname.replace(/^www\./, ''));
  const prefix = subdomains ? '(?:[^/?#@]+\\.)?' : '(?:www\\.)?';
  return `^(?!https?://(?:[^/?#@]*@)?${prefix}${host}(?::\\d+)?(?:[/?#]|$))`;
}

/** Path segments of a URL as Firecrawl counts them for v1's `maxDepth`. */
export const pathDepth = (url: string): number =>
  new URL(url).pathname.split('/').filter((s) => s !== '' && s !== 'index.php' && s !== 'index.html').length;

/** Deepest path v1 allows: `maxDepth` segments below the seed's own. */
const MAX_GUARDED_DEPTH = 1000;

/** Exclude pattern for URLs deeper than `depth` path segments; null when no limit applies. */
export function depthGuard(depth: number): string | null {
  if (depth >= MAX_GUARDED_DEPTH) return null;
  return `^${AUTHORITY}(?:/+[^/?#]+){${depth + 1}}`;
}
