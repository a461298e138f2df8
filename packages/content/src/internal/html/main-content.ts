import { type AnyNode, type Element, isTag, type ParentNode } from 'domhandler';
import { contentCuts, isInside, linkDensity } from './cuts.ts';
import { hintsOf } from './hints.ts';
import { HAS_H1, type Measured, type MeasureOptions, measure, type Stats } from './measure.ts';

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
/** …and no more than this share of what it adds is link text, and what it adds after it is at most this share of it. */
const GROW_MAX_LINK_DENSITY = 0.2;
const GROW_MAX_AFTER = 0.25;

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

/** A paragraph inside a teaser (a short item under a linked headline) weighs this share of its score. */
const TEASER_WEIGHT = 0.25;
/** Levels above a paragraph looked at for the teaser it is in. */
const TEASER_LEVELS = 3;

/**
 * The page's main content, what a reader view keeps: paragraphs are scored, and their scores go
 * to their ancestors (commas, length, tag, class and id names, less their share of link text);
 * the best ancestor wins, moves up to an `<article>` or `<main>` that it is most of, grows to
 * parents that add little, few links and little after it, and takes the siblings that score well
 * (docs/api.md §22). Navigation, headers, footers, asides, dialogs, form controls, elements named
 * like boilerplate (names read as words, hints.ts) and bylines, datelines and controls' labels
 * (lines.ts) are left out first; lists of links or teasers beside the content, form boxes,
 * widgets and repeated captions within the result after (cuts.ts). The page's h1 is kept when the
 * result has none. When that leaves too little, class names are not judged; when it leaves
 * nothing, the body without boilerplate is the result, else the whole body.
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
  const cuts = contentCuts(roots, measured, best, input.skip);
  return { view: { roots, skip: skipper(input.skip, cuts.cut) }, text: total - cuts.text };
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

/**
 * Grows `top` to its parent while the parent adds little text, and few links, to it, and little
 * after it (a headline, a standfirst and a lead image come before a body; a footer, a bio and
 * boxes of other stories after it); never past `<main>`.
 */
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
    if (textAfter(current, statsOf) > inner.text * GROW_MAX_AFTER) break;
    current = parent;
  }
  return current;
}

/** The text of the element siblings after `node`. */
function textAfter(node: ParentNode, statsOf: (node: AnyNode) => Stats | undefined): number {
  let text = 0;
  for (let sibling = node.next; sibling !== null; sibling = sibling.next)
    if (isTag(sibling)) text += statsOf(sibling)?.text ?? 0;
  return text;
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
