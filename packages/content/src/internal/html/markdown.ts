import { type AnyNode, type Element, isTag, isText } from 'domhandler';
import { BLOCK, HEADING_LEVEL, isAdmonition } from './dom.ts';
import { Output } from './limits.ts';
import type { ContentView } from './main-content.ts';
import { codeBlock } from './markdown-code.ts';
import { InlineText, type InlineWriter, inlineInto } from './markdown-inline.ts';
import { HOLDS_BLOCK, subtreeKinds } from './markdown-kinds.ts';
import { tableMarkdown } from './markdown-table.ts';
import { escapeLineStart } from './markdown-text.ts';

/** Lists and quotes nested deeper are written flat (their markers would outgrow their content). */
const MAX_NESTING = 16;
/** Elements written inline even when they are not phrasing (their content is one line of text). */
const INLINE_WRAPPERS = new Set([
  'a',
  'b',
  'code',
  'del',
  'em',
  'i',
  'img',
  'kbd',
  'math',
  'q',
  's',
  'samp',
  'strike',
  'strong',
  'tt',
]);

interface Container {
  /** The prefix of the container's first line (a list marker), then of the others. */
  first: string;
  rest: string;
  /** Whether its first line is still to be written. */
  pending: boolean;
  /** The line breaks owed before it: what its content owes before its first line does not count. */
  owed: number;
}

/** Markdown of a content view (CommonMark with GFM tables), at most about `maxChars` UTF-16 code units. */
export function writeMarkdown(view: ContentView, base: string | undefined, maxChars: number): string {
  const writer = new MarkdownWriter(view.skip, base, maxChars);
  for (const root of view.roots) writer.node(root);
  return writer.finish();
}

class MarkdownWriter {
  private readonly out: Output;
  private readonly inline: InlineWriter;
  private readonly skip: (element: Element) => boolean;
  private readonly containers: Container[] = [];
  private paragraph = new InlineText();
  /** Line breaks owed before the next line: 1 ends the line, 2 leaves a blank line. */
  private owed = 0;
  private started = false;

  constructor(skip: (element: Element) => boolean, base: string | undefined, maxChars: number) {
    this.out = new Output(maxChars);
    this.skip = skip;
    this.inline = { skip, base, kinds: subtreeKinds(skip) };
  }

  finish(): string {
    this.flush();
    return this.out.toString();
  }

  node(node: AnyNode): void {
    if (this.out.full) return;
    if (isText(node)) {
      this.paragraph.text(node.data);
      return;
    }
    if (!isTag(node)) {
      if ('children' in node) this.children(node.children);
      return;
    }
    if (this.skip(node)) return;
    this.element(node);
  }

  private children(nodes: readonly AnyNode[]): void {
    for (const child of nodes) this.node(child);
  }

  private element(element: Element): void {
    const { name } = element;
    const level = HEADING_LEVEL.get(name);
    if (level !== undefined) this.heading(element, level);
    else if (name === 'br') this.paragraph.lineBreak();
    else if (name === 'hr') this.lines([this.containers.some((c) => c.pending) ? '***' : '---']);
    else if (name === 'pre') this.lines(codeBlock(element, this.skip));
    else if (name === 'ul' || name === 'ol' || name === 'menu' || name === 'dir')
      this.list(element, name === 'ol');
    else if (name === 'li') this.item(element, '- ');
    else if (name === 'blockquote') this.contained(element, '> ');
    else if (name === 'table') this.table(element);
    else if (INLINE_WRAPPERS.has(name) && (this.inline.kinds(element) & HOLDS_BLOCK) === 0)
      inlineInto(this.paragraph, element, this.inline, 0);
    else if (!BLOCK.has(name)) this.children(element.children);
    else if (isAdmonition(element)) this.contained(element, '> ');
    else this.block(() => this.children(element.children));
  }

  /** Writes what `write` writes as blocks of their own, apart from what is around them. */
  private block(write: () => void): void {
    this.flush();
    this.owe(2);
    write();
    this.flush();
    this.owe(2);
  }

  private heading(element: Element, level: number): void {
    const text = new InlineText();
    inlineInto(text, element, this.inline, 0);
    const line = text.value().replace(/\n/g, ' ').trim();
    if (line !== '') this.lines([`${'#'.repeat(level)} ${escapeClosingSequence(line)}`]);
  }

  private list(list: Element, ordered: boolean): void {
    const inItem = this.containers.length > 0;
    const start = ordered ? listStart(list, this.skip) : 1;
    this.flush();
    // A list right under an item's text stays tight; an ordered one not from 1 could not interrupt it.
    if (inItem && start === 1) this.owed = Math.min(this.owed, 1);
    else this.owe(2);
    const step = ordered && list.attribs.reversed !== undefined ? -1 : 1;
    let number = start;
    for (const child of list.children) {
      if (this.out.full) return;
      if (isTag(child) && child.name === 'li') {
        if (this.skip(child)) continue;
        const value = ordered ? integerAttribute(child, 'value') : null;
        if (value !== null) number = value;
        this.item(child, ordered ? `${Math.max(0, number)}. ` : '- ');
        number += step;
      } else this.node(child);
    }
    this.flush();
    this.owe(2);
  }

  private item(item: Element, marker: string): void {
    this.flush();
    this.owe(1);
    const wrote = this.within(marker, ' '.repeat(marker.length), () => this.children(item.children));
    // Items follow each other line after line (a tight list), whatever their content asked for.
    if (wrote) this.owed = 1;
  }

  private contained(element: Element, prefix: string): void {
    this.flush();
    this.owe(2);
    this.within(prefix, prefix, () => this.children(element.children));
    this.owe(2);
  }

  /** Writes `write`'s lines inside a container; false when they were none. */
  private within(first: string, rest: string, write: () => void): boolean {
    if (this.containers.length >= MAX_NESTING) {
      write();
      this.flush();
      return true;
    }
    const container: Container = { first, rest, pending: true, owed: this.owed };
    this.containers.push(container);
    write();
    this.flush();
    this.containers.pop();
    return !container.pending;
  }

  private table(table: Element): void {
    const rendered = tableMarkdown(table, this.inline);
    if (rendered === null) {
      this.block(() => this.children(table.children));
      return;
    }
    if (rendered.caption !== '') this.lines([escapeLineStart(rendered.caption)]);
    if (rendered.rows.length > 0) this.lines(rendered.rows);
  }

  /** Writes the paragraph being collected, if it has text. */
  private flush(): void {
    const paragraph = this.paragraph;
    if (paragraph.isEmpty()) return;
    this.paragraph = new InlineText();
    const lines: string[] = [];
    let blank = false;
    for (const raw of paragraph.value().split('\n')) {
      const line = raw.trim();
      if (line === '') {
        blank = lines.length > 0;
        continue;
      }
      if (blank) {
        this.lines(lines.splice(0));
        blank = false;
      } else if (lines.length > 0) lines[lines.length - 1] += '\\';
      lines.push(escapeLineStart(line));
    }
    if (lines.length > 0) this.lines(lines);
  }

  /** Writes lines as one block, after what is owed before it, each with its containers' prefixes. */
  private lines(lines: readonly string[]): void {
    if (lines.length === 0) return;
    this.flush();
    const out = this.out;
    if (this.started) {
      const opening = this.containers.find((container) => container.pending);
      out.write('\n');
      if ((opening?.owed ?? this.owed) >= 2) out.write(`${this.blankPrefix()}\n`);
    }
    this.started = true;
    this.owed = 0;
    for (let i = 0; i < lines.length; i++) {
      if (i > 0) out.write('\n');
      const prefix = this.prefix();
      const line = lines[i]!;
      out.write(line === '' ? prefix.trimEnd() : prefix + line);
    }
    this.owe(2);
  }

  private owe(breaks: number): void {
    if (breaks > this.owed) this.owed = breaks;
  }

  private prefix(): string {
    let prefix = '';
    for (const container of this.containers) {
      prefix += container.pending ? container.first : container.rest;
      container.pending = false;
    }
    return prefix;
  }

  /** The prefix of a blank line between blocks: the containers already started (quotes keep their `>`). */
  private blankPrefix(): string {
    let prefix = '';
    for (const container of this.containers) {
      if (container.pending) break;
      prefix += container.rest;
    }
    return prefix.trimEnd();
  }
}

/** A heading's text whose trailing `#`s would be taken for a closing sequence (`C #`), escaped. */
function escapeClosingSequence(line: string): string {
  let start = line.length;
  while (start > 0 && line[start - 1] === '#') start--;
  if (start === line.length || (start > 0 && line[start - 1] !== ' ')) return line;
  return `${line.slice(0, start)}\\${line.slice(start)}`;
}

function listStart(list: Element, skip: (element: Element) => boolean): number {
  const start = integerAttribute(list, 'start');
  if (start !== null) return start;
  if (list.attribs.reversed === undefined) return 1;
  return list.children.filter((child) => isTag(child) && child.name === 'li' && !skip(child)).length;
}

/** An integer attribute (as HTML parses them: leading digits), within what a list marker may hold. */
function integerAttribute(element: Element, name: string): number | null {
  const match = /^\s*(-?\d{1,9})/.exec(element.attribs[name] ?? '');
  return match === null ? null : Math.max(0, Number(match[1]));
}
