import { type AnyNode, type Document, isTag } from 'domhandler';
import { Parser } from 'htmlparser2';

/** Characters of an unparsed page searched for `<base href>` (the head, where it belongs). */
const HEAD_SCAN_CHARS = 256 * 1024;
const SCAN_CHUNK_CHARS = 16 * 1024;

/**
 * The URL a page's relative links resolve against: its first `<base href>` resolved against
 * `pageUrl`, else `pageUrl`. It is looked up in the parsed page (`root`), or, when the page was
 * not parsed, in the page's head, at most HEAD_SCAN_CHARS into it.
 */
export function baseUrlOf(root: Document | null, html: string, pageUrl: string): string {
  const href = root === null ? scanHeadForBaseHref(html) : findBaseHref(root);
  if (href === null) return pageUrl;
  const url = URL.parse(href, pageUrl);
  // As in browsers: a base that does not parse, or is a data: or javascript: URL, is ignored.
  if (url === null || url.protocol === 'data:' || url.protocol === 'javascript:') return pageUrl;
  return url.href;
}

/** The href of the first `base` element that has one, in document order (an iterative walk: pages nest deeply). */
function findBaseHref(root: Document): string | null {
  let node: AnyNode | undefined = root.children[0];
  while (node !== undefined) {
    if (isTag(node)) {
      if (node.name === 'base' && Object.hasOwn(node.attribs, 'href')) return node.attribs.href ?? '';
      const first = node.children[0];
      if (first !== undefined) {
        node = first;
        continue;
      }
    }
    node = following(node, root);
  }
  return null;
}

/** The node after `node` and its descendants in document order, within `root`. */
function following(node: AnyNode, root: Document): AnyNode | undefined {
  for (let current: AnyNode | null = node; current !== null && current !== root; current = current.parent) {
    if (current.next !== null) return current.next;
  }
  return undefined;
}

/** The first `<base href>` before the head ends (`</head>` or `<body>`), tokenized as the parser would. */
function scanHeadForBaseHref(html: string): string | null {
  const scan: { href: string | null; done: boolean } = { href: null, done: false };
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (scan.done) return;
        if (name === 'base' && Object.hasOwn(attribs, 'href')) {
          scan.href = attribs.href ?? '';
          scan.done = true;
        } else if (name === 'body') scan.done = true;
      },
      onclosetag(name) {
        if (name === 'head') scan.done = true;
      },
    },
    { decodeEntities: true },
  );
  const end = Math.min(html.length, HEAD_SCAN_CHARS);
  for (let at = 0; at < end && !scan.done; at += SCAN_CHUNK_CHARS) {
    parser.write(html.slice(at, Math.min(at + SCAN_CHUNK_CHARS, end)));
  }
  return scan.href;
}
