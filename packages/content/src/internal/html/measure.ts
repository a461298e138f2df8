import { type AnyNode, type Element, isTag, isText, type ParentNode } from 'domhandler';
import { BLOCK, collapse, HEADING_LEVEL, isAdmonition, isSpace } from './dom.ts';
import { hintsOf } from './hints.ts';
import { isChromeLine, MAX_LINE_CHARS } from './lines.ts';

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
  /** Whether the element is a teaser: a short item whose first words are a heading that is mostly a link. */
  teaser: boolean;
  /** Teasers within (a teaser holds none), and their text. */
  teasers: number;
  teaserText: number;
  /** `<p>` and `<img>` elements within. */
  ps: number;
  images: number;
  /** Text within lists and within headings. */
  listText: number;
  headingText: number;
}

export const HAS_H1 = 1;
export const HAS_PRE = 2;
/** A text field: an input, a text area or a select. */
export const HAS_INPUT = 4;

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

/**
 * A paragraph: an element with text and no block child, or a run of text and inline elements
 * that a parent holding blocks has between them (or between pairs of `<br>`), as Readability
 * wraps such runs in paragraphs.
 */
export interface Paragraph {
  /** The element its score goes to first. */
  parent: ParentNode;
  /** The paragraph's element; null for a run of text. */
  element: Element | null;
  text: number;
  links: number;
  commas: number;
}

export interface Measured {
  stats: Map<AnyNode, Stats>;
  /** The paragraphs, in the order they end. */
  paragraphs: Paragraph[];
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
const TEXT_FIELDS = new Set(['input', 'select', 'textarea']);
const SECTIONING = new Set(['article', 'main', 'section']);
/** Elements whose class or id is judged (phrasing elements are not, but for a link or an ad slot). */
const NAMED = new Set([...BLOCK, 'a', 'ins']);
const PARAGRAPHS = new Set(['p', 'pre', 'td', 'li', 'dd', 'dt', 'blockquote', 'div', 'section', 'article']);
/** Elements that can be a teaser (an item of a list of links to other pages). */
const TEASER_ELEMENTS = new Set(['li', 'article', 'div', 'section']);
/** Longer items are no teasers (an article under a linked headline is). */
const TEASER_MAX_CHARS = 500;
/** Elements whose whole text is judged as a line (a byline, a dateline, a control's label). */
const LINE_ELEMENTS = new Set([
  'a',
  'address',
  'b',
  'center',
  'div',
  'em',
  'font',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'i',
  'label',
  'p',
  'section',
  'small',
  'span',
  'strong',
  'time',
]);
const COMMA = new Set([0x2c, 0x60c, 0xfe50, 0xfe10, 0xfe11, 0x2e41, 0x2e34, 0x2e32, 0xff0c, 0x3001]);
/** Shorter blocks are no paragraphs (captions, labels, prices). */
const MIN_PARAGRAPH_CHARS = 25;
/** An element's first words are its first text this long (a time or a kicker before a headline is not). */
const LEAD_MIN_CHARS = 12;
/** Raw text kept of an element to judge it as a line (white space counted as it comes). */
const MAX_LINE_RAW = MAX_LINE_CHARS * 4;

const IN_LINK = 1;
const IN_PRE = 2;
const IN_SECTIONING = 4;
const IN_QUOTE = 8;
const IN_HEADING = 16;
const IN_TABLE = 32;

/** What an element's first words are: not yet seen, in a heading (not yet judged), a linked heading, or anything else. */
const LEAD_UNSEEN = 0;
const LEAD_HEADING = 1;
const LEAD_LINKED_HEADING = 2;
const LEAD_OTHER = 3;

interface Run {
  text: number;
  links: number;
  commas: number;
}

interface Frame {
  node: ParentNode;
  stats: Stats;
  context: number;
  next: number;
  /** The inline content since the last block child or pair of `<br>`s (null while there is none). */
  run: Run | null;
  /** The runs closed before it that were long enough to be paragraphs. */
  runs: Run[] | null;
  /** `<br>`s since the last text. */
  breaks: number;
  /** The element's text as it comes, while it is short enough to be judged as a line. */
  line: string | null;
  lead: number;
}

/**
 * Measures the trees under `roots` in one iterative walk: each kept element's Stats, the
 * paragraphs, and what `options` leaves out as boilerplate.
 */
export function measure(roots: readonly ParentNode[], options: MeasureOptions): Measured {
  const measured: Measured = { stats: new Map(), paragraphs: [], boilerplate: new Set() };
  let order = 0;
  for (const root of roots) {
    const frames: Frame[] = [frameOf(root, 0, order++)];
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const children = frame.node.children;
      if (frame.next === children.length) {
        frames.pop();
        finish(frame, frames[frames.length - 1], measured, options);
        continue;
      }
      const child = children[frame.next++]!;
      if (isText(child)) {
        addText(frame, child.data);
        continue;
      }
      if (!isTag(child) || options.skip(child)) continue;
      if (child.name === 'br') {
        if (++frame.breaks === 2) closeRun(frame);
        if (frame.line !== null) frame.line += ' ';
        continue;
      }
      const context = contextOf(child, frame.context);
      if (isBoilerplate(child, context, options)) {
        measured.boilerplate.add(child);
        if (TEXT_FIELDS.has(child.name)) frame.stats.flags |= HAS_INPUT;
        continue;
      }
      frames.push(frameOf(child, context, order++));
    }
  }
  return measured;
}

function frameOf(node: ParentNode, context: number, order: number): Frame {
  return {
    node,
    stats: {
      text: 0,
      links: 0,
      linkCount: 0,
      commas: 0,
      blockChild: false,
      flags: 0,
      order,
      teaser: false,
      teasers: 0,
      teaserText: 0,
      ps: 0,
      images: 0,
      listText: 0,
      headingText: 0,
    },
    context,
    next: 0,
    run: null,
    runs: null,
    breaks: 0,
    line: '',
    lead: LEAD_UNSEEN,
  };
}

function contextOf(element: Element, parent: number): number {
  let context = parent;
  const { name } = element;
  if (name === 'a') context |= IN_LINK;
  else if (name === 'pre' || name === 'code') context |= IN_PRE;
  else if (SECTIONING.has(name)) context |= IN_SECTIONING;
  else if (name === 'blockquote') context |= IN_QUOTE;
  else if (name === 'table') context |= IN_TABLE;
  else if (HEADING_LEVEL.has(name)) context |= IN_HEADING;
  return context;
}

/** Ends the frame's current run of inline content, keeping it when it is long enough to be a paragraph. */
function closeRun(frame: Frame): void {
  const run = frame.run;
  if (run === null) return;
  frame.run = null;
  if (run.text < MIN_PARAGRAPH_CHARS) return;
  if (frame.runs === null) frame.runs = [run];
  else frame.runs.push(run);
}

function runOf(frame: Frame): Run {
  if (frame.run === null) frame.run = { text: 0, links: 0, commas: 0 };
  return frame.run;
}

function finish(frame: Frame, parent: Frame | undefined, measured: Measured, options: MeasureOptions): void {
  const { node, stats } = frame;
  closeRun(frame);
  if (!isTag(node)) {
    measured.stats.set(node, stats);
    addRuns(frame, measured);
    return;
  }
  const { name } = node;
  if (parent !== undefined && stats.text > 0 && frame.line !== null && isLine(node, frame.context, options)) {
    const text = collapse(frame.line);
    // A byline, a dateline or a control's label: nothing of it counts, and it is left out; its
    // text still counts for the line around it ("Jane Doe" before a cut `<time>` is a byline).
    if (text.length <= MAX_LINE_CHARS && isChromeLine(text, BLOCK.has(name))) {
      measured.boilerplate.add(node);
      if (parent.line !== null) parent.line += ` ${frame.line} `;
      return;
    }
  }
  measured.stats.set(node, stats);
  if (name === 'a') {
    stats.linkCount++;
    stats.links = stats.text;
  } else if (name === 'h1') stats.flags |= HAS_H1;
  else if (name === 'pre') stats.flags |= HAS_PRE;
  else if (name === 'p') stats.ps++;
  else if (name === 'img') stats.images++;
  else if (name === 'ul' || name === 'ol') stats.listText = stats.text;
  if (HEADING_LEVEL.has(name)) stats.headingText = stats.text;
  // A heading that is mostly a link (a kicker may stand before the link) is a linked headline.
  if (frame.lead === LEAD_HEADING && HEADING_LEVEL.has(name))
    frame.lead = stats.links * 2 >= stats.text ? LEAD_LINKED_HEADING : LEAD_OTHER;
  if (stats.blockChild || (frame.runs !== null && frame.runs.length > 1 && PARAGRAPHS.has(name)))
    addRuns(frame, measured);
  else if (PARAGRAPHS.has(name) && stats.text >= MIN_PARAGRAPH_CHARS)
    measured.paragraphs.push({
      parent: node.parent ?? node,
      element: node,
      text: stats.text,
      links: stats.links,
      commas: stats.commas,
    });
  if (
    frame.lead === LEAD_LINKED_HEADING &&
    stats.teasers === 0 &&
    TEASER_ELEMENTS.has(name) &&
    stats.text <= TEASER_MAX_CHARS
  ) {
    stats.teaser = true;
    stats.teasers = 1;
    stats.teaserText = stats.text;
  }
  if (parent === undefined) return;
  const into = parent.stats;
  into.text += stats.text;
  into.links += stats.links;
  into.linkCount += stats.linkCount;
  into.commas += stats.commas;
  into.flags |= stats.flags;
  into.teasers += stats.teasers;
  into.teaserText += stats.teaserText;
  into.ps += stats.ps;
  into.images += stats.images;
  into.listText += stats.listText;
  into.headingText += stats.headingText;
  if (parent.lead === LEAD_UNSEEN) parent.lead = frame.lead;
  if (parent.line !== null && stats.text > 0) {
    const line = frame.line;
    parent.line =
      line === null || parent.line.length + line.length > MAX_LINE_RAW
        ? null
        : BLOCK.has(name)
          ? `${parent.line} ${line} `
          : parent.line + line;
  }
  if (BLOCK.has(name) || stats.blockChild) {
    into.blockChild ||= BLOCK.has(name);
    closeRun(parent);
  } else if (stats.text > 0) {
    const run = runOf(parent);
    run.text += stats.text;
    run.links += stats.links;
    run.commas += stats.commas;
    parent.breaks = 0;
  }
}

/** The frame's runs of inline content as paragraphs of its element. */
function addRuns(frame: Frame, measured: Measured): void {
  for (const run of frame.runs ?? []) measured.paragraphs.push({ parent: frame.node, element: null, ...run });
}

/** Whether an element's whole text is judged as a line: not in a table, code, or what holds the h1 or `<main>`. */
function isLine(element: Element, context: number, options: MeasureOptions): boolean {
  return (
    LINE_ELEMENTS.has(element.name) &&
    (context & (IN_TABLE | IN_PRE)) === 0 &&
    !options.holdsH1.has(element) &&
    !options.holdsMain.has(element)
  );
}

function addText(frame: Frame, data: string): void {
  let length = 0;
  let visible = 0;
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
    visible++;
    if (COMMA.has(c)) commas++;
  }
  const { stats } = frame;
  const inLink = (frame.context & IN_LINK) !== 0;
  stats.text += length;
  stats.commas += commas;
  if (inLink) stats.links += length;
  // White space alone starts no run (it lies between most tags).
  if (visible > 0 || frame.run !== null) {
    const run = runOf(frame);
    run.text += length;
    run.commas += commas;
    if (inLink) run.links += length;
  }
  if (visible > 0) frame.breaks = 0;
  if (frame.lead === LEAD_UNSEEN && visible >= LEAD_MIN_CHARS)
    frame.lead = (frame.context & IN_HEADING) !== 0 ? LEAD_HEADING : LEAD_OTHER;
  if (frame.line !== null)
    frame.line = frame.line.length + data.length > MAX_LINE_RAW ? null : frame.line + data;
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
  // A heading is left out for what it is named only when that is a thing (`comments-title`), not
  // for a layout word (`header-anchor`).
  if (HEADING_LEVEL.has(name)) return hints.boilerplate === 'strong' && hints.thing;
  if (hints.boilerplate === 'strong') return true;
  return hints.boilerplate === 'weak' && name !== 'a';
}
