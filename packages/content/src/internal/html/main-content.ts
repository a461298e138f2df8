import { type AnyNode, type Element, hasChildren, isTag, type ParentNode } from 'domhandler';
import { collapse, textContent } from './dom.ts';
import { hintsOf } from './hints.ts';
import {
  HAS_H1,
  HAS_INPUT,
  HAS_PRE,
  type Measured,
  type MeasureOptions,
  measure,
  type Stats,
} from './measure.ts';

/** What a document is written from: these trees, in order, without the elements `skip` names. */
export interface ContentView {
  roots: readonly AnyNode[];
  skip: (element: Element) => boolean;
}

/** What the main-content step needs of the page beside the trees. */
interface MainContentInput {
  /** The element holding the page's content (`<body>`, or the document when it has none). */
  root: ParentNode;
  /** Elements left out whatever happens (invisible ones, those `exclude_tags` removes). */
  skip: (element: Element) => boolean;
  h1s: readonly Element[];
  mains: readonly Element[];
}

/** A `<main>` holding this share of the page's kept text is the main content. */
const MAIN_SHARE = 0.6;
/** A result with less text than this is tried again without judging class names. */
const RETRY_BELOW_CHARS = 200;
/** Ancestors a paragraph's score goes to. */
const SCORE_LEVELS = 5;
/** Top candidates looked at for a common ancestor, and how many of them it must hold. */
const TOP_CANDIDATES = 5;
const MIN_TOP_CANDIDATES = 3;
/** The main content grows to its parent while what the parent adds is at most this share of it… */
const GROW_MAX_EXTRA = 1;
/** …and no more than this share of what it adds is link text. */
const GROW_MAX_LINK_DENSITY = 0.2;

const TAG_BONUS = new Map<string, number>([
  ['div', 5],
  ['pre', 3],
  ['td', 3],
  ['blockquote', 3],
  ['address', -3],
  ['ol', -3],
  ['ul', -3],
  ['dl', -3],
  ['dd', -3],
  ['dt', -3],
  ['li', -3],
  ['form', -3],
  ['h1', -5],
  ['h2', -5],
  ['h3', -5],
  ['h4', -5],
  ['h5', -5],
  ['h6', -5],
  ['th', -5],
]);

/** Containers cut from the main content when they are mostly links (lists of links, link bars). */
const LINK_LIST_CONTAINERS = new Set(['div', 'section', 'ul', 'ol', 'dl', 'form', 'fieldset']);
const LINK_LIST_DENSITY = 0.5;
/** Own text (outside links) a link list may have, and links it needs, to be cut. */
const LINK_LIST_MAX_OWN_TEXT = 200;
const LINK_LIST_MIN_LINKS = 2;
/** A paragraph inside a teaser (a short item under a linked headline) weighs this share of its score. */
const TEASER_WEIGHT = 0.25;
/** Levels above a paragraph looked at for the teaser it is in. */
const TEASER_LEVELS = 3;
/** Containers of at least this many teasers, holding mostly teasers, are lists of teasers. */
const TEASER_LIST_MIN = 3;
const TEASER_LIST_SHARE = 0.6;
/** A box with a text field and no more text than this is a sign-up, search or comment form. */
const FORM_BOX_MAX_CHARS = 300;
/** Paragraphs of this length are compared with the ones before them (captions repeated by galleries). */
const REPEAT_MIN_CHARS = 20;
const REPEAT_MAX_CHARS = 400;
/** Paragraph elements whose repeats are kept: items, cells and code repeat on purpose. */
const REPEATS_KEPT = new Set(['li', 'td', 'dd', 'dt', 'pre']);

/**
 * The page's main content, what a reader view keeps: paragraphs are scored, and their scores go
 * to their ancestors (commas, length, tag, class and id names, less their share of link text);
 * the best ancestor wins, moves up to an `<article>` or `<main>` that it is most of, grows to
 * parents that add little and few links, and takes the siblings that score well. Navigation,
 * headers, footers, asides, dialogs, form controls and elements named like boilerplate (cookie,
 * share, related, comments…) are left out first, link lists within the result after. The page's
 * h1 is kept when the result has none. When that leaves too little, class names are not judged;
 * when it leaves nothing, the body without boilerplate is the result, else the whole body.
 */
export function mainContent(input: MainContentInput): ContentView {
  const holdsH1 = ancestorsOf(input.h1s, input.root);
  const holdsMain = ancestorsOf(input.mains, input.root);
  const options: MeasureOptions = { skip: input.skip, boilerplate: 'names', holdsH1, holdsMain };
  const first = select(input, measure([input.root], options));
  if (first.text >= RETRY_BELOW_CHARS) return first.view;
  const second = select(input, measure([input.root], { ...options, boilerplate: 'tags' }));
  const best = second.text > first.text ? second : first;
  if (best.text > 0) return best.view;
  return { roots: [input.root], skip: input.skip };
}

/**
 * The elements `include_tags` kept, with what a reader view leaves out removed from inside them
 * (no scoring: the selectors already say where the content is).
 */
export function boilerplateRemoved(roots: readonly Element[], input: MainContentInput): ContentView {
  const options: MeasureOptions = {
    skip: input.skip,
    boilerplate: 'names',
    holdsH1: ancestorsOf(input.h1s, input.root),
    holdsMain: ancestorsOf(input.mains, input.root),
  };
  const measured = measure(roots, options);
  const text = roots.reduce((sum, root) => sum + (measured.stats.get(root)?.text ?? 0), 0);
  if (text === 0) return { roots, skip: input.skip };
  return { roots, skip: skipper(input.skip, measured.boilerplate) };
}

interface Selection {
  view: ContentView;
  text: number;
}

function select(input: MainContentInput, measured: Measured): Selection {
  const { stats } = measured;
  const statsOf = (node: AnyNode) => stats.get(node)!;
  const scores = scoreCandidates(measured, input.root);
  const best = bestCandidate(scores, input.root);
  // No paragraph anywhere: the whole of what is left.
  let roots: AnyNode[] = [input.root];
  if (best !== null) {
    const main = mainHoldingMost(input.mains, input.root, stats);
    const top = main ?? grow(upToSemantic(best, input.root, statsOf), input.root, statsOf);
    roots = withSiblings(top, scores, input.root, measured);
    const h1 = missingH1(roots, input.h1s, measured);
    if (h1 !== null) roots.unshift(h1);
  }
  const total = roots.reduce((sum, root) => sum + statsOf(root).text, 0);
  const cut = new Set(measured.boilerplate);
  let text = total;
  // Lists of links or teasers beside the best candidate are cut; those around or inside it are the
  // content when they are most of it (a catalogue, an index of articles).
  const beside: Element[] = [];
  const around: Element[] = [];
  for (const list of outermost(roots, stats, isList))
    (best === null || related(list, best) ? around : beside).push(list);
  const aroundText = sumText(around, stats);
  const lists = aroundText * 2 > total - sumText(beside, stats) ? beside : [...beside, ...around];
  for (const list of lists) {
    cut.add(list);
    text -= statsOf(list).text;
  }
  for (const box of outermost(roots, stats, (e, s) => isFormBox(e, s, best), skipper(input.skip, cut))) {
    cut.add(box);
    text -= statsOf(box).text;
  }
  const inside = (e: Element, s: Stats) => (best === null || !related(e, best) ? isWidget(e, s) : false);
  for (const widget of outermost(roots, stats, inside, skipper(input.skip, cut))) {
    cut.add(widget);
    text -= statsOf(widget).text;
  }
  text -= cutRepeats(roots, measured, skipper(input.skip, cut), cut);
  return { view: { roots, skip: skipper(input.skip, cut) }, text };
}

const sumText = (elements: readonly Element[], stats: Map<AnyNode, Stats>) =>
  elements.reduce((sum, element) => sum + stats.get(element)!.text, 0);

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
    if (s === undefined || !isTag(node) || skip?.(node)) continue;
    if (test(node, s)) found.push(node);
    else for (let j = node.children.length - 1; j >= 0; j--) stack.push(node.children[j]!);
  }
  return found;
}

/** A list of links (a link bar, a menu) or of teasers (headlines with a line or two each). */
function isList(element: Element, s: Stats): boolean {
  if ((s.flags & (HAS_H1 | HAS_PRE)) !== 0) return false;
  return (
    isLinkList(element, s) || (s.teasers >= TEASER_LIST_MIN && s.teaserText >= s.text * TEASER_LIST_SHARE)
  );
}

/** Containers a widget inside the content may be (tables are kept whole, as data). */
const WIDGET_CONTAINERS = new Set(['div', 'section', 'ul', 'ol', 'form', 'fieldset']);
/** A container with this many commas is text, whatever else it holds. */
const WIDGET_MAX_COMMAS = 10;
/** A list is a container whose text is mostly in lists. */
const LIST_SHARE = 0.9;

/**
 * A container inside the content that looks like a widget, as Readability's conditional cleaning
 * judges one: named like one (a negative weight), or, with few commas, more images than
 * paragraphs twice over (a gallery strip), or a little linky (over a fifth of its text in links,
 * half when named like content), or very short with links. Lists of images are kept.
 */
function isWidget(element: Element, s: Stats): boolean {
  if (!WIDGET_CONTAINERS.has(element.name) || (s.flags & (HAS_H1 | HAS_PRE)) !== 0) return false;
  const weight = hintsOf(element).weight;
  if (weight < 0) return true;
  if (s.commas >= WIDGET_MAX_COMMAS) return false;
  const isList = element.name === 'ul' || element.name === 'ol' || s.listText > s.text * LIST_SHARE;
  const density = linkDensity(s);
  const inFigure = isInFigure(element);
  const suspicious =
    (!inFigure && s.images > 1 && s.ps / s.images < 0.5) ||
    (!isList &&
      !inFigure &&
      s.headingText < s.text * 0.9 &&
      s.text < 25 &&
      (s.images === 0 || s.images > 2) &&
      density > 0) ||
    (!isList && weight < 25 && density > 0.2) ||
    (weight >= 25 && density > 0.5);
  // A list of images (one image an item) stays.
  return suspicious && !(isList && s.images > 0 && s.text === 0);
}

function isInFigure(element: Element): boolean {
  for (let node = element.parent; node !== null; node = node.parent)
    if (isTag(node) && node.name === 'figure') return true;
  return false;
}

/** A small box with a text field (a newsletter sign-up, a search or comment form), not the best candidate's. */
function isFormBox(element: Element, s: Stats, best: ParentNode | null): boolean {
  return (
    (s.flags & HAS_INPUT) !== 0 &&
    (s.flags & HAS_H1) === 0 &&
    s.text <= FORM_BOX_MAX_CHARS &&
    (best === null || !related(element, best))
  );
}

/**
 * Cuts paragraphs whose text repeats an earlier one in the content (galleries repeat each caption
 * in their thumbnails and full-screen views), with the figure that holds nothing else; the text cut.
 */
function cutRepeats(
  roots: readonly AnyNode[],
  measured: Measured,
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
  for (const element of outermost(roots, measured.stats, (e) => candidates.has(e), skip)) {
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

function skipper(
  base: (element: Element) => boolean,
  cut: ReadonlySet<Element>,
): (element: Element) => boolean {
  if (cut.size === 0) return base;
  return (element) => cut.has(element) || base(element);
}

/** The elements and their ancestors up to `root`, each ancestor marked once (a linear total). */
function ancestorsOf(elements: readonly Element[], root: ParentNode): Set<Element> {
  const marked = new Set<Element>();
  for (const element of elements) {
    for (let node: ParentNode | null = element; node !== null && node !== root; node = node.parent) {
      if (!isTag(node) || marked.has(node)) break;
      marked.add(node);
    }
  }
  return marked;
}

const linkDensity = (s: Stats) => (s.text === 0 ? 0 : s.links / s.text);

/**
 * Each candidate's score: its own (tag and names) plus its paragraphs', less its link density. A
 * paragraph in a teaser weighs a quarter: a short article beside a long list of teasers is the
 * article, while on an index of teasers they are all there is.
 */
function scoreCandidates(measured: Measured, root: ParentNode): Map<ParentNode, number> {
  const raw = new Map<ParentNode, number>();
  for (const paragraph of measured.paragraphs) {
    const density = paragraph.text === 0 ? 0 : paragraph.links / paragraph.text;
    let score = (1 + paragraph.commas + Math.min(Math.floor(paragraph.text / 100), 3)) * (1 - density);
    if (score <= 0) continue;
    if (inTeaser(paragraph.element ?? paragraph.parent, measured.stats)) score *= TEASER_WEIGHT;
    let ancestor: ParentNode | null = paragraph.parent;
    for (let level = 0; level < SCORE_LEVELS && ancestor !== null; level++) {
      if (!measured.stats.has(ancestor)) break;
      const own = raw.get(ancestor) ?? initialScore(ancestor);
      raw.set(ancestor, own + score / (level === 0 ? 1 : level === 1 ? 2 : level * 3));
      if (ancestor === root) break;
      ancestor = ancestor.parent;
    }
  }
  const scores = new Map<ParentNode, number>();
  for (const [node, score] of raw) scores.set(node, score * (1 - linkDensity(measured.stats.get(node)!)));
  return scores;
}

/** Whether a node is, or is within a few levels of, a teaser. */
function inTeaser(node: ParentNode, stats: Map<AnyNode, Stats>): boolean {
  let current: ParentNode | null = node;
  for (let level = 0; level <= TEASER_LEVELS && current !== null; level++, current = current.parent) {
    const s = stats.get(current);
    if (s === undefined) return false;
    if (s.teaser) return true;
  }
  return false;
}

function initialScore(node: ParentNode): number {
  if (!isTag(node)) return 0;
  return (TAG_BONUS.get(node.name) ?? 0) + hintsOf(node).weight;
}

/**
 * The best-scoring candidate; or the ancestor that holds several candidates scoring nearly as
 * well (a page of sections); or an ancestor scoring better than it (as Readability does).
 */
function bestCandidate(scores: Map<ParentNode, number>, root: ParentNode): ParentNode | null {
  const ranked = [...scores].sort((a, b) => b[1] - a[1]).slice(0, TOP_CANDIDATES);
  if (ranked.length === 0) return null;
  let [top, topScore] = ranked[0]!;
  const close = ranked.slice(1).filter(([, score]) => score >= topScore * 0.75);
  if (close.length >= MIN_TOP_CANDIDATES && top !== root) {
    for (let ancestor = top.parent; ancestor !== null; ancestor = ancestor.parent) {
      const holds = close.filter(([node]) => isInside(node, ancestor!)).length;
      if (holds >= MIN_TOP_CANDIDATES) {
        top = ancestor;
        topScore = scores.get(ancestor) ?? topScore;
        break;
      }
      if (ancestor === root) break;
    }
  }
  let last = topScore;
  for (let parent = top.parent; parent !== null && top !== root; parent = parent.parent) {
    const score = scores.get(parent);
    if (score !== undefined) {
      if (score < topScore / 3) break;
      if (score > last) {
        top = parent;
        break;
      }
      last = score;
    }
    if (parent === root) break;
  }
  return top;
}

function isInside(node: AnyNode, ancestor: ParentNode): boolean {
  for (let current = node.parent; current !== null; current = current.parent) {
    if (current === ancestor) return true;
  }
  return false;
}

const isSemantic = (node: ParentNode) =>
  isTag(node) &&
  (node.name === 'article' ||
    node.name === 'main' ||
    node.attribs.role?.trim().toLowerCase() === 'main' ||
    node.attribs.itemprop === 'articleBody');

/** The outermost `<article>`, `<main>` or `[role=main]` above `top` of which it is at least half. */
function upToSemantic(top: ParentNode, root: ParentNode, statsOf: (node: AnyNode) => Stats): ParentNode {
  const text = statsOf(top).text;
  let chosen = top;
  for (let node: ParentNode | null = top; node !== null; node = node.parent) {
    if (isSemantic(node) && text >= statsOf(node).text * 0.5) chosen = node;
    if (node === root) break;
  }
  return chosen;
}

/** The first kept `<main>` or `[role=main]` that holds most of the page's kept text, if any. */
function mainHoldingMost(
  mains: readonly Element[],
  root: ParentNode,
  stats: Map<AnyNode, Stats>,
): Element | null {
  const total = stats.get(root)!.text;
  for (const main of mains) {
    const s = stats.get(main);
    if (s !== undefined) return s.text >= total * MAIN_SHARE ? main : null;
  }
  return null;
}

/** Grows `top` to its parent while the parent adds little text, and few links, to it; never past `<main>`. */
function grow(top: ParentNode, root: ParentNode, statsOf: (node: AnyNode) => Stats): ParentNode {
  let current = top;
  while (current !== root && current.parent !== null && !isMain(current)) {
    const parent = current.parent;
    const inner = statsOf(current);
    const outer = statsOf(parent);
    const extra = outer.text - inner.text;
    const extraLinks = outer.links - inner.links;
    if (extra > inner.text * GROW_MAX_EXTRA) break;
    if (extra > 0 && extraLinks / extra > GROW_MAX_LINK_DENSITY) break;
    current = parent;
  }
  return current;
}

const isMain = (node: ParentNode) =>
  isTag(node) && (node.name === 'main' || node.attribs.role?.trim().toLowerCase() === 'main');

/** `top` with the siblings that score well or read like paragraphs, in document order (as Readability). */
function withSiblings(
  top: ParentNode,
  scores: Map<ParentNode, number>,
  root: ParentNode,
  measured: Measured,
): AnyNode[] {
  const parent = top.parent;
  if (top === root || parent === null || !measured.stats.has(parent)) return [top];
  const topScore = scores.get(top) ?? 0;
  const threshold = Math.max(10, topScore * 0.2);
  const topClass = isTag(top) ? (top.attribs.class ?? '') : '';
  const kept: AnyNode[] = [];
  for (const sibling of parent.children) {
    if (sibling === top) {
      kept.push(top);
      continue;
    }
    if (!isTag(sibling)) continue;
    const s = measured.stats.get(sibling);
    if (s === undefined) continue;
    const bonus = topClass !== '' && sibling.attribs.class === topClass ? topScore * 0.2 : 0;
    const score = scores.get(sibling);
    if (score !== undefined && score + bonus >= threshold) kept.push(sibling);
    else if (sibling.name === 'p' && s.text > 80 && linkDensity(s) < 0.25) kept.push(sibling);
  }
  return kept;
}

/** The page's first kept h1 before the content, when the content has none (and it is no link, as logos are). */
function missingH1(roots: readonly AnyNode[], h1s: readonly Element[], measured: Measured): Element | null {
  const { stats } = measured;
  if (roots.some((root) => ((stats.get(root)?.flags ?? 0) & HAS_H1) !== 0)) return null;
  const firstOrder = stats.get(roots[0]!)?.order ?? 0;
  for (const h1 of h1s) {
    const s = stats.get(h1);
    if (s === undefined || s.text === 0 || linkDensity(s) >= 0.5) continue;
    return s.order < firstOrder ? h1 : null;
  }
  return null;
}

function isLinkList(element: Element, s: Stats): boolean {
  return (
    LINK_LIST_CONTAINERS.has(element.name) &&
    s.linkCount >= LINK_LIST_MIN_LINKS &&
    linkDensity(s) > LINK_LIST_DENSITY &&
    s.text - s.links < LINK_LIST_MAX_OWN_TEXT &&
    (s.flags & (HAS_H1 | HAS_PRE)) === 0
  );
}
