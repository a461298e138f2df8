import { type ChildNode, Document, Element, type ParentNode, Text } from 'domhandler';
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';

/**
 * The deepest an element sits in the tree (as in Blink): elements opened deeper are attached to
 * the element at this depth, as its children, so every later walk of the tree is bounded.
 */
export const MAX_TREE_DEPTH = 512;
/** Open elements looked at when a tag closes an element below others (`<li>` after `<p><b>`). */
const IMPLIED_CLOSE_SCAN = 16;

const VOID = new Set([
  'area',
  'base',
  'basefont',
  'bgsound',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);

/** What may stay in `<head>`; any other element closes it, as in browsers. */
const HEAD_CONTENT = new Set([
  'base',
  'basefont',
  'bgsound',
  'link',
  'meta',
  'noscript',
  'script',
  'style',
  'template',
  'title',
]);

/** Elements a `<p>` may hold that a block start closes along with it (`<p><b>x<div>`). */
const PHRASING = new Set([
  'a',
  'abbr',
  'b',
  'big',
  'cite',
  'code',
  'em',
  'font',
  'i',
  'kbd',
  'mark',
  'q',
  's',
  'samp',
  'small',
  'span',
  'strike',
  'strong',
  'sub',
  'sup',
  'time',
  'tt',
  'u',
  'var',
]);

const CLOSES_P = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'details',
  'dialog',
  'div',
  'dl',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'hr',
  'main',
  'menu',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'ul',
]);

const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/** htmlparser2's rules: an opening tag closes these elements when they are the current one. */
const OPENING_CLOSES = new Map<string, ReadonlySet<string>>([
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th', 'td'])],
  ['td', new Set(['th', 'td'])],
  ['tbody', new Set(['thead', 'tbody'])],
  ['tfoot', new Set(['thead', 'tbody'])],
  ['option', new Set(['option'])],
  ['optgroup', new Set(['optgroup', 'option'])],
  ['rt', new Set(['rt', 'rp'])],
  ['rp', new Set(['rt', 'rp'])],
  ['a', new Set(['a'])],
]);

/** Items that close an open item of their kind across phrasing and `<p>` (`<li><p>a<li>`). */
const ITEM_SIBLINGS = new Map<string, ReadonlySet<string>>([
  ['li', new Set(['li'])],
  ['dt', new Set(['dt', 'dd'])],
  ['dd', new Set(['dt', 'dd'])],
]);

/** Called for each element as it opens (its attributes are set, its children not yet). */
type OnElement = (element: Element, inForeignContent: boolean) => void;

/**
 * Parses a page into a domhandler tree with htmlparser2's tokenizer. The tree builder is our own:
 * htmlparser2's keeps its open elements with `unshift`, quadratic on deeply nested pages, and
 * builds trees of any depth. Here the tree is at most MAX_TREE_DEPTH deep, `</body>` and `</html>`
 * do not close anything (what follows them stays in the body, as browsers do), an element that
 * cannot be in `<head>` closes it, and comments, doctypes and processing instructions are left out.
 */
export function parseHtml(html: string, onElement?: OnElement): Document {
  const builder = new TreeBuilder(html, onElement ?? null);
  const tokenizer = new Tokenizer({ decodeEntities: true }, builder);
  tokenizer.write(html);
  tokenizer.end();
  return builder.root;
}

class TreeBuilder implements TokenizerCallbacks {
  readonly root = new Document([]);
  private readonly html: string;
  private readonly onElement: OnElement | null;
  /** The open elements, innermost last (it may be longer than the tree is deep). */
  private readonly open: Element[] = [];
  private readonly openCount = new Map<string, number>();
  private foreignDepth = 0;
  private lastText: Text | null = null;
  private tagName = '';
  private attribs: Record<string, string> | null = null;
  private attribName = '';
  private attribValue = '';

  constructor(html: string, onElement: OnElement | null) {
    this.html = html;
    this.onElement = onElement;
  }

  isInForeignContext(): boolean {
    return this.foreignDepth > 0;
  }

  ontext(start: number, end: number): void {
    this.appendText(this.html.slice(start, end));
  }

  ontextentity(codepoint: number): void {
    this.appendText(String.fromCodePoint(codepoint));
  }

  oncdata(start: number, end: number, offset: number): void {
    if (this.foreignDepth > 0) this.appendText(this.html.slice(start, end - offset));
  }

  oncomment(): void {}
  ondeclaration(): void {}
  onprocessinginstruction(): void {}
  onend(): void {}

  onopentagname(start: number, end: number): void {
    this.tagName = this.tagNameOf(start, end);
    this.attribs = {};
  }

  onattribname(start: number, end: number): void {
    this.attribName = this.html.slice(start, end).toLowerCase();
    this.attribValue = '';
  }

  onattribdata(start: number, end: number): void {
    this.attribValue += this.html.slice(start, end);
  }

  onattribentity(codepoint: number): void {
    this.attribValue += String.fromCodePoint(codepoint);
  }

  onattribend(): void {
    const attribs = this.attribs;
    if (attribs !== null && !Object.hasOwn(attribs, this.attribName))
      attribs[this.attribName] = this.attribValue;
    this.attribValue = '';
  }

  onopentagend(): void {
    this.openElement(false);
  }

  onselfclosingtag(): void {
    this.openElement(this.foreignDepth > 0);
  }

  onclosetag(start: number, end: number): void {
    const name = this.tagNameOf(start, end);
    if (VOID.has(name)) {
      if (name === 'br') this.attach(new Element('br', Object.create(null) as Record<string, string>));
      return;
    }
    if (name === 'body' || name === 'html') return;
    if ((this.openCount.get(name) ?? 0) > 0) {
      while (this.open.length > 0 && this.pop().name !== name) {}
    } else if (name === 'p') {
      this.attach(new Element('p', Object.create(null) as Record<string, string>));
    }
  }

  private tagNameOf(start: number, end: number): string {
    const name = this.html.slice(start, end).toLowerCase();
    return name === 'image' && this.foreignDepth === 0 ? 'img' : name;
  }

  private openElement(selfClosing: boolean): void {
    const name = this.tagName;
    const attribs = this.attribs;
    this.tagName = '';
    this.attribs = null;
    if (name === '' || attribs === null) return;
    // As in browsers, a form inside a form is ignored (its end tag then closes the outer one).
    if (name === 'form' && (this.openCount.get('form') ?? 0) > 0) return;
    this.closeImplied(name);
    const element = new Element(name, attribs);
    this.attach(element);
    this.onElement?.(element, this.foreignDepth > 0);
    if (selfClosing || (VOID.has(name) && this.foreignDepth === 0)) return;
    this.open.push(element);
    this.openCount.set(name, (this.openCount.get(name) ?? 0) + 1);
    if (name === 'svg' || name === 'math') this.foreignDepth++;
    this.lastText = null;
  }

  /** Closes what the opening of `name` ends: `<head>`, an open `<p>`, a sibling item or cell. */
  private closeImplied(name: string): void {
    if (this.foreignDepth > 0) return;
    if (this.current()?.name === 'head' && !HEAD_CONTENT.has(name)) this.pop();
    if (CLOSES_P.has(name)) this.closeAcross(PHRASING, HEADINGS.has(name) ? HEADINGS_AND_P : P_ONLY);
    const items = ITEM_SIBLINGS.get(name);
    if (items !== undefined) this.closeAcross(PHRASING_AND_P, items);
    const closes = OPENING_CLOSES.get(name);
    if (closes === undefined) return;
    for (let top = this.current(); top !== undefined && closes.has(top.name); top = this.current())
      this.pop();
  }

  /**
   * Closes the innermost open element named in `targets` when only elements named in `across`
   * are open inside it, looking at IMPLIED_CLOSE_SCAN elements at most.
   */
  private closeAcross(across: ReadonlySet<string>, targets: ReadonlySet<string>): void {
    const { open } = this;
    const stop = Math.max(0, open.length - IMPLIED_CLOSE_SCAN);
    for (let i = open.length - 1; i >= stop; i--) {
      const name = open[i]!.name;
      if (targets.has(name)) {
        while (open.length > i) this.pop();
        return;
      }
      if (!across.has(name)) return;
    }
  }

  private appendText(data: string): void {
    if (this.current()?.name === 'head' && !isWhitespace(data)) this.pop();
    const last = this.lastText;
    if (last !== null) {
      last.data += data;
      return;
    }
    const text = new Text(data);
    this.attach(text);
    this.lastText = text;
  }

  private current(): Element | undefined {
    return this.open[this.open.length - 1];
  }

  /** The node new nodes go into: the innermost open element, or the one at the depth limit. */
  private parent(): ParentNode {
    const depth = Math.min(this.open.length, MAX_TREE_DEPTH);
    return depth === 0 ? this.root : this.open[depth - 1]!;
  }

  private attach(node: ChildNode): void {
    const parent = this.parent();
    const previous = parent.children[parent.children.length - 1];
    if (previous !== undefined) {
      node.prev = previous;
      previous.next = node;
    }
    node.parent = parent;
    parent.children.push(node);
    this.lastText = null;
  }

  private pop(): Element {
    const element = this.open.pop()!;
    this.openCount.set(element.name, (this.openCount.get(element.name) ?? 1) - 1);
    if (element.name === 'svg' || element.name === 'math') this.foreignDepth--;
    this.lastText = null;
    return element;
  }
}

const P_ONLY: ReadonlySet<string> = new Set(['p']);
const HEADINGS_AND_P: ReadonlySet<string> = new Set(['p', ...HEADINGS]);
const PHRASING_AND_P: ReadonlySet<string> = new Set([...PHRASING, 'p', 'div']);

function isWhitespace(data: string): boolean {
  for (let i = 0; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) return false;
  }
  return true;
}
