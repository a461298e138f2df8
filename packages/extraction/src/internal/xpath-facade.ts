import type { AnyNode, ParentNode } from 'domhandler';
import { isDirective } from 'domhandler';
import type { Attr, Bucket, CharacterData, Element, IDomFacade, Node } from 'fontoxpath';
import { attributesOf, parentsWithDirectives, textContent, type XAttr, type XElement } from './dom.ts';

// fontoxpath's node types are structural; ours satisfy them, but TypeScript cannot see that
// through domhandler's getters, hence the casts at this boundary only.
type Any = AnyNode | XAttr;

function matchesBucket(node: Any, bucket: Bucket | null | undefined): boolean {
  if (bucket == null) return true;
  switch (bucket) {
    case 'type-1':
      return node.nodeType === 1;
    case 'type-2':
      return node.nodeType === 2;
    case 'type-3':
      return node.nodeType === 3 || node.nodeType === 4;
    case 'type-8':
      return node.nodeType === 8;
    case 'type-1-or-type-2':
      return node.nodeType === 1 || node.nodeType === 2;
    case 'empty':
      return false;
    default:
      if (bucket.startsWith('name-')) {
        return (node.nodeType === 1 || node.nodeType === 2) && (node as XElement).name === bucket.slice(5);
      }
      return true;
  }
}

/** Children as XPath sees them: no doctype or processing instructions, filtered by the bucket hint. */
function childrenOf(node: Any, bucket: Bucket | null | undefined): Any[] {
  if (node.nodeType === 2 || !('children' in node)) return [];
  const children = (node as ParentNode).children;
  if (bucket == null && !parentsWithDirectives.has(node as ParentNode)) return children;
  const out: Any[] = [];
  for (const child of children) {
    if (!isDirective(child) && matchesBucket(child, bucket)) out.push(child);
  }
  return out;
}

function visible(node: AnyNode | null, bucket: Bucket | null | undefined, forward: boolean): AnyNode | null {
  let current = node;
  while (current !== null && (isDirective(current) || !matchesBucket(current, bucket))) {
    current = forward ? current.next : current.prev;
  }
  return current;
}

/** An IDomFacade over the domhandler tree, so XPath runs on the same parse as css-select. */
export const domhandlerFacade: IDomFacade = {
  getAllAttributes(node: Element, bucket?: Bucket | null): Attr[] {
    if (node.nodeType !== 1) return [];
    const attrs = attributesOf(node as unknown as XElement);
    if (bucket == null || bucket === 'type-2' || bucket === 'type-1-or-type-2')
      return attrs as unknown as Attr[];
    return attrs.filter((a) => matchesBucket(a, bucket)) as unknown as Attr[];
  },
  getAttribute(node: Element, name: string): string | null {
    const attribs = (node as unknown as XElement).attribs;
    return Object.hasOwn(attribs, name) ? (attribs[name] ?? null) : null;
  },
  getChildNodes(node: Node, bucket?: Bucket | null): Node[] {
    return childrenOf(node as unknown as Any, bucket) as unknown as Node[];
  },
  getData(node: Attr | CharacterData): string {
    const n = node as unknown as Any;
    if (n.nodeType === 2) return n.value;
    if ('data' in n) return n.data;
    return textContent(n);
  },
  getFirstChild(node: Node, bucket?: Bucket | null): Node | null {
    const n = node as unknown as Any;
    if (n.nodeType === 2 || !('children' in n)) return null;
    return visible(n.children[0] ?? null, bucket, true) as unknown as Node | null;
  },
  getLastChild(node: Node, bucket?: Bucket | null): Node | null {
    const n = node as unknown as Any;
    if (n.nodeType === 2 || !('children' in n)) return null;
    return visible(n.children[n.children.length - 1] ?? null, bucket, false) as unknown as Node | null;
  },
  getNextSibling(node: Node, bucket?: Bucket | null): Node | null {
    const n = node as unknown as Any;
    if (n.nodeType === 2) return null;
    return visible(n.next, bucket, true) as unknown as Node | null;
  },
  getPreviousSibling(node: Node, bucket?: Bucket | null): Node | null {
    const n = node as unknown as Any;
    if (n.nodeType === 2) return null;
    return visible(n.prev, bucket, false) as unknown as Node | null;
  },
  getParentNode(node: Node): Node | null {
    const n = node as unknown as Any;
    if (n.nodeType === 2) return n.ownerElement as unknown as Node;
    return n.parent as unknown as Node | null;
  },
};
