import { type AnyNode, type Element, isTag, isText } from 'domhandler';
import { BLOCK, textContent } from './dom.ts';
import { codeSpan, destination, escapeLabel, escapeText } from './markdown-text.ts';
import { firstSrcsetUrl, runsScript, safeUrl } from './urls.ts';

/** What inline markdown is written with. */
export interface InlineWriter {
  skip: (element: Element) => boolean;
  /** The URL links and images resolve against. */
  base: string | undefined;
  /** The HOLDS_* kinds of an element's content (markdown-kinds.ts). */
  kinds: (element: Element) => number;
}

const WHITESPACE_RUN = /[ \t\n\r\f]+/g;

/**
 * A run of inline markdown being collected, with white space collapsed as a browser does: a
 * space between words is written once, none at the start or end, none next to a line break.
 * Parts are joined once at the end (reading a growing string back would copy it each time).
 */
export class InlineText {
  private readonly parts: string[] = [];
  private spaceOwed = false;
  private empty = true;
  private afterBreak = false;
  /** Whether the run began with white space (an emphasis moves it outside its markers). */
  startsWithSpace = false;

  /** Appends text (white space collapsed, markdown escaped). */
  text(data: string): void {
    const collapsed = data.replace(WHITESPACE_RUN, ' ');
    if (collapsed === ' ' || collapsed === '') {
      this.space(collapsed === ' ');
      return;
    }
    const start = collapsed.charCodeAt(0) === 32 ? 1 : 0;
    const end = collapsed.charCodeAt(collapsed.length - 1) === 32 ? collapsed.length - 1 : collapsed.length;
    this.space(start === 1);
    this.markdown(escapeText(collapsed.slice(start, end)));
    this.spaceOwed = end < collapsed.length;
  }

  /** Appends markdown as is, with white space before or after it in the page. */
  inline(markdown: string, spaceBefore: boolean, spaceAfter: boolean): void {
    this.space(spaceBefore);
    if (markdown !== '') this.markdown(markdown);
    if (spaceAfter) this.spaceOwed = true;
  }

  /** A word break (between blocks flattened into a line). */
  space(owed = true): void {
    if (!owed) return;
    if (this.empty) this.startsWithSpace = true;
    else this.spaceOwed = true;
  }

  /** A hard line break (`<br>`). */
  lineBreak(): void {
    if (this.empty) return;
    this.parts.push('\n');
    this.spaceOwed = false;
    this.afterBreak = true;
  }

  isEmpty(): boolean {
    return this.empty;
  }

  /** Whether white space ended the run. */
  get endsWithSpace(): boolean {
    return this.spaceOwed;
  }

  /** The markdown collected, without line breaks at its start or end. */
  value(): string {
    let end = this.parts.length;
    while (end > 0 && this.parts[end - 1] === '\n') end--;
    return this.parts.slice(0, end).join('');
  }

  private markdown(markdown: string): void {
    if (this.spaceOwed && !this.afterBreak && !this.empty) this.parts.push(' ');
    this.parts.push(markdown);
    this.spaceOwed = false;
    this.afterBreak = false;
    this.empty = false;
  }
}

const EM = 1;
const STRONG = 2;
const DEL = 4;
const LINK = 8;
const QUOTE = 16;

/** Writes `node` (and its content) as inline markdown into `out`; `active` holds the wrappers it is inside. */
export function inlineInto(out: InlineText, node: AnyNode, writer: InlineWriter, active: number): void {
  if (isText(node)) {
    out.text(node.data);
    return;
  }
  if (!isTag(node) || writer.skip(node)) return;
  switch (node.name) {
    case 'br':
      out.lineBreak();
      return;
    case 'img':
      out.inline(image(node, writer.base), false, false);
      return;
    case 'a':
      link(out, node, writer, active);
      return;
    case 'em':
    case 'i':
      wrapped(out, node, writer, active, EM, '*');
      return;
    case 'strong':
    case 'b':
      wrapped(out, node, writer, active, STRONG, '**');
      return;
    case 'del':
    case 's':
    case 'strike':
      wrapped(out, node, writer, active, DEL, '~~');
      return;
    case 'q':
      wrapped(out, node, writer, active, QUOTE, '"');
      return;
    case 'code':
    case 'kbd':
    case 'samp':
    case 'tt':
    case 'pre':
      out.inline(codeSpan(textContent(node, writer.skip)), false, false);
      return;
    case 'math':
      out.text(node.attribs.alttext ?? textContent(node, writer.skip));
      return;
  }
  const block = BLOCK.has(node.name);
  if (block) out.space();
  for (const child of node.children) inlineInto(out, child, writer, active);
  if (block) out.space();
}

/** Content inside a pair of markers, the white space at its edges moved outside them. */
function wrapped(
  out: InlineText,
  element: Element,
  writer: InlineWriter,
  active: number,
  kind: number,
  marker: string,
) {
  if ((active & kind) !== 0) {
    for (const child of element.children) inlineInto(out, child, writer, active);
    return;
  }
  const inner = new InlineText();
  for (const child of element.children) inlineInto(inner, child, writer, active | kind);
  const core = inner.value();
  out.inline(core === '' ? '' : `${marker}${core}${marker}`, inner.startsWithSpace, inner.endsWithSpace);
}

/** The label of a permalink to a heading: a sign, escaped or not, alone. */
const PERMALINK = /^\s*\\?[#¶§🔗]\s*$/u;

function link(out: InlineText, element: Element, writer: InlineWriter, active: number): void {
  const href = element.attribs.href;
  const url =
    href === undefined || (active & LINK) !== 0 || runsScript(href) ? null : safeUrl(href, writer.base);
  if (url === null) {
    // Not a link we write (none, nested, script or data): its text stays.
    for (const child of element.children) inlineInto(out, child, writer, active);
    return;
  }
  const inner = new InlineText();
  for (const child of element.children) inlineInto(inner, child, writer, active | LINK);
  let label = inner.value().replace(/\n/g, ' ');
  // A heading's permalink (`#`, `¶`, `§` to an anchor of the page) is not content.
  if (PERMALINK.test(label) && href?.trim().startsWith('#')) return;
  if (label === '') label = escapeLabel(element.attribs['aria-label'] ?? element.attribs.title ?? '');
  if (label === '') return;
  out.inline(`[${label}](${destination(url)})`, inner.startsWithSpace, inner.endsWithSpace);
}

/** An image as markdown (its src, else a lazy-loading attribute, else its srcset's first URL); '' for none. */
function image(element: Element, base: string | undefined): string {
  const { attribs } = element;
  if (isPixel(attribs.width) && isPixel(attribs.height)) return '';
  const url = imageUrl(attribs, base);
  if (url === null) return '';
  return `![${escapeLabel(attribs.alt ?? '')}](${destination(url)})`;
}

function imageUrl(attribs: Record<string, string>, base: string | undefined): string | null {
  for (const name of ['src', 'data-src', 'data-lazy-src', 'data-original']) {
    const value = attribs[name];
    if (value === undefined || value.trim() === '') continue;
    const url = safeUrl(value, base);
    if (url !== null) return url;
  }
  for (const name of ['srcset', 'data-srcset']) {
    const first = attribs[name] === undefined ? null : firstSrcsetUrl(attribs[name]);
    const url = first === null ? null : safeUrl(first, base);
    if (url !== null) return url;
  }
  return null;
}

/** A width or height of 0 or 1 pixel: a tracking pixel. */
function isPixel(size: string | undefined): boolean {
  const trimmed = size?.trim();
  return trimmed === '0' || trimmed === '1' || trimmed === '1px' || trimmed === '0px';
}
