import type { Element, ParentNode } from 'domhandler';
import type { ContentOptions } from '../document.ts';
import { isInvisible } from './dom.ts';
import { boilerplateRemoved, type ContentView, mainContent } from './main-content.ts';
import type { ParsedPage } from './page.ts';
import { selectEach } from './selectors.ts';

/**
 * What the markdown and HTML of a page are written from: the body (or the elements `includeTags`
 * match, outermost ones, in document order), without invisible elements and those `excludeTags`
 * match, then narrowed to the main content when `onlyMainContent` is set.
 */
export function contentView(page: ParsedPage, options: ContentOptions): ContentView {
  const root: ParentNode = page.body ?? page.root;
  const excluded = new Set(options.excludeTags.length > 0 ? selectEach(options.excludeTags, root) : []);
  const skip =
    excluded.size === 0 ? isInvisible : (element: Element) => excluded.has(element) || isInvisible(element);
  const input = { root, skip, h1s: page.h1s, mains: page.mains };
  if (options.includeTags.length > 0) {
    const included = outermostShown(selectEach(options.includeTags, root), root, skip);
    return options.onlyMainContent ? boilerplateRemoved(included, input) : { roots: included, skip };
  }
  return options.onlyMainContent ? mainContent(input) : { roots: [root], skip };
}

/**
 * The elements (in document order) that are shown, not inside another of them and not inside a
 * skipped element: each goes up its ancestors, which the depth limit of the tree bounds.
 */
function outermostShown(
  elements: readonly Element[],
  root: ParentNode,
  skip: (e: Element) => boolean,
): Element[] {
  const chosen = new Set(elements);
  const kept: Element[] = [];
  outer: for (const element of elements) {
    if (skip(element)) continue;
    for (let node = element.parent; node !== null && node !== root; node = node.parent) {
      if (chosen.has(node as Element) || skip(node as Element)) continue outer;
    }
    kept.push(element);
  }
  return kept;
}
