import { compile, selectAll } from 'css-select';
import { parse, type Selector, SelectorType, stringify } from 'css-what';
import type { AnyNode, Document, Element } from 'domhandler';
import type { ValueSink } from './page.ts';
import { ownTextValue, textValue } from './values.ts';

type Output = { kind: 'text' } | { kind: 'ownText' } | { kind: 'attr'; name: string };

export interface CompiledCss {
  readonly select: (root: Document) => Element[];
  /**
   * When the selector looks only at an element and its ancestors (names, attributes, `>` and
   * white space between them): its comma-separated parts, so that a page can be read in one pass
   * without a tree (stream.ts); null otherwise.
   */
  readonly upward: readonly UpwardSelector[] | null;
  readonly output: Output;
}

/**
 * A selector of compounds joined by `>` or white space, for matching elements as they open: each
 * compound is css-select's matcher of one element alone, and `child[i]` says whether compound i
 * must be a child (`>`) of an element matching compound i - 1 rather than a descendant. A reader
 * keeps, per open element, which prefixes of the compounds end there (`prefixesOf`), so matching
 * costs the same on every element however the selector nests: no backtracking over ancestors.
 */
export interface UpwardSelector {
  readonly compounds: readonly ((element: Element) => boolean)[];
  readonly child: readonly boolean[];
}

/** Compounds a prefix mask can hold. */
const MAX_COMPOUNDS = 30;

const TEXT_SUFFIX = /::text\s*$/;
const ATTR_SUFFIX = /::attr\(\s*(?:"([^"]*)"|'([^']*)'|([^)\s]*))\s*\)\s*$/;
const TRAILING_COMBINATOR = /[>+~,]\s*$/;

/**
 * Compiles a CSS selector with an optional Scrapy-style suffix: `::text` (the element's own
 * text nodes, joined) or `::attr(name)`. A suffix after white space or a combinator applies to
 * every element there (`div ::text` is `div *::text`). Throws SyntaxError with a readable message.
 */
export function compileCss(query: string): CompiledCss {
  let selector = query;
  let output: Output = { kind: 'text' };
  const attr = ATTR_SUFFIX.exec(query);
  if (TEXT_SUFFIX.test(query)) {
    selector = query.replace(TEXT_SUFFIX, '');
    output = { kind: 'ownText' };
  } else if (attr) {
    const name = (attr[1] ?? attr[2] ?? attr[3] ?? '').toLowerCase();
    if (name === '') throw new SyntaxError('::attr() needs an attribute name');
    selector = query.slice(0, attr.index);
    output = { kind: 'attr', name };
  }
  if (output.kind !== 'text' && (selector.trim() === '' || /[\s>+~]$/.test(selector))) selector += '*';
  if (selector.trim() === '') throw new SyntaxError('the selector is empty');
  if (TRAILING_COMBINATOR.test(selector)) throw new SyntaxError('the selector ends with a combinator');
  let compiled: ReturnType<typeof compile<AnyNode, Element>>;
  try {
    compiled = compile<AnyNode, Element>(selector);
  } catch (error) {
    const message = (error as Error).message;
    if (message.includes('Pseudo-elements'))
      throw new SyntaxError('only ::text and ::attr(name) may end a selector');
    throw new SyntaxError(message.endsWith('found ') ? `${message}end of selector` : message);
  }
  return {
    select: (root) => selectAll<AnyNode, Element>(compiled, root),
    upward: upwardParts(selector),
    output,
  };
}

const UPWARD = new Set<string>([
  SelectorType.Tag,
  SelectorType.Universal,
  SelectorType.Attribute,
  SelectorType.Descendant,
  SelectorType.Child,
]);

// A selector that starts with a combinator is relative to a scope; it is left to `select`.
const looksUp = (tokens: Selector[]): boolean =>
  tokens.length > 0 &&
  tokens[0]!.type !== SelectorType.Descendant &&
  tokens[0]!.type !== SelectorType.Child &&
  tokens.every((token) => UPWARD.has(token.type));

const isCombinator = (token: Selector) =>
  token.type === SelectorType.Descendant || token.type === SelectorType.Child;

function upwardParts(selector: string): UpwardSelector[] | null {
  const parts = parse(selector);
  if (!parts.every(looksUp)) return null;
  const upward: UpwardSelector[] = [];
  for (const tokens of parts) {
    const compounds: ((element: Element) => boolean)[] = [];
    const child: boolean[] = [];
    let start = 0;
    for (let i = 0; i <= tokens.length; i++) {
      const token = tokens[i];
      if (token && !isCombinator(token)) continue;
      child.push(start > 0 && tokens[start - 1]!.type === SelectorType.Child);
      compounds.push(compile<AnyNode, Element>(stringify([tokens.slice(start, i)])));
      start = i + 1;
    }
    if (compounds.length > MAX_COMPOUNDS) return null;
    upward.push({ compounds, child });
  }
  return upward;
}

/**
 * Which prefixes of `selector`'s compounds end at `element` (bit i: compounds 0..i match a chain
 * ending there), given those its parent ends (`parent`) and those any proper ancestor ends
 * (`above`, which includes `parent`).
 */
export function prefixesOf(
  selector: UpwardSelector,
  element: Element,
  parent: number,
  above: number,
): number {
  const { compounds, child } = selector;
  let mask = 0;
  for (let i = 0; i < compounds.length; i++) {
    const linked = i === 0 || ((child[i] ? parent : above) & (1 << (i - 1))) !== 0;
    if (linked && compounds[i]!(element)) mask |= 1 << i;
  }
  return mask;
}

/** Puts the values of a compiled selector on a parsed page into `sink`, in document order. */
export function evaluateCss(css: CompiledCss, root: Document, sink: ValueSink): void {
  const elements = css.select(root);
  const { output } = css;
  for (const element of elements) {
    if (output.kind === 'attr') {
      if (Object.hasOwn(element.attribs, output.name)) sink.push(element.attribs[output.name] ?? '');
    } else {
      const value = output.kind === 'text' ? textValue(element, sink.cap) : ownTextValue(element, sink.cap);
      sink.push(value ?? sink.overflow());
    }
  }
}
