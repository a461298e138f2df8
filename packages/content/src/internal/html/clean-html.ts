import { type AnyNode, type Element, hasChildren, isTag, isText } from 'domhandler';
import { Output } from './limits.ts';
import type { ContentView } from './main-content.ts';
import { resolveSrcset, resolveUrl, runsScript } from './urls.ts';

/** Elements without content or end tag (HTML's void elements). */
export const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'source',
  'track',
  'wbr',
]);
/** Attributes holding one URL, made absolute. */
const URL_ATTRIBUTES = new Set([
  'action',
  'background',
  'cite',
  'data-src',
  'formaction',
  'href',
  'longdesc',
  'poster',
  'src',
]);
/** URL attributes that navigate or submit (a `data:` URL there would open a document of its own). */
const NAVIGATING = new Set(['action', 'formaction', 'href']);
const SRCSET_ATTRIBUTES = new Set(['srcset', 'data-srcset']);
const KEEPS_FIRST_NEWLINE = new Set(['pre', 'textarea', 'listing']);
/** Names the serializer writes; others (`a"b` from broken markup) are left out. */
const VALID_NAME = /^[a-zA-Z][a-zA-Z0-9_.:-]*$/;
const TEXT_ESCAPES = /[&<>\u00a0]/g;
const ATTRIBUTE_ESCAPES = /[&"\u00a0]/g;
const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  '\u00a0': '&nbsp;',
};

/**
 * The content view as clean HTML: no script, style, comment or hidden element, no event-handler
 * (`on*`) or `style` attribute, no `javascript:` URL; URLs (href, src, srcset…) absolute. At most
 * about `maxChars` UTF-16 code units. An iterative walk (a stack of end tags), so depth costs no stack.
 */
export function writeCleanHtml(view: ContentView, base: string | undefined, maxChars: number): string {
  const out = new Output(maxChars);
  const stack: (AnyNode | string)[] = unwrapped(view.roots).reverse();
  while (stack.length > 0 && !out.full) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      out.write(item);
      continue;
    }
    if (isText(item)) {
      out.write(item.data.replace(TEXT_ESCAPES, escapeChar));
      continue;
    }
    if (!isTag(item)) {
      if ('children' in item)
        for (let i = item.children.length - 1; i >= 0; i--) stack.push(item.children[i]!);
      continue;
    }
    if (view.skip(item)) continue;
    const named = VALID_NAME.test(item.name);
    if (named) {
      out.write(`<${item.name}${attributes(item, base)}>`);
      if (VOID.has(item.name)) continue;
      stack.push(`</${item.name}>`);
      // A parser drops a newline right after <pre>: one that is content needs another before it.
      const first = item.children[0];
      if (
        KEEPS_FIRST_NEWLINE.has(item.name) &&
        first !== undefined &&
        isText(first) &&
        first.data.startsWith('\n')
      ) {
        out.write('\n');
      }
    }
    for (let i = item.children.length - 1; i >= 0; i--) stack.push(item.children[i]!);
  }
  return out.toString();
}

/** The roots with the document, `<html>` and `<body>` replaced by their content (they are the page, not part of it). */
function unwrapped(roots: readonly AnyNode[]): AnyNode[] {
  const out: AnyNode[] = [];
  const pending = [...roots].reverse();
  while (pending.length > 0) {
    const node = pending.pop()!;
    const wrapper = isTag(node) ? node.name === 'html' || node.name === 'body' : hasChildren(node);
    if (wrapper && hasChildren(node))
      for (let i = node.children.length - 1; i >= 0; i--) pending.push(node.children[i]!);
    else out.push(node);
  }
  return out;
}

function attributes(element: Element, base: string | undefined): string {
  let out = '';
  for (const name in element.attribs) {
    if (name.startsWith('on') || name === 'style' || !VALID_NAME.test(name)) continue;
    let value = element.attribs[name]!;
    if (URL_ATTRIBUTES.has(name)) {
      if (runsScript(value)) continue;
      const url = resolveUrl(value, base);
      // A URL that does not resolve cannot be made absolute; a data: document is no link to follow.
      if (url === null || (url.protocol === 'data:' && NAVIGATING.has(name))) continue;
      value = url.href;
    } else if (SRCSET_ATTRIBUTES.has(name)) value = resolveSrcset(value, base);
    out += ` ${name}="${value.replace(ATTRIBUTE_ESCAPES, escapeChar)}"`;
  }
  return out;
}

function escapeChar(char: string): string {
  return ESCAPES[char]!;
}
