import { type AnyNode, type Element, hasChildren, isTag, isText } from 'domhandler';

/** Elements whose content a reader never sees, whatever the page's CSS. */
const NEVER_SHOWN = new Set([
  'applet',
  'audio',
  'base',
  'canvas',
  'datalist',
  'embed',
  'frame',
  'frameset',
  'head',
  'iframe',
  'link',
  'meta',
  'noembed',
  'noframes',
  'noscript',
  'object',
  'param',
  'script',
  'source',
  'style',
  'svg',
  'template',
  'title',
  'track',
  'video',
]);

/** Elements that start a block of their own (CSS `display: block` and its kin in the UA sheet). */
export const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'caption',
  'center',
  'dd',
  'details',
  'dialog',
  'dir',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'hr',
  'html',
  'legend',
  'li',
  'main',
  'menu',
  'nav',
  'ol',
  'p',
  'pre',
  'search',
  'section',
  'summary',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'ul',
]);

export const HEADING_LEVEL: ReadonlyMap<string, number> = new Map([
  ['h1', 1],
  ['h2', 2],
  ['h3', 3],
  ['h4', 4],
  ['h5', 5],
  ['h6', 6],
]);

/**
 * Whether an element and its content are not shown: a script, style, template, embedded frame or
 * graphic, the head, or an element hidden by its attributes (`hidden`, `aria-hidden="true"`, an
 * inline `display: none` or `visibility: hidden`, a hidden input, a dialog that is not open) or by
 * the classes that hide (`sr-only`, `visually-hidden`, `d-none`, `hidden`…) unless a class shows it
 * again on wider screens.
 */
export function isInvisible(element: Element): boolean {
  const { name, attribs } = element;
  if (NEVER_SHOWN.has(name)) return true;
  const hidden = attribs.hidden;
  // `hidden="until-found"` is collapsed content that find-in-page opens: content.
  if (hidden !== undefined && hidden.toLowerCase() !== 'until-found') return true;
  if (attribs['aria-hidden']?.trim().toLowerCase() === 'true') return true;
  if (name === 'input' && attribs.type?.trim().toLowerCase() === 'hidden') return true;
  if (name === 'dialog' && attribs.open === undefined) return true;
  const style = attribs.style;
  if (style !== undefined && style.length > 0 && hidesByStyle(style)) return true;
  const className = attribs.class;
  return className !== undefined && name !== 'body' && name !== 'html' && hidesByClass(className);
}

/** The classes that CSS frameworks and page themes hide an element with (for screen readers only, or not at all). */
const HIDING_CLASS =
  /(?:^|\s)(?:sr-only|visually-hidden|visuallyhidden|screen-reader-text|screen-reader-only|element-invisible|show-for-sr|d-none|hidden|is-hidden|u-hidden|invisible)(?:\s|$)/i;
/** Classes that show a hidden element again from some screen width on (`hidden md:block`, `d-none d-lg-block`). */
const SHOWN_AGAIN =
  /(?:^|\s)(?:[a-z0-9]+:(?:block|flex|inline|inline-block|inline-flex|grid|table|contents|visible)|d-(?:sm|md|lg|xl|xxl)-(?:block|flex|inline|inline-block|inline-flex|grid|table))(?:\s|$)/i;

function hidesByClass(className: string): boolean {
  const names = className.length > 512 ? className.slice(0, 512) : className;
  return HIDING_CLASS.test(names) && !SHOWN_AGAIN.test(names);
}

function hidesByStyle(style: string): boolean {
  const compact = style.toLowerCase().replace(/\s+/g, '');
  return /(?:^|;)(?:display:none|visibility:hidden)(?:!important)?(?:;|$)/.test(compact);
}

/** The next node in document order after `node` and its descendants, within `root`; null at the end. */
export function nextOutside(node: AnyNode, root: AnyNode): AnyNode | null {
  for (let current: AnyNode | null = node; current !== null && current !== root; current = current.parent) {
    if (current.next !== null) return current.next;
  }
  return null;
}

/** The next node in document order (into children first), within `root`; null at the end. */
export function nextInside(node: AnyNode, root: AnyNode): AnyNode | null {
  if (hasChildren(node) && node.children.length > 0) return node.children[0]!;
  return nextOutside(node, root);
}

/** The text of `root`'s visible descendants, as is (an iterative walk: trees are deep). */
export function textContent(root: AnyNode, skip: (element: Element) => boolean): string {
  let text = '';
  for (let node: AnyNode | null = root; node !== null; ) {
    if (isText(node)) text += node.data;
    else if (isTag(node) && node !== root && skip(node)) {
      node = nextOutside(node, root);
      continue;
    }
    node = nextInside(node, root);
  }
  return text;
}

const WHITESPACE_RUN = /[ \t\n\r\f]+/g;

/** Text with its runs of white space made one space, and trimmed (as a browser shows it). */
export function collapse(text: string): string {
  return text.replace(WHITESPACE_RUN, ' ').trim();
}

/** Whether a character code is HTML white space. */
export function isSpace(code: number): boolean {
  return code === 32 || code === 10 || code === 9 || code === 13 || code === 12;
}

const ADMONITION = /(?:^|\s)(?:admonition|callout|alert|hint|notice|markdown-alert)(?:\s|$)/i;

/** Whether a block is a note, tip or warning of documentation (written as a quote). */
export function isAdmonition(element: Element): boolean {
  const role = element.attribs.role;
  if (role === 'note' || role === 'alert') return true;
  const className = element.attribs.class;
  return (
    className !== undefined && ADMONITION.test(className.length > 512 ? className.slice(0, 512) : className)
  );
}
