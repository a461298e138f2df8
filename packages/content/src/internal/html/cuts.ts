import { type AnyNode, type Element, hasChildren, isTag, type ParentNode } from 'domhandler';
import { collapse, textContent } from './dom.ts';
import { hintsOf } from './hints.ts';
import { HAS_H1, HAS_INPUT, HAS_PRE, type Measured, type Stats } from './measure.ts';

/** Containers cut from the main content when they are mostly links (lists of links, link bars). */
const LINK_LIST_CONTAINERS = new Set(['div', 'section', 'ul', 'ol', 'dl', 'form', 'fieldset']);
const LINK_LIST_DENSITY = 0.5;
/** Own text (outside links) a link list may have, and links it needs, to be cut. */
const LINK_LIST_MAX_OWN_TEXT = 200;
const LINK_LIST_MIN_LINKS = 2;
/** Containers of at least this many teasers, holding mostly teasers, are lists of teasers. */
const TEASER_LIST_MIN = 3;
const TEASER_LIST_SHARE = 0.6;
/** A box with a text field and no more text than this is a sign-up, search or comment form. */
const FORM_BOX_MAX_CHARS = 300;
/** Containers a widget inside the content may be (tables are kept whole, as data). */
const WIDGET_CONTAINERS = new Set(['div', 'section', 'ul', 'ol', 'form', 'fieldset']);
/** A container with this many commas is text, whatever else it holds. */
const WIDGET_MAX_COMMAS = 10;
/** A container whose text is mostly in lists is a list. */
const LIST_SHARE = 0.9;
/** Paragraphs of this length are compared with the ones before them (captions repeated by galleries). */
const REPEAT_MIN_CHARS = 20;
const REPEAT_MAX_CHARS = 400;
/** Paragraph elements whose repeats are kept: items, cells and code repeat on purpose. */
const REPEATS_KEPT = new Set(['li', 'td', 'dd', 'dt', 'pre']);

/** What is cut from inside the chosen content, and how much text that was. */
export interface Cuts {
  cut: Set<Element>;
  text: number;
}

/**
 * What a reader view cuts from inside the content it chose (`roots`, found around `best`), beside
 * what the measure left out as boilerplate, in this order: lists of links or teasers beside `best`
 * (and those around or inside it unless they are most of the content: a catalogue, an index of
 * articles keep theirs), small boxes with a text field, containers that look like widgets, and
 * paragraphs repeating earlier ones.
 */
export function contentCuts(
  roots: readonly AnyNode[],
  measured: Measured,
  best: ParentNode | null,
  skip: (element: Element) => boolean,
): Cuts {
  const { stats } = measured;
  const total = roots.reduce((sum, root) => sum + (stats.get(root)?.text ?? 0), 0);
  const cuts: Cuts = { cut: new Set(measured.boilerplate), text: 0 };
  const add = (element: Element) => {
    cuts.cut.add(element);
    cuts.text += stats.get(element)!.text;
  };
  const beside: Element[] = [];
  const around: Element[] = [];
  for (const list of outermost(roots, stats, isList))
    (best === null || related(list, best) ? around : beside).push(list);
  const aroundText = sumText(around, stats);
  for (const list of aroundText * 2 > total - sumText(beside, stats) ? beside : [...beside, ...around])
    add(list);
  // Only elements with stats are walked: the measure left out the skipped ones already.
  const isCut = (element: Element) => cuts.cut.has(element);
  const holdsBest = new Set<ParentNode>();
  for (let node = best; node !== null; node = node.parent) holdsBest.add(node);
  const flags = roots.reduce((all, root) => all | (stats.get(root)?.flags ?? 0), 0);
  if ((flags & HAS_INPUT) !== 0)
    for (const box of outermost(roots, stats, (e, s) => !holdsBest.has(e) && isFormBox(s), isCut)) add(box);
  cutWidgets(roots, stats, holdsBest, isCut, add);
  cuts.text += cutRepeats(roots, measured, isCut, (element) => isCut(element) || skip(element), cuts.cut);
  return cuts;
}

const sumText = (elements: readonly Element[], stats: Map<AnyNode, Stats>) =>
  elements.reduce((sum, element) => sum + stats.get(element)!.text, 0);

export const linkDensity = (s: Stats) => (s.text === 0 ? 0 : s.links / s.text);

/** Whether `ancestor` holds `node`. */
export function isInside(node: AnyNode, ancestor: ParentNode): boolean {
  for (let current = node.parent; current !== null; current = current.parent) {
    if (current === ancestor) return true;
  }
  return false;
}

/** Whether one of two nodes holds the other (or they are the same). */
const related = (a: ParentNode, b: ParentNode) => a === b || isInside(a, b) || isInside(b, a);

/** The outermost elements inside `roots` that `test` picks, in document order, not looking into skipped ones. */
function outermost(
  roots: readonly AnyNode[],
  stats: Map<AnyNode, Stats>,
  test: (element: Element, s: Stats) => boolean,
  skip?: (element: Element) => boolean,
): Element[] {
  const found: Element[] = [];
  const stack: AnyNode[] = [];
  for (let i = roots.length - 1; i >= 0; i--) {
    const root = roots[i]!;
    if (hasChildren(root)) for (let j = root.children.length - 1; j >= 0; j--) stack.push(root.children[j]!);
  }
  while (stack.length > 0) {
    const node = stack.pop()!;
    const s = stats.get(node);
    // Nothing is cut from what has no text and no image: it writes nothing.
    if (s === undefined || !isTag(node) || (s.text === 0 && s.images === 0) || skip?.(node)) continue;
    if (test(node, s)) found.push(node);
    else for (let j = node.children.length - 1; j >= 0; j--) stack.push(node.children[j]!);
  }
  return found;
}

/** A list of links (a link bar, a menu) or of teasers (headlines with a line or two each). */
function isList(element: Element, s: Stats): boolean {
  if ((s.flags & (HAS_H1 | HAS_PRE)) !== 0) return false;
  return (
    (LINK_LIST_CONTAINERS.has(element.name) &&
      s.linkCount >= LINK_LIST_MIN_LINKS &&
      linkDensity(s) > LINK_LIST_DENSITY &&
      s.text - s.links < LINK_LIST_MAX_OWN_TEXT) ||
    (s.teasers >= TEASER_LIST_MIN && s.teaserText >= s.text * TEASER_LIST_SHARE)
  );
}

/** A small box with a text field (a newsletter sign-up, a search or comment form). */
const isFormBox = (s: Stats) =>
  (s.flags & HAS_INPUT) !== 0 && (s.flags & HAS_H1) === 0 && s.text <= FORM_BOX_MAX_CHARS;

/** What a container holds once what was cut inside it is taken away. */
type Left = Pick<Stats, 'text' | 'links' | 'commas' | 'images' | 'ps' | 'listText' | 'headingText'>;
const LEFT_FIELDS = ['text', 'links', 'commas', 'images', 'ps', 'listText', 'headingText'] as const;

/**
 * Cuts the containers inside the content that look like widgets, inner ones first (as Readability's
 * conditional cleaning removes them), so that a container is judged without what was cut inside it.
 * The best candidate and what holds it are never cut.
 */
function cutWidgets(
  roots: readonly AnyNode[],
  stats: Map<AnyNode, Stats>,
  holdsBest: ReadonlySet<ParentNode>,
  isCut: (element: Element) => boolean,
  add: (element: Element) => void,
): void {
  // What was cut inside each element so far, for the elements where something was.
  const removed = new Map<Element, Left>();
  const takeAway = (from: ParentNode | null, what: Left) => {
    if (from === null || !isTag(from)) return;
    let into = removed.get(from);
    if (into === undefined) {
      into = { text: 0, links: 0, commas: 0, images: 0, ps: 0, listText: 0, headingText: 0 };
      removed.set(from, into);
    }
    for (const field of LEFT_FIELDS) into[field] += what[field];
  };
  // An iterative walk in post-order: an element is judged after its children (`open` once they are stacked).
  const nodes: AnyNode[] = [];
  const open: boolean[] = [];
  for (let i = roots.length - 1; i >= 0; i--) {
    const root = roots[i]!;
    if (!hasChildren(root)) continue;
    for (let j = root.children.length - 1; j >= 0; j--) {
      nodes.push(root.children[j]!);
      open.push(false);
    }
  }
  while (nodes.length > 0) {
    const node = nodes[nodes.length - 1]!;
    const s = stats.get(node);
    if (s === undefined || !isTag(node) || (s.text === 0 && s.images === 0)) {
      nodes.pop();
      open.pop();
      continue;
    }
    if (!open[open.length - 1]) {
      if (isCut(node)) {
        nodes.pop();
        open.pop();
        // Cut before (a list, a form box): its parent does not hold it any more.
        takeAway(node.parent, s);
        continue;
      }
      open[open.length - 1] = true;
      for (let j = node.children.length - 1; j >= 0; j--) {
        nodes.push(node.children[j]!);
        open.push(false);
      }
      continue;
    }
    nodes.pop();
    open.pop();
    const gone = removed.get(node);
    let left: Left = s;
    if (gone !== undefined) {
      left = { ...s };
      for (const field of LEFT_FIELDS) left[field] -= gone[field];
    }
    if (!holdsBest.has(node) && isWidget(node, left, s.flags)) {
      add(node);
      takeAway(node.parent, s);
    } else if (gone !== undefined) takeAway(node.parent, gone);
  }
}

/**
 * A container that looks like a widget, as Readability's conditional cleaning judges one: named
 * like one (a negative weight), or, with few commas, a strip of images (more than two, and less
 * than a paragraph for two of them), a little linky (over a fifth of its text in links; half when
 * named like content), or a few characters with a link. Lists of images are kept.
 */
function isWidget(element: Element, s: Left, flags: number): boolean {
  if (!WIDGET_CONTAINERS.has(element.name) || (flags & (HAS_H1 | HAS_PRE)) !== 0) return false;
  const weight = hintsOf(element).weight;
  if (weight < 0) return true;
  if (s.commas >= WIDGET_MAX_COMMAS) return false;
  const isList = element.name === 'ul' || element.name === 'ol' || s.listText > s.text * LIST_SHARE;
  const density = s.text === 0 ? 0 : s.links / s.text;
  const suspicious =
    (s.images > 2 && s.ps / s.images < 0.5 && !isInFigure(element)) ||
    (!isList &&
      s.headingText < s.text * 0.9 &&
      s.text < 25 &&
      (s.images === 0 || s.images > 2) &&
      density > 0 &&
      !isInFigure(element)) ||
    (!isList && weight < 25 && density > 0.2) ||
    (weight >= 25 && density > 0.5);
  return suspicious && !(isList && s.images > 0 && s.text === 0);
}

function isInFigure(element: Element): boolean {
  for (let node = element.parent; node !== null; node = node.parent)
    if (isTag(node) && node.name === 'figure') return true;
  return false;
}

/**
 * Cuts paragraphs whose text repeats an earlier one in the content (galleries repeat each caption
 * in their thumbnails and full-screen views), with the figure that holds nothing else; the text cut.
 */
function cutRepeats(
  roots: readonly AnyNode[],
  measured: Measured,
  isCut: (element: Element) => boolean,
  skip: (element: Element) => boolean,
  cut: Set<Element>,
): number {
  const candidates = new Set<Element>();
  for (const paragraph of measured.paragraphs) {
    const element = paragraph.element;
    if (element !== null && paragraph.text >= REPEAT_MIN_CHARS && paragraph.text <= REPEAT_MAX_CHARS)
      candidates.add(element);
  }
  if (candidates.size < 2) return 0;
  const seen = new Set<string>();
  let removed = 0;
  for (const element of outermost(roots, measured.stats, (e) => candidates.has(e), isCut)) {
    if (REPEATS_KEPT.has(element.name)) continue;
    const text = collapse(textContent(element, skip));
    if (!seen.has(text)) {
      seen.add(text);
      continue;
    }
    const own = measured.stats.get(element)!.text;
    let unit: Element = element;
    for (let up = unit.parent; up !== null && isTag(up) && !roots.includes(up); up = up.parent) {
      if (measured.stats.get(up)?.text !== own) break;
      unit = up;
    }
    cut.add(unit);
    removed += own;
  }
  return removed;
}
