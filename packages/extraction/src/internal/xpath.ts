import type { AnyNode, Document } from 'domhandler';
import fontoxpath from 'fontoxpath';
import { parseHtml, XAttr } from './dom.ts';
import type { ValueSink } from './page.ts';
import { jsonValue, textValue } from './values.ts';
import { domhandlerFacade } from './xpath-facade.ts';
import { parseSimplePath, type SimplePath, selectSimplePath } from './xpath-simple.ts';

const { evaluateXPath } = fontoxpath;

export interface CompiledXPath {
  /** The query wrapped so that atomic results come back in their XPath string form. */
  readonly expression: string;
  /** The same query for the fast path (xpath-simple.ts), when it is within its subset. */
  readonly simple: SimplePath | null;
}

export interface XPathCompileOptions {
  /** Fill fontoxpath's expression cache (default true); false for a query only being validated. */
  cache?: boolean;
  /**
   * Items the query may give at most: the expression then stops there (fontoxpath evaluates
   * lazily), so `1 to 100000000` costs no more than its first items.
   */
  maxItems?: number;
}

const EMPTY_DOCUMENT = parseHtml('');
// fn:trace() would otherwise write user data to the worker's stdout.
const silent = { trace: () => {} };
const CACHED = { logger: silent };
const UNCACHED = { logger: silent, disableCache: true };
const STATIC_ERROR = /\b(X[PQ]ST\d{4})\b[:,]?\s*(.*)/;
const POSITION = /at <>:(\d+):(\d+)/;

// `string(.)` gives atomics their XPath string form (1E21, 2026-11-22Z, true), which
// fontoxpath's conversion to JavaScript values would lose; nodes pass through unchanged.
function wrap(query: string, maxItems: number | undefined): string {
  const wrapped = `(${query}\n) ! (if (. instance of xs:anyAtomicType) then string(.) else .)`;
  return maxItems === undefined ? wrapped : `subsequence(${wrapped}, 1, ${maxItems})`;
}

/**
 * Compiles an XPath 3.1 query. Static errors (syntax, unknown function or variable) throw
 * SyntaxError. Compiling evaluates the query, then its wrapped form, on an empty document (which
 * also fills fontoxpath's expression cache unless `cache` is false); the caller bounds its time.
 */
export function compileXPath(query: string, options: XPathCompileOptions = {}): CompiledXPath {
  if (query.trim() === '') throw new SyntaxError('the expression is empty');
  const expression = wrap(query, options.maxItems);
  const settings = options.cache === false ? UNCACHED : CACHED;
  // The query alone first, so that error positions are the user's.
  for (const candidate of [query, expression]) {
    try {
      evaluateXPath(
        candidate,
        EMPTY_DOCUMENT,
        domhandlerFacade,
        null,
        evaluateXPath.ALL_RESULTS_TYPE,
        settings,
      );
    } catch (error) {
      const message = staticErrorMessage(error as Error);
      if (message !== null) throw new SyntaxError(message);
      // A dynamic error on an empty page (exactly-one(//x), say) may not happen on real pages.
    }
  }
  return { expression, simple: parseSimplePath(query) };
}

function staticErrorMessage(error: Error): string | null {
  const text = String(error.message);
  const match = STATIC_ERROR.exec(text);
  if (!match) return null;
  const position = POSITION.exec(text);
  const detail = (match[2] ?? '').split('\n')[0]?.trim() ?? '';
  const where = position ? ` at line ${position[1]}, column ${position[2]}` : '';
  return `${match[1]}: ${detail}${where}`.slice(0, 300);
}

/** Puts the string values of an XPath on a parsed page into `sink`. */
export function evaluateXPathValues(xpath: CompiledXPath, root: Document, sink: ValueSink): void {
  if (xpath.simple && evaluateWithSimplePath(xpath.simple, root, sink)) return;
  evaluateWithFontoxpath(xpath, root, sink);
}

/**
 * The fast path alone: false, having given nothing, for a tree it does not model. Exported for
 * the tests that compare the two engines.
 */
export function evaluateWithSimplePath(path: SimplePath, root: Document, sink: ValueSink): boolean {
  const selected = selectSimplePath(path, root);
  if (selected === null) return false;
  for (const item of selected) sink.push(typeof item === 'string' ? item : nodeValue(item, sink));
  return true;
}

/** evaluateXPathValues without the fast path; exported for the tests that compare the two. */
export function evaluateWithFontoxpath(xpath: CompiledXPath, root: Document, sink: ValueSink): void {
  for (const item of fontoxpathItems(xpath, root)) sink.push(itemValue(item, sink));
}

/**
 * The items an XPath gives on a parsed page, in order: strings (atomic values, and attribute
 * values on the fast path), attribute nodes (XAttr), other nodes, maps and arrays.
 */
export function selectXPathItems(xpath: CompiledXPath, root: Document): readonly unknown[] {
  return (xpath.simple && selectSimplePath(xpath.simple, root)) ?? fontoxpathItems(xpath, root);
}

function fontoxpathItems(xpath: CompiledXPath, root: Document): unknown[] {
  return evaluateXPath(
    xpath.expression,
    root,
    domhandlerFacade,
    null,
    evaluateXPath.ALL_RESULTS_TYPE,
    CACHED,
  ) as unknown[];
}

function nodeValue(node: AnyNode, sink: ValueSink): string {
  return textValue(node, sink.cap) ?? sink.overflow();
}

function itemValue(item: unknown, sink: ValueSink): string {
  if (typeof item === 'string') return item;
  if (item instanceof XAttr) return item.value;
  if (typeof item === 'object' && item !== null) {
    if ('nodeType' in item) return nodeValue(item as AnyNode, sink);
    if (item instanceof Date) return item.toISOString();
    return jsonValue(item, sink.cap) ?? sink.overflow(); // maps and arrays
  }
  return String(item);
}
