import { type AnyNode, type Document, type Element, hasChildren, isTag } from 'domhandler';

/**
 * A fast path for the XPath queries most jobs write: absolute location paths of element steps
 * (`/` or `//`, a lower-level name or `*`, predicates `[@a]`, `[@a="v"]`, `[contains(@a, "v")]`),
 * optionally ending in `/@name`, `//@name`, `/text()` or `//text()`. Anything else (functions,
 * positions, axes, unions, prefixes, escaped quotes) is not translated and stays with fontoxpath.
 *
 * Why it is equivalent to fontoxpath over the same tree (xpath-facade.ts): a node is in a
 * location path's result exactly when a chain of nodes matching each step, linked by the step
 * axes, ends in it; the result is a set in document order. One walk in document order computes,
 * for every element, which prefixes of the path it ends (a bit mask) from its parent's masks, so
 * each node is emitted once, in document order, in linear time. Names and attribute values are
 * compared exactly, as fontoxpath compares them on this tree (htmlparser2 lower-cases tag and
 * attribute names; XPath never folds case). `evaluateXPathValues` then turns the selected nodes
 * into strings as it does fontoxpath's.
 */
export interface SimplePath {
  readonly steps: readonly Step[];
  readonly output: Output;
}

type Predicate =
  | { kind: 'has'; attr: string }
  | { kind: 'equals'; attr: string; value: string }
  | { kind: 'contains'; attr: string; value: string };

interface Step {
  /** `child` after `/`, `descendant` after `//`. */
  readonly axis: 'child' | 'descendant';
  /** Element name, or null for `*`. */
  readonly name: string | null;
  readonly predicates: readonly Predicate[];
}

type Output =
  | { kind: 'element' }
  | { kind: 'attr'; axis: 'child' | 'descendant'; name: string }
  | { kind: 'text'; axis: 'child' | 'descendant' };

const MAX_STEPS = 30; // the masks are 32-bit integers
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*/;
const TOKEN = /\s*(\/\/|\/|\[|\]|@|\(|\)|,|=|\*|"[^"]*"|'[^']*'|[A-Za-z_][A-Za-z0-9_.-]*|[\s\S])/y;

function tokenize(query: string): string[] | null {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < query.length) {
    const match = TOKEN.exec(query);
    if (!match) break;
    tokens.push(match[1] ?? '');
  }
  if (/\S/.test(query.slice(TOKEN.lastIndex))) return null;
  return tokens.filter((token) => token !== '');
}

function literal(token: string | undefined): string | null {
  if (token === undefined || token.length < 2) return null;
  const quote = token[0];
  if ((quote !== '"' && quote !== "'") || token.at(-1) !== quote) return null;
  const value = token.slice(1, -1);
  // Lone surrogates would make code-unit and code-point comparisons differ.
  return value.isWellFormed() ? value : null;
}

const isName = (token: string | undefined): token is string =>
  token !== undefined && NAME.exec(token)?.[0] === token;

/** Translates a query into a SimplePath, or null when it is outside the subset. */
export function parseSimplePath(query: string): SimplePath | null {
  const tokens = tokenize(query);
  if (!tokens || tokens.length === 0) return null;
  let i = 0;
  const steps: Step[] = [];
  while (i < tokens.length) {
    const slash = tokens[i];
    if (slash !== '/' && slash !== '//') return null;
    const axis = slash === '/' ? 'child' : 'descendant';
    i++;
    const head = tokens[i];
    if (head === '@') {
      const name = tokens[i + 1];
      if (!isName(name) || i + 2 !== tokens.length || steps.length === 0) return null;
      return { steps, output: { kind: 'attr', axis, name } };
    }
    if (head === 'text' && tokens[i + 1] === '(' && tokens[i + 2] === ')') {
      if (i + 3 !== tokens.length || steps.length === 0) return null;
      return { steps, output: { kind: 'text', axis } };
    }
    if (head !== '*' && !isName(head)) return null;
    // A name followed by `(` or `::` is a function or an axis, not an element name.
    if (tokens[i + 1] === '(') return null;
    i++;
    const predicates: Predicate[] = [];
    while (tokens[i] === '[') {
      const parsed = parsePredicate(tokens, i + 1);
      if (!parsed) return null;
      predicates.push(parsed.predicate);
      i = parsed.next;
    }
    steps.push({ axis, name: head === '*' ? null : head, predicates });
    if (steps.length > MAX_STEPS) return null;
  }
  return steps.length > 0 ? { steps, output: { kind: 'element' } } : null;
}

function parsePredicate(tokens: string[], at: number): { predicate: Predicate; next: number } | null {
  if (tokens[at] === '@' && isName(tokens[at + 1])) {
    const attr = tokens[at + 1] as string;
    if (tokens[at + 2] === ']') return { predicate: { kind: 'has', attr }, next: at + 3 };
    const value = tokens[at + 2] === '=' ? literal(tokens[at + 3]) : null;
    if (value === null || tokens[at + 4] !== ']') return null;
    return { predicate: { kind: 'equals', attr, value }, next: at + 5 };
  }
  if (
    tokens[at] === 'contains' &&
    tokens[at + 1] === '(' &&
    tokens[at + 2] === '@' &&
    isName(tokens[at + 3]) &&
    tokens[at + 4] === ','
  ) {
    const value = literal(tokens[at + 5]);
    if (value === null || tokens[at + 6] !== ')' || tokens[at + 7] !== ']') return null;
    return { predicate: { kind: 'contains', attr: tokens[at + 3] as string, value }, next: at + 8 };
  }
  return null;
}

function stepMatches(step: Step, element: Element): boolean {
  if (step.name !== null && element.name !== step.name) return false;
  const attribs = element.attribs;
  for (const predicate of step.predicates) {
    const present = Object.hasOwn(attribs, predicate.attr);
    const value = present ? (attribs[predicate.attr] ?? '') : '';
    if (predicate.kind === 'has') {
      if (!present) return false;
    } else if (predicate.kind === 'equals') {
      if (!present || value !== predicate.value) return false;
    } else if (!value.includes(predicate.value)) {
      // contains((), "") is true, like contains("", ""): an absent attribute is the empty string.
      return false;
    }
  }
  return true;
}

/**
 * Which path prefixes an element ends: bit k is set when a chain matching steps 0..k ends at
 * it. `parentMask` is its parent's mask (0 for the document), `above` the union of the masks of
 * its proper ancestors.
 */
export function maskOf(steps: readonly Step[], element: Element, parentMask: number, above: number): number {
  let mask = 0;
  for (let k = 0; k < steps.length; k++) {
    const step = steps[k] as Step;
    let linked: boolean;
    if (k === 0) linked = step.axis === 'descendant' || element.parent?.type === 'root';
    else linked = ((step.axis === 'child' ? parentMask : above) & (1 << (k - 1))) !== 0;
    if (linked && stepMatches(step, element)) mask |= 1 << k;
  }
  return mask;
}

/**
 * What a SimplePath selects on a parsed page, in document order: element and text nodes, and the
 * values of selected attributes; null for a tree this walk does not model (the caller then asks
 * fontoxpath).
 */
export function selectSimplePath(path: SimplePath, root: Document): (AnyNode | string)[] | null {
  const { steps, output } = path;
  const last = 1 << (steps.length - 1);
  const out: (AnyNode | string)[] = [];
  // Iterative walk in document order; each frame: a parent, its next child, its mask, and the
  // union of its own and its ancestors' masks.
  const parents: AnyNode[][] = [root.children];
  const positions: number[] = [0];
  const masks: number[] = [0];
  const aboves: number[] = [0];
  while (parents.length > 0) {
    const depth = parents.length - 1;
    const children = parents[depth] as AnyNode[];
    const position = positions[depth] as number;
    if (position >= children.length) {
      parents.pop();
      positions.pop();
      masks.pop();
      aboves.pop();
      continue;
    }
    positions[depth] = position + 1;
    const node = children[position] as AnyNode;
    const parentMask = masks[depth] as number;
    const above = aboves[depth] as number;
    if (isTag(node)) {
      // The proper ancestors of this element are its parent and the parent's ancestors.
      const ancestors = above | parentMask;
      const mask = maskOf(steps, node, parentMask, ancestors);
      if (output.kind === 'element') {
        if (mask & last) out.push(node);
      } else if (output.kind === 'attr') {
        const selected = output.axis === 'child' ? mask : mask | ancestors;
        if (selected & last && Object.hasOwn(node.attribs, output.name))
          out.push(node.attribs[output.name] ?? '');
      }
      parents.push(node.children);
      positions.push(0);
      masks.push(mask);
      aboves.push(ancestors);
    } else if (node.type === 'text') {
      if (output.kind !== 'text') continue;
      const selected = output.axis === 'child' ? parentMask : above | parentMask;
      if (selected & last) out.push(node);
    } else if (hasChildren(node)) {
      // A CDATA section (never made by htmlparser2 in HTML mode): fontoxpath sees it as a text
      // node with children of its own, which this walk does not model.
      return null;
    }
  }
  return out;
}
