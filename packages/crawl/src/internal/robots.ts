import { canonicalPath, patternMatches } from './robots-path.ts';
import { normalizeUrl } from './url.ts';

/** One allow or disallow line of the group that applies; `path` is percent-encoded canonically. */
export interface RobotsRule {
  allow: boolean;
  path: string;
}

/** What a robots.txt says to one crawler: plain JSON, so it can be stored and read back. */
export interface RobotsRules {
  rules: RobotsRule[];
  /** Absolute http(s) URLs of the `Sitemap:` lines, whichever group they sit in. */
  sitemaps: string[];
  /** The group's `Crawl-delay` in milliseconds (≤ MAX_CRAWL_DELAY_MS), when it has one. */
  crawlDelayMs?: number;
}

/** A longer `Crawl-delay` is taken as this: one page a minute. */
export const MAX_CRAWL_DELAY_MS = 60_000;

// Bounds against hostile files. RFC 9309 §2.5 asks parsers to read at least 500 KiB.
const MAX_TEXT_CHARS = 500 * 1024;
const MAX_RULES = 10_000;
const MAX_PATH_CHARS = 2048;
const MAX_SITEMAPS = 100;

const LINE_BREAK = /\r\n|\r|\n/;
const PRODUCT_TOKEN = /^[A-Za-z_-]+/;

/**
 * Parses robots.txt (RFC 9309) for the crawler named `productToken`: the rules of the groups
 * naming it, else of the `*` groups, else none. Never throws; garbage gives no rules.
 */
export function parseRobots(text: string, productToken: string): RobotsRules {
  const agent = PRODUCT_TOKEN.exec(productToken.trim())?.[0].toLowerCase() ?? '';
  const specific: RobotsRule[] = [];
  const generic: RobotsRule[] = [];
  const delays: { specific?: number; generic?: number } = {};
  const sitemaps = new Set<string>();
  let foundSpecific = false;
  // The group being read: whether its user-agent lines name us or `*`.
  let readingAgents = false;
  let groupIsSpecific = false;
  let groupIsGeneric = false;

  for (const line of boundedLines(text)) {
    const field = parseLine(line);
    if (field === null) continue;
    const { key, value } = field;
    if (key === 'user-agent') {
      if (!readingAgents) groupIsSpecific = groupIsGeneric = false;
      readingAgents = true;
      if (value.startsWith('*')) groupIsGeneric = true;
      else if (agent !== '' && PRODUCT_TOKEN.exec(value)?.[0].toLowerCase() === agent)
        groupIsSpecific = foundSpecific = true;
    } else if (key === 'allow' || key === 'disallow') {
      readingAgents = false;
      const target = groupIsSpecific ? specific : groupIsGeneric ? generic : null;
      const rule = target && target.length < MAX_RULES ? toRule(key === 'allow', value) : null;
      if (rule) target?.push(rule);
    } else if (key === 'crawl-delay') {
      const seconds = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
      const delayMs = Math.min(MAX_CRAWL_DELAY_MS, Math.round(seconds * 1000));
      if (!(delayMs > 0)) continue;
      if (groupIsSpecific) delays.specific ??= delayMs;
      if (groupIsGeneric) delays.generic ??= delayMs;
    } else if (key === 'sitemap' && sitemaps.size < MAX_SITEMAPS) {
      const url = normalizeUrl(value);
      if (url !== null) sitemaps.add(url);
    }
  }
  const crawlDelayMs = foundSpecific ? delays.specific : delays.generic;
  return {
    rules: foundSpecific ? specific : generic,
    sitemaps: [...sitemaps],
    ...(crawlDelayMs !== undefined && { crawlDelayMs }),
  };
}

/** True when `url` (absolute) may be fetched under `robots`: the longest matching rule decides, allow on a tie. */
export function robotsAllows(robots: RobotsRules, url: string): boolean {
  const parsed = URL.parse(url);
  if (parsed === null) return false;
  if (parsed.pathname === '/robots.txt' || robots.rules.length === 0) return true;
  const path = canonicalPath(parsed.pathname + parsed.search);
  let bestLength = -1;
  let allowed = true;
  for (const rule of robots.rules) {
    const length = rule.path.length;
    if (length < bestLength || (length === bestLength && (allowed || !rule.allow))) continue;
    if (!patternMatches(rule.path, path)) continue;
    bestLength = length;
    allowed = rule.allow;
  }
  return allowed;
}

function boundedLines(text: string): string[] {
  let bounded = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (bounded.length > MAX_TEXT_CHARS) {
    // Drop the line cut in half: a shortened path would block more than the site asked.
    const lastBreak = Math.max(
      bounded.lastIndexOf('\n', MAX_TEXT_CHARS),
      bounded.lastIndexOf('\r', MAX_TEXT_CHARS),
    );
    bounded = bounded.slice(0, lastBreak > 0 ? lastBreak : MAX_TEXT_CHARS);
  }
  return bounded.split(LINE_BREAK);
}

function parseLine(line: string): { key: string; value: string } | null {
  const hash = line.indexOf('#');
  const content = hash < 0 ? line : line.slice(0, hash);
  const colon = content.indexOf(':');
  if (colon < 0) return null;
  return { key: content.slice(0, colon).trim().toLowerCase(), value: content.slice(colon + 1).trim() };
}

function toRule(allow: boolean, path: string): RobotsRule | null {
  // An empty value says nothing (an empty disallow allows all); a path must start with `/` or `*`.
  if (path === '' || path.length > MAX_PATH_CHARS || (path[0] !== '/' && path[0] !== '*')) return null;
  return { allow, path: canonicalPath(path) };
}
