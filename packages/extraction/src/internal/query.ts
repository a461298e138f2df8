import { type CompiledCss, compileCss } from './css.ts';
import { ExtractionError } from './errors.ts';
import { checkPositiveInteger } from './limits.ts';
import { type CompiledRegex, compileRegex } from './regex.ts';
import { runWithTimeLimit, TimeLimitExceeded } from './time-limit.ts';
import { type CompiledXPath, compileXPath, type XPathCompileOptions } from './xpath.ts';

export type QueryType = 'xpath' | 'css' | 'regex';

export type CompileResult = { ok: true } | { ok: false; message: string };

export interface CompileOptions {
  /** Milliseconds compiling one query may take (default 1000); past it the query is too expensive. */
  timeLimitMs?: number;
}

/** One query compiled in its language. */
export type CompiledExpression =
  | { readonly type: 'css'; readonly css: CompiledCss }
  | { readonly type: 'xpath'; readonly xpath: CompiledXPath }
  | { readonly type: 'regex'; readonly regex: CompiledRegex };

/** The compile time limit of compileQuery and of each query in compileJob. */
export const DEFAULT_COMPILE_TIME_LIMIT_MS = 1000;

/** The answer for a query whose compilation ran past `timeLimitMs` (also for a caller that had to stop it). */
export function tooExpensiveToCompile(timeLimitMs: number): { ok: false; message: string } {
  return { ok: false, message: `too expensive to compile (took longer than ${timeLimitMs} ms)` };
}

const isQueryType = (type: unknown): type is QueryType =>
  type === 'css' || type === 'xpath' || type === 'regex';

/**
 * Checks that a query compiles in its language, within `timeLimitMs`; message is a short human
 * text for a 400 (`too expensive to compile (…)` past the limit).
 */
export function compileQuery(type: QueryType, query: string, options: CompileOptions = {}): CompileResult {
  const timeLimitMs = options.timeLimitMs ?? DEFAULT_COMPILE_TIME_LIMIT_MS;
  checkPositiveInteger('timeLimitMs', timeLimitMs);
  if (!isQueryType(type)) return { ok: false, message: 'type must be one of xpath, css, regex' };
  try {
    // A css selector is parsed in linear time and evaluates nothing: it needs no watchdog.
    if (type === 'css') compileCss(query);
    else runWithTimeLimit(() => compileAs(type, query, { cache: false }), timeLimitMs);
    return { ok: true };
  } catch (error) {
    if (error instanceof TimeLimitExceeded) return tooExpensiveToCompile(timeLimitMs);
    return { ok: false, message: describe(type, error) };
  }
}

/**
 * Compiles one query of a job within `timeLimitMs` (DEFAULT_COMPILE_TIME_LIMIT_MS, or a page's
 * time limit where that is longer: a query the API accepted must not fail a page because a busy
 * worker compiled it slowly); throws ExtractionError whose message starts with `subject`
 * (`query "name"`, `follow query 2`).
 */
export function compileForJob(
  type: QueryType,
  query: string,
  xpathOptions: XPathCompileOptions,
  subject: string,
  timeLimitMs = DEFAULT_COMPILE_TIME_LIMIT_MS,
): CompiledExpression {
  if (!isQueryType(type)) throw new ExtractionError(`${subject}: unknown type "${String(type)}"`);
  const limitMs = Math.max(DEFAULT_COMPILE_TIME_LIMIT_MS, timeLimitMs);
  try {
    return runWithTimeLimit(() => compileAs(type, query, xpathOptions), limitMs);
  } catch (error) {
    const message =
      error instanceof TimeLimitExceeded ? tooExpensiveToCompile(limitMs).message : describe(type, error);
    throw new ExtractionError(`${subject}: ${message}`, { cause: error });
  }
}

function compileAs(type: QueryType, query: string, xpathOptions: XPathCompileOptions): CompiledExpression {
  if (type === 'css') return { type, css: compileCss(query) };
  if (type === 'xpath') return { type, xpath: compileXPath(query, xpathOptions) };
  return { type, regex: compileRegex(query) };
}

function describe(type: QueryType, error: unknown): string {
  const label =
    type === 'css' ? 'invalid CSS selector' : type === 'xpath' ? 'invalid XPath' : 'invalid regex';
  return `${label}: ${(error as Error).message}`;
}
