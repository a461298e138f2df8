import {
  type AnyNode,
  type Document,
  DomHandler,
  Element,
  hasChildren,
  isComment,
  isText,
  type ParentNode,
} from 'domhandler';
import { Parser } from 'htmlparser2';

/** An attribute node with a stable identity, built on first use (XPath needs attributes as nodes). */
export class XAttr {
  readonly nodeType = 2;
  readonly namespaceURI = null;
  readonly prefix = null;
  readonly name: string;
  readonly value: string;
  readonly ownerElement: XElement;
  constructor(name: string, value: string, ownerElement: XElement) {
    this.name = name;
    this.value = value;
    this.ownerElement = ownerElement;
  }
  get localName(): string {
    return this.name;
  }
  get nodeName(): string {
    return this.name;
  }
}

/**
 * A domhandler element that also answers the DOM names fontoxpath reads, so one parsed tree
 * serves both css-select and XPath. HTML elements are in no namespace here, so `//div` matches
 * without a prefix (as in browsers' XPath on HTML documents).
 */
export class XElement extends Element {
  xattrs: XAttr[] | null = null;
  get localName(): string {
    return this.name;
  }
  get nodeName(): string {
    return this.name;
  }
  get namespaceURI(): null {
    return null;
  }
  get prefix(): null {
    return null;
  }
}

/** Parents that hold a doctype (htmlparser2 models it as a processing instruction): XPath must not see it. */
export const parentsWithDirectives = new WeakSet<ParentNode>();

class XHandler extends DomHandler {
  override onopentag(name: string, attribs: { [name: string]: string }): void {
    const element = new XElement(name, attribs);
    this.addNode(element);
    this.tagStack.push(element);
  }
  override onprocessinginstruction(name: string, data: string): void {
    super.onprocessinginstruction(name, data);
    const parent = this.tagStack[this.tagStack.length - 1];
    if (parent) parentsWithDirectives.add(parent);
  }
}

/** Parses HTML once into a tolerant domhandler tree (htmlparser2: no implied html/head/body/tbody). */
export function parseHtml(html: string): Document {
  const handler = new XHandler();
  new Parser(handler, { decodeEntities: true }).end(html);
  return handler.root;
}

/** Attribute nodes of an element, created once per element so XPath sees stable identities. */
export function attributesOf(element: XElement): XAttr[] {
  let attrs = element.xattrs;
  if (attrs === null) {
    attrs = [];
    for (const name of Object.keys(element.attribs)) {
      attrs.push(new XAttr(name, element.attribs[name] ?? '', element));
    }
    element.xattrs = attrs;
  }
  return attrs;
}

/** Concatenated text of all descendant text nodes (the DOM textContent / XPath string value). */
export function textContent(node: AnyNode): string {
  if (isText(node) || isComment(node)) return node.data;
  if (!hasChildren(node)) return '';
  const parts: string[] = [];
  collectText(node.children, parts);
  return parts.join('');
}

function collectText(children: AnyNode[], parts: string[]): void {
  for (const child of children) {
    if (isText(child)) parts.push(child.data);
    else if (hasChildren(child)) collectText(child.children, parts);
  }
}
