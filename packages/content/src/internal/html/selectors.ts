import { compile, selectAll } from 'css-select';
import { type AnyNode, type Element, isTag, type ParentNode } from 'domhandler';

/** Compiled selectors kept between pages (a crawl's jobs use the same few for every page). */
const CACHE_SIZE = 256;
type Compiled = ReturnType<typeof compile<AnyNode, Element>>;
const cache = new Map<string, Compiled | null>();

/**
 * Null when `selector` is a CSS selector css-select runs, else a short message saying what is
 * wrong with it (for the API's 400 at `content.include_tags[i]`).
 */
export function checkSelector(selector: string): string | null {
  const trimmed = selector.trim();
  if (trimmed === '') return 'the selector is empty';
  const last = trimmed[trimmed.length - 1]!;
  if (last === '>' || last === '+' || last === '~' || last === ',') {
    return 'the selector ends with a combinator or comma';
  }
  try {
    compile<AnyNode, Element>(trimmed);
  } catch (error) {
    const message = (error as Error).message;
    if (message.includes('Pseudo-elements')) return 'pseudo-elements (::name) are not supported';
    return message.endsWith('found ') ? `${message}end of selector` : message;
  }
  return null;
}

/** The compiled selector, or null when it does not compile (checkSelector says why). */
function compiled(selector: string): Compiled | null {
  let query = cache.get(selector);
  if (query !== undefined) return query;
  query = checkSelector(selector) === null ? compile<AnyNode, Element>(selector.trim()) : null;
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(selector, query);
  return query;
}

/**
 * The elements under `root` that any of `selectors` match, in document order, each once.
 * Selectors that do not compile match nothing (the API refuses them before a job runs).
 */
export function selectEach(selectors: readonly string[], root: ParentNode): Element[] {
  const found = new Set<Element>();
  for (const selector of selectors) {
    const query = compiled(selector);
    if (query === null) continue;
    for (const element of selectAll<AnyNode, Element>(query, root)) found.add(element);
  }
  if (selectors.length <= 1) return [...found];
  return documentOrder(found, root);
}

/** The elements of `set` in document order (one walk of `root`). */
function documentOrder(set: ReadonlySet<Element>, root: ParentNode): Element[] {
  const ordered: Element[] = [];
  const stack: AnyNode[] = [...root.children].reverse();
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!isTag(node)) continue;
    if (set.has(node)) ordered.push(node);
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  return ordered;
}
