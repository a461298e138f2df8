import type { Element } from 'domhandler';
import { isTag } from 'domhandler';
import { BLOCK } from './dom.ts';

/** A block is inside the element. */
export const HOLDS_BLOCK = 1;
/** A table is inside the element. */
export const HOLDS_TABLE = 2;
/** A block that makes a table without header cells a layout table is inside the element. */
export const HOLDS_LAYOUT_BLOCK = 4;

/** Blocks in a cell that make a table without header cells a layout table. */
const LAYOUT_BLOCKS = new Set([
  'article',
  'blockquote',
  'dl',
  'div',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'ol',
  'p',
  'pre',
  'section',
  'ul',
]);

/**
 * What kinds of element (HOLDS_* bits) each element's shown descendants include, computed once
 * per element: a link around a card, or a cell holding a table, is asked about at every level.
 * The recursion is as deep as the tree, which the parser bounds.
 */
export function subtreeKinds(skip: (element: Element) => boolean): (element: Element) => number {
  const memo = new Map<Element, number>();
  const kinds = (element: Element): number => {
    const known = memo.get(element);
    if (known !== undefined) return known;
    let bits = 0;
    for (const child of element.children) {
      if (!isTag(child) || skip(child)) continue;
      const { name } = child;
      if (BLOCK.has(name)) bits |= HOLDS_BLOCK;
      if (name === 'table') bits |= HOLDS_TABLE;
      if (LAYOUT_BLOCKS.has(name)) bits |= HOLDS_LAYOUT_BLOCK;
      bits |= kinds(child);
    }
    memo.set(element, bits);
    return bits;
  };
  return kinds;
}
