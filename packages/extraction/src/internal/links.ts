import { type AnyNode, type Document, type Element, isComment, isTag, isText } from 'domhandler';
import { baseUrlOf } from './base-url.ts';
import type { CompiledCss } from './css.ts';
import { XAttr } from './dom.ts';
import { ExtractionError, failedOnPage } from './errors.ts';
import { type CompiledExpression, compileForJob, type QueryType } from './query.ts';
import { eachRegexMatch } from './regex.ts';
import { ownTextValue, textValue } from './values.ts';
import { type CompiledXPath, selectXPathItems } from './xpath.ts';

/** Link queries a crawl may have. */
const MAX_FOLLOW_QUERIES = 10;
/** URLs one page may give to follow; evaluation stops there. */
const MAX_LINKS = 10_000;
/** Longer matches are not taken for URLs. */
const MAX_URL_CHARS = 4096;
/** Matches of one link query looked at; it bounds the result an XPath builds before it is read. */
const MAX_MATCHES_PER_QUERY = 100_000;

type CompiledLink = { readonly label: string } & CompiledExpression;

const brand: unique symbol = Symbol('CompiledLinks');

export interface CompiledLinks {
  readonly [brand]: {
    readonly queries: readonly CompiledLink[];
    readonly needsDom: boolean;
  };
}

/** A page's link queries and what to keep of their matches (see evaluateLinks). */
export interface LinkOptions {
  compiled: CompiledLinks;
  /**
   * The URL to follow for a raw match, absolute and normalised, or null to drop it; `base` is the
   * URL the match is relative to. It runs within the page's time limit.
   */
  accept: (raw: string, base: string) => string | null;
  /** The page's URL: relative links resolve against its `<base href>` if it has one, else against this. */
  baseUrl: string;
}

/** What a page's evaluation is doing, for the time limit's message. */
interface Progress {
  activity: string;
}

/**
 * Compiles a crawl's 1 to 10 link queries, each as compileJob compiles a query (within
 * `timeLimitMs`, as compileForJob). Throws ExtractionError naming `follow query N` (from 1) for
 * one that does not compile.
 */
export function compileLinks(
  follow: readonly { type: QueryType; query: string }[],
  timeLimitMs?: number,
): CompiledLinks {
  if (follow.length < 1 || follow.length > MAX_FOLLOW_QUERIES) {
    throw new ExtractionError(
      `a crawl needs 1 to ${MAX_FOLLOW_QUERIES} follow queries, got ${follow.length}`,
    );
  }
  const queries = follow.map(({ type, query }, i): CompiledLink => {
    const subject = `follow query ${i + 1}`;
    const compiled = compileForJob(type, query, { maxItems: MAX_MATCHES_PER_QUERY }, subject, timeLimitMs);
    return { label: `${type} ${subject}`, ...compiled };
  });
  return { [brand]: { queries, needsDom: queries.some((query) => query.type !== 'regex') } };
}

/** Whether the link queries need the parsed page. */
export function linksNeedDom(links: CompiledLinks): boolean {
  return links[brand].needsDom;
}

/**
 * The URLs the link queries give on a page (`root` is null when no query needs it): each match,
 * of at most MAX_URL_CHARS, goes through `accept`; the kept URLs come back deduplicated in
 * first-seen order, at most MAX_LINKS. Runs inside the page's time limit.
 */
export function evaluateLinks(
  options: LinkOptions,
  html: string,
  root: Document | null,
  progress: Progress,
): string[] {
  const { compiled, accept } = options;
  progress.activity = "while finding the page's base URL";
  const base = baseUrlOf(root, html, options.baseUrl);
  const kept = new Set<string>();
  for (const query of compiled[brand].queries) {
    progress.activity = `${query.label} was running`;
    let matches = 0;
    evaluateLink(query, html, root, (raw) => {
      if (raw.length <= MAX_URL_CHARS) {
        const url = accept(raw, base);
        if (url !== null) kept.add(url);
      }
      matches++;
      return kept.size < MAX_LINKS && matches < MAX_MATCHES_PER_QUERY;
    });
    if (kept.size >= MAX_LINKS) break;
  }
  return [...kept];
}

/** Takes one raw match of a link query; false once no more are wanted. */
type Offer = (raw: string) => boolean;

/** Gives `offer` each raw match of one link query, in order, until it returns false. */
function evaluateLink(query: CompiledLink, html: string, root: Document | null, offer: Offer): void {
  if (query.type === 'regex') eachRegexMatch(query.regex, html, offer);
  else if (query.type === 'css') offerCss(query.label, query.css, root!, offer);
  else offerXPath(query.label, query.xpath, root!, offer);
}

function offerCss(label: string, css: CompiledCss, root: Document, offer: Offer): void {
  let elements: Element[];
  try {
    elements = css.select(root);
  } catch (error) {
    throw failedOnPage(label, error);
  }
  const { output } = css;
  for (const element of elements) {
    // A selector without a suffix names the link itself: its href.
    const raw =
      output.kind === 'ownText'
        ? ownTextValue(element, MAX_URL_CHARS)
        : attribute(element, output.kind === 'attr' ? output.name : 'href');
    if (raw !== null && !offer(raw)) return;
  }
}

function offerXPath(label: string, xpath: CompiledXPath, root: Document, offer: Offer): void {
  let items: readonly unknown[];
  try {
    items = selectXPathItems(xpath, root);
  } catch (error) {
    throw failedOnPage(label, error);
  }
  for (const item of items) {
    const raw = xpathLinkValue(item);
    if (raw !== null && !offer(raw)) return;
  }
}

/**
 * An XPath item as a URL: a string as is, an attribute its value, an element its href, a text
 * node (or comment) its text; null for an element without href, a document, a map or an array.
 */
function xpathLinkValue(item: unknown): string | null {
  if (typeof item === 'string') return item;
  if (item instanceof XAttr) return item.value;
  if (typeof item !== 'object' || item === null) return String(item);
  if (!('nodeType' in item)) return null;
  const node = item as AnyNode;
  if (isTag(node)) return attribute(node, 'href');
  if (isText(node) || isComment(node)) return textValue(node, MAX_URL_CHARS);
  return null;
}

function attribute(element: Element, name: string): string | null {
  return Object.hasOwn(element.attribs, name) ? (element.attribs[name] ?? '') : null;
}
