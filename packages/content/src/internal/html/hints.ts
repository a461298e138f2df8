import { type Element, isTag, isText } from 'domhandler';
import { HEADING_LEVEL } from './dom.ts';

/** What an element's class, id (and a custom element's name) say about it. */
interface Hints {
  /** +25 for a content name (article, content, post…), −25 for a boilerplate one, 0 for both or none. */
  weight: number;
  /** Whether the names say boilerplate: strongly (a comment, cookie, share… name wins over a content name) or weakly. */
  boilerplate: 'strong' | 'weak' | null;
}

const NONE: Hints = Object.freeze({ weight: 0, boilerplate: null });

/** Names of what a reader view leaves out, found anywhere in a class or id (`commentlist`, `cookie-bar`). */
const STRONG = new RegExp(
  [
    // Not `commentary`, a kind of article.
    'comment(?!ary)',
    'disqus',
    'cookie',
    'consent',
    'gdpr',
    'didomi',
    'onetrust',
    'sidebar',
    'related',
    'recommend',
    'share',
    'sharing',
    'social',
    'newsletter',
    'subscri',
    'breadcrumb',
    'advert',
    'sponsor',
    'promo',
    'popup',
    'modal',
    'outbrain',
    'taboola',
    'pagination',
    'pager',
    'footer',
    'navbar',
    'skip-link',
    'skiplink',
    'skip-to',
    'tagcloud',
    'tag-cloud',
    'upsell',
    'cross-sell',
    'crosssell',
    'also-bought',
    'masthead',
    'opt-in',
    'optin',
    'signup',
    'sign-up',
  ].join('|'),
);

/** Short names of boilerplate, matched as whole words of a class or id only (`nav`, not `canvas`). */
const WEAK = new Set([
  'ad',
  'ads',
  'adv',
  'banner',
  'cart',
  'copyright',
  'cta',
  'header',
  'login',
  'menu',
  'nav',
  'navigation',
  'rss',
  'search',
  'signin',
  'tags',
  'toc',
  'toolbar',
]);

const POSITIVE = /article|content|main|post|entry|body|text|story|prose|markdown|blog/;
const WORD_BREAK = /[^a-z0-9]+/;

/** Hints of class-and-id strings seen lately (sites repeat theirs on every element and page). */
const cache = new Map<string, Hints>();
const CACHE_SIZE = 10_000;
/** Longer class-and-id strings are judged by their start (utility-class soups run to kilobytes). */
const MAX_NAMES_CHARS = 512;

/**
 * The hints of an element's class and id, and of its tag name when it is a custom element. The id
 * of an element that starts with a heading is not judged: documentation generators make it from
 * the heading (`<div class="section" id="sharing-with-other-developers"><h2>`).
 */
export function hintsOf(element: Element): Hints {
  const { attribs } = element;
  const className = attribs.class;
  const id = attribs.id === undefined || startsWithHeading(element) ? undefined : attribs.id;
  const custom = element.name.includes('-');
  if (className === undefined && id === undefined && !custom) return NONE;
  let names = `${custom ? element.name : ''} ${className ?? ''} ${id ?? ''}`;
  if (names.length > MAX_NAMES_CHARS) names = names.slice(0, MAX_NAMES_CHARS);
  let hints = cache.get(names);
  if (hints === undefined) {
    hints = judge(names.toLowerCase());
    if (cache.size >= CACHE_SIZE) cache.clear();
    cache.set(names, hints);
  }
  return hints;
}

function judge(names: string): Hints {
  const positive = POSITIVE.test(names);
  let boilerplate: Hints['boilerplate'] = null;
  if (STRONG.test(names)) boilerplate = 'strong';
  else if (names.split(WORD_BREAK).some((word) => WEAK.has(word))) boilerplate = 'weak';
  const weight = (positive ? 25 : 0) - (boilerplate === null ? 0 : 25);
  if (weight === 0 && boilerplate === null) return NONE;
  return { weight, boilerplate };
}

function startsWithHeading(element: Element): boolean {
  for (const child of element.children) {
    if (isTag(child)) return HEADING_LEVEL.has(child.name);
    if (isText(child) && child.data.trim() !== '') return false;
  }
  return false;
}
