import type { AnyNode, Document } from 'domhandler';
import fontoxpath from 'fontoxpath';
import { collapseWhitespace, parseHtml, textContent, XAttr } from './dom.ts';
import { runWithTimeLimit } from './time-limit.ts';
import { domhandlerFacade } from './xpath-facade.ts';
import { evaluateSimplePath, parseSimplePath, type SimplePath } from './xpath-simple.ts';

const { evaluateXPath } = fontoxpath;

export interface CompiledXPath {
  /** The query wrapped so that atomic results come back in their XPath string form. */
  readonly expression: string;
  /** The same query for the fast path (xpath-simple.ts), when it is within its subset. */
  readonly simple: SimplePath | null;
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
function wrap(query: string): string {
  return `(${query}\n) ! (if (. instance of xs:anyAtomicType) then string(.) else .)`;
}

/**
 * Compiles an XPath 3.1 query. Static errors (syntax, unknown function or variable) throw
 * SyntaxError; compiling is an evaluation on an empty document, under `timeLimitMs`, which
 * also fills fontoxpath's expression cache unless `cache` is false.
 */
export function compileXPath(query: string, timeLimitMs: number, cache = true): CompiledXPath {
  if (query.trim() === '') throw new SyntaxError('the expression is empty');
  const expression = wrap(query);
  for (const candidate of [query, expression]) {
    try {
      runWithTimeLimit(
        () =>
          evaluateXPath(
            candidate,
            EMPTY_DOCUMENT,
            domhandlerFacade,
            null,
            evaluateXPath.ALL_RESULTS_TYPE,
            cache ? CACHED : UNCACHED,
          ),
        timeLimitMs,
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
  if (!match) return error.name === 'TimeLimitExceeded' ? `evaluating took too long (${text})` : null;
  const position = POSITION.exec(text);
  const detail = (match[2] ?? '').split('\n')[0]?.trim() ?? '';
  const where = position ? ` at line ${position[1]}, column ${position[2]}` : '';
  return `${match[1]}: ${detail}${where}`.slice(0, 300);
}

/** The string values of an XPath on a parsed page, stopped after `timeLimitMs`. */
export function evaluateXPathValues(xpath: CompiledXPath, root: Document, timeLimitMs: number): string[] {
  const fast = xpath.simple && evaluateSimplePath(xpath.simple, root);
  return fast ?? evaluateWithFontoxpath(xpath, root, timeLimitMs);
}

/** evaluateXPathValues without the fast path; exported for the tests that compare the two. */
export function evaluateWithFontoxpath(xpath: CompiledXPath, root: Document, timeLimitMs: number): string[] {
  const items = runWithTimeLimit(
    () =>
      evaluateXPath(xpath.expression, root, domhandlerFacade, null, evaluateXPath.ALL_RESULTS_TYPE, CACHED),
    timeLimitMs,
  ) as unknown[];
  return items.map(itemToString);
}

function itemToString(item: unknown): string {
  if (typeof item === 'string') return item;
  if (item instanceof XAttr) return item.value;
  if (typeof item === 'object' && item !== null) {
    if ('nodeType' in item) return collapseWhitespace(textContent(item as AnyNode));
    if (item instanceof Date) return item.toISOString();
    return JSON.stringify(item); // maps and arrays
  }
  return String(item);
}
