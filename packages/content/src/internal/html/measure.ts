import { type AnyNode, type Element, isTag, isText, type ParentNode } from 'domhandler';
import { BLOCK, isAdmonition, isSpace } from './dom.ts';
import { hintsOf } from './hints.ts';

/** What a subtree holds, counting only what is shown and kept. */
export interface Stats {
  /** Characters of text, white space runs counted once. */
  text: number;
  /** Characters of text inside links. */
  links: number;
  linkCount: number;
  commas: number;
  /** Whether a child element is a block (then the element is no paragraph of its own). */
  blockChild: boolean;
  /** HAS_* bits. */
  flags: number;
  /** Position in document order. */
  order: number;
}

export const HAS_H1 = 1;
export const HAS_PRE = 2;

/** What a measure leaves out as boilerplate: what tags and roles say, or also what class names say. */
type BoilerplateRule = 'tags' | 'names';

export interface MeasureOptions {
  /** Elements left out whatever the rule (invisible, or removed by `exclude_tags`). */
  skip: (element: Element) => boolean;
  boilerplate: BoilerplateRule;
  /** Elements that are or hold an h1: never boilerplate by their name or a `<header>` tag. */
  holdsH1: ReadonlySet<Element>;
  /** Elements that are or hold `<main>` or `[role=main]`: never boilerplate. */
  holdsMain: ReadonlySet<Element>;
}

export interface Measured {
  stats: Map<AnyNode, Stats>;
  /** Paragraph-like elements (no block child, some text), in the order they end. */
  blocks: Element[];
  /** What was left out as boilerplate (the roots never are). */
  boilerplate: Set<Element>;
}

/** Landmark roles of what is not the page's content. */
const OFF_CONTENT_ROLES = new Set([
  'alertdialog',
  'complementary',
  'contentinfo',
  'dialog',
  'menu',
  'menubar',
  'navigation',
  'search',
  'toolbar',
]);
const FORM_CONTROLS = new Set(['button', 'input', 'select', 'textarea', 'option', 'optgroup']);
const SECTIONING = new Set(['article', 'main', 'section']);
/** Elements whose class or id is judged (phrasing elements are not, but for a link or an ad slot). */
const NAMED = new Set([...BLOCK, 'a', 'ins']);
const PARAGRAPHS = new Set(['p', 'pre', 'td', 'li', 'dd', 'dt', 'blockquote', 'div', 'section', 'article']);
const COMMA = new Set([0x2c, 0x60c, 0xfe50, 0xfe10, 0xfe11, 0x2e41, 0x2e34, 0x2e32, 0xff0c, 0x3001]);
/** Shorter blocks are no paragraphs (captions, labels, prices). */
const MIN_PARAGRAPH_CHARS = 25;

const IN_LINK = 1;
const IN_PRE = 2;
const IN_SECTIONING = 4;
const IN_QUOTE = 8;

interface Frame {
  node: ParentNode;
  stats: Stats;
  context: number;
  next: number;
}

/**
 * Measures the trees under `roots` in one iterative walk: each kept element's Stats, the
 * paragraph-like elements, and what `options` leaves out as boilerplate.
 */
export function measure(roots: readonly ParentNode[], options: MeasureOptions): Measured {
  const measured: Measured = { stats: new Map(), blocks: [], boilerplate: new Set() };
  let order = 0;
  for (const root of roots) {
    const frames: Frame[] = [{ node: root, stats: emptyStats(order++), context: 0, next: 0 }];
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const children = frame.node.children;
      if (frame.next === children.length) {
        frames.pop();
        finish(frame, frames[frames.length - 1], measured);
        continue;
      }
      const child = children[frame.next++]!;
      if (isText(child)) {
        addText(frame.stats, child.data, (frame.context & IN_LINK) !== 0);
        continue;
      }
      if (!isTag(child) || options.skip(child)) continue;
      const context = contextOf(child, frame.context);
      if (isBoilerplate(child, context, options)) {
        measured.boilerplate.add(child);
        continue;
      }
      frames.push({ node: child, stats: emptyStats(order++), context, next: 0 });
    }
  }
  return measured;
}

function emptyStats(order: number): Stats {
  return { text: 0, links: 0, linkCount: 0, commas: 0, blockChild: false, flags: 0, order };
}

function contextOf(element: Element, parent: number): number {
  let context = parent;
  const { name } = element;
  if (name === 'a') context |= IN_LINK;
  else if (name === 'pre' || name === 'code') context |= IN_PRE;
  else if (SECTIONING.has(name)) context |= IN_SECTIONING;
  else if (name === 'blockquote') context |= IN_QUOTE;
  return context;
}

function finish(frame: Frame, parent: Frame | undefined, measured: Measured): void {
  const { node, stats } = frame;
  measured.stats.set(node, stats);
  if (!isTag(node)) return;
  const { name } = node;
  if (name === 'a') {
    stats.linkCount++;
    stats.links = stats.text;
  } else if (name === 'h1') stats.flags |= HAS_H1;
  else if (name === 'pre') stats.flags |= HAS_PRE;
  if (PARAGRAPHS.has(name) && !stats.blockChild && stats.text >= MIN_PARAGRAPH_CHARS)
    measured.blocks.push(node);
  if (parent === undefined) return;
  const into = parent.stats;
  into.text += stats.text;
  into.links += stats.links;
  into.linkCount += stats.linkCount;
  into.commas += stats.commas;
  into.flags |= stats.flags;
  if (BLOCK.has(name)) into.blockChild = true;
}

function addText(stats: Stats, data: string, inLink: boolean): void {
  let length = 0;
  let commas = 0;
  let space = false;
  for (let i = 0; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (isSpace(c)) {
      if (!space) length++;
      space = true;
      continue;
    }
    space = false;
    length++;
    if (COMMA.has(c)) commas++;
  }
  stats.text += length;
  stats.commas += commas;
  if (inLink) stats.links += length;
}

function isBoilerplate(element: Element, context: number, options: MeasureOptions): boolean {
  if (options.holdsMain.has(element)) return false;
  const { name } = element;
  switch (name) {
    case 'aside':
      if (isAdmonition(element)) return false;
      return true;
    case 'footer':
      // A quote's footer is its attribution.
      return (context & IN_QUOTE) === 0;
    case 'nav':
    case 'dialog':
      return true;
    case 'header':
      if ((context & IN_SECTIONING) === 0 && !options.holdsH1.has(element)) return true;
      break;
  }
  if (FORM_CONTROLS.has(name)) return true;
  const role = element.attribs.role?.trim().toLowerCase();
  if (role !== undefined && role !== '') {
    if (OFF_CONTENT_ROLES.has(role)) return true;
    if (role === 'banner' && !options.holdsH1.has(element)) return true;
  }
  if (options.boilerplate !== 'names' || (context & IN_PRE) !== 0 || options.holdsH1.has(element))
    return false;
  if (!NAMED.has(name) && !name.includes('-')) return false;
  const hints = hintsOf(element);
  if (hints.boilerplate === 'strong') return true;
  return hints.boilerplate === 'weak' && hints.weight < 0 && name !== 'a';
}
