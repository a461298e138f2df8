import { type Element, isTag, isText } from 'domhandler';
import { HEADING_LEVEL } from './dom.ts';

/** What an element's class, id (and a custom element's name) say about it. */
export interface Hints {
  /** +25 when the names say content, −25 when they say boilerplate or a widget, 0 for both or none. */
  weight: number;
  /**
   * Whether the names say boilerplate: strongly (a thing no article holds: comments, cookies, share
   * bars, related links… whatever else the element is called) or weakly (a layout or chrome word,
   * such as `sidebar` or `nav`, that a content name on the same element outweighs).
   */
  boilerplate: 'strong' | 'weak' | null;
  /** Whether the boilerplate is a thing (comments, share bars…) rather than a layout word. */
  thing: boolean;
}

const NONE: Hints = Object.freeze({ weight: 0, boilerplate: null, thing: false });

/**
 * Things a reader view leaves out, found in any word of a name (`commentlist`, `sharedaddy`,
 * `cookie-bar`): they win over a content name on the same element (`article-comments`).
 */
const THING = new RegExp(
  [
    'comment(?!ary)', // not `commentary`, a kind of article
    'disqus',
    'cookie',
    'consent',
    'gdpr',
    'didomi',
    'onetrust',
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
    'upsell',
    'crosssell',
    'tagcloud',
    'skiplink',
    'signup',
    'optin',
    'paywall',
    'replies',
    'trending',
    'mostread',
    'mostpopular',
  ].join('|'),
);

/** Things named by two or more words (`skip-link`, `most-read`, `read-next`), matched in a name's words joined by `-`. */
const THING_PHRASE =
  /(?:^|-)(?:skip-(?:link|to)|tag-cloud|cross-sell|also-bought|opt-in|sign-up|most-(?:read|popular|viewed|shared|commented)|read-(?:next|also)|also-read|more-(?:stories|news|articles)|you-may-like|author-bio)(?:-|$)/;

/** Layout and chrome words found in any word of a name (`sidebar`, `leftsidebar`): a content name outweighs them. */
const LAYOUT = /sidebar|pagination|pager|footer|navbar|masthead/;

/** Short chrome words, matched as whole words only (`nav`, not `canvas`): a content name outweighs them. */
const CHROME = new Set([
  'ad',
  'ads',
  'adv',
  'author',
  'banner',
  'bio',
  'byline',
  'cart',
  'copyright',
  'cta',
  'dateline',
  'header',
  'login',
  'menu',
  'meta',
  'metadata',
  'nav',
  'navigation',
  'popular',
  'rss',
  'search',
  'signin',
  'tags',
  'timestamp',
  'toc',
  'toolbar',
]);

/** Words that lower a candidate's score without making it boilerplate (as Readability weighs them). */
const WIDGET = new Set(['contact', 'scroll', 'shopping', 'widget', 'teaser', 'teasers']);

/** Content words: whole words, or these stems anywhere in a word (`articlebody`, `postcontent`). */
const CONTENT_WORDS = new Set(['post', 'main', 'body', 'text', 'blog', 'story', 'entry', 'hentry', 'copy']);
const CONTENT_STEM = /article|content|story|prose|markdown|entry/;

/** Names that say what an element has or is doing, not what it is (`has-sidebar`, `share-enabled`). */
const MODIFIER_PREFIX = new Set(['has', 'with', 'no', 'is', 'without']);
const MODIFIER_SUFFIX = new Set([
  'enabled',
  'disabled',
  'active',
  'loaded',
  'visible',
  'open',
  'ready',
  'init',
]);

/** Hints of class-and-id strings seen lately (sites repeat theirs on every element and page). */
const cache = new Map<string, Hints>();
const CACHE_SIZE = 10_000;
/** Longer class-and-id strings are judged by their start (utility-class soups run to kilobytes). */
const MAX_NAMES_CHARS = 512;

/**
 * The hints of an element's class, id and component name (`data-component`, `data-module` or
 * `data-testid`, as front-end frameworks name their parts), and of its tag name when it is a custom
 * element. An id of several words on an element that starts with a heading is not judged:
 * documentation generators make it from the heading (`<div class="section"
 * id="sharing-with-other-developers"><h2>`).
 */
export function hintsOf(element: Element): Hints {
  const { attribs } = element;
  const className = attribs.class;
  const id =
    attribs.id === undefined || (wordsOf(attribs.id).length > 1 && startsWithHeading(element))
      ? undefined
      : attribs.id;
  const component = attribs['data-component'] ?? attribs['data-module'] ?? attribs['data-testid'];
  const custom = element.name.includes('-');
  if (className === undefined && id === undefined && component === undefined && !custom) return NONE;
  let names = `${custom ? element.name : ''} ${className ?? ''} ${id ?? ''} ${component ?? ''}`;
  if (names.length > MAX_NAMES_CHARS) names = names.slice(0, MAX_NAMES_CHARS);
  let hints = cache.get(names);
  if (hints === undefined) {
    hints = judge(names);
    if (cache.size >= CACHE_SIZE) cache.clear();
    cache.set(names, hints);
  }
  return hints;
}

type Kind = 'thing' | 'layout' | 'chrome' | 'content' | 'widget' | null;

/**
 * Class and id names read as words: each space-separated name is split at `-`, `_`, other
 * punctuation and camelCase humps (`l-sidebar-fixed`, `article__body`, `articleBody`). Within one
 * name a boilerplate word wins (`entry-meta`, `sidebar-content`); across names a thing wins over
 * content (`article comments`), content over a layout or chrome word (`l-sidebar-fixed
 * l-article-body-segment` is an article body in a layout with a fixed sidebar; `article-body
 * pagination-first` is the first page of a paginated body).
 */
function judge(names: string): Hints {
  let thing = false;
  let layout = false;
  let chrome = false;
  let content = false;
  let widget = false;
  for (const name of names.split(/\s+/)) {
    if (name === '') continue;
    switch (nameKind(name)) {
      case 'thing':
        thing = true;
        break;
      case 'layout':
        layout = true;
        break;
      case 'chrome':
        chrome = true;
        break;
      case 'content':
        content = true;
        break;
      case 'widget':
        widget = true;
        break;
    }
  }
  if (thing) return { weight: content ? 0 : -25, boilerplate: 'strong', thing: true };
  if (layout || chrome)
    return content ? NONE : { weight: -25, boilerplate: layout ? 'strong' : 'weak', thing: false };
  if (content) return { weight: widget ? 0 : 25, boilerplate: null, thing: false };
  return widget ? { weight: -25, boilerplate: null, thing: false } : NONE;
}

/** The words of one name, lowercased: `l-article-body-segment` → l, article, body, segment; `articleBody` → article, body. */
export function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '');
}

function nameKind(name: string): Kind {
  const words = wordsOf(name);
  if (words.length === 0) return null;
  if (MODIFIER_PREFIX.has(words[0]!) || MODIFIER_SUFFIX.has(words[words.length - 1]!)) return null;
  // Within a name the word that says least about content wins: thing, layout, chrome, widget, content.
  let rank = 0;
  for (const word of words) {
    if (THING.test(word)) return 'thing';
    if (LAYOUT.test(word)) rank = Math.max(rank, 4);
    else if (CHROME.has(word)) rank = Math.max(rank, 3);
    else if (WIDGET.has(word)) rank = Math.max(rank, 2);
    else if (CONTENT_WORDS.has(word) || CONTENT_STEM.test(word)) rank = Math.max(rank, 1);
  }
  if (words.length > 1 && THING_PHRASE.test(words.join('-'))) return 'thing';
  return RANKED[rank]!;
}

const RANKED: readonly Kind[] = [null, 'content', 'widget', 'chrome', 'layout'];

function startsWithHeading(element: Element): boolean {
  for (const child of element.children) {
    if (isTag(child)) return HEADING_LEVEL.has(child.name);
    if (isText(child) && child.data.trim() !== '') return false;
  }
  return false;
}
