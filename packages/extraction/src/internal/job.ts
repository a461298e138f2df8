import type { Document } from 'domhandler';
import { type CompiledCss, compileCss, evaluateCss } from './css.ts';
import { parseHtml } from './dom.ts';
import { ExtractionError } from './errors.ts';
import { checkPositiveInteger, type ExtractionLimits, type ResolvedLimits, resolveLimits } from './limits.ts';
import { PageValues } from './page.ts';
import { buildRecords, type ExtractedRecord } from './records.ts';
import { type CompiledRegex, compileRegex, evaluateRegex } from './regex.ts';
import { runWithTimeLimit, TimeLimitExceeded } from './time-limit.ts';
import { type CompiledXPath, compileXPath, evaluateXPathValues } from './xpath.ts';

export type QueryType = 'xpath' | 'css' | 'regex';

export interface QuerySpec {
  name: string;
  type: QueryType;
  query: string;
  join?: boolean;
}

export type CompileResult = { ok: true } | { ok: false; message: string };

export interface CompileOptions {
  /** Milliseconds compiling one query may take (default 1000); past it the query is too expensive. */
  timeLimitMs?: number;
}

/** The compile time limit of compileQuery and of each query in compileJob. */
export const DEFAULT_COMPILE_TIME_LIMIT_MS = 1000;

/** The answer for a query whose compilation ran past `timeLimitMs` (also for a caller that had to stop it). */
export function tooExpensiveToCompile(timeLimitMs: number): { ok: false; message: string } {
  return { ok: false, message: `too expensive to compile (took longer than ${timeLimitMs} ms)` };
}

type CompiledQuery = { readonly name: string; readonly join: boolean; readonly label: string } & (
  | { readonly type: 'css'; readonly css: CompiledCss }
  | { readonly type: 'xpath'; readonly xpath: CompiledXPath }
  | { readonly type: 'regex'; readonly regex: CompiledRegex }
);

const brand: unique symbol = Symbol('CompiledJob');

export interface CompiledJob {
  readonly [brand]: {
    readonly queries: readonly CompiledQuery[];
    readonly needsDom: boolean;
    readonly limits: ResolvedLimits;
  };
}

/**
 * Checks that a query compiles in its language, within `timeLimitMs`; message is a short human
 * text for a 400 (`too expensive to compile (…)` past the limit).
 */
export function compileQuery(type: QueryType, query: string, options: CompileOptions = {}): CompileResult {
  const timeLimitMs = options.timeLimitMs ?? DEFAULT_COMPILE_TIME_LIMIT_MS;
  checkPositiveInteger('timeLimitMs', timeLimitMs);
  if (type !== 'css' && type !== 'xpath' && type !== 'regex') {
    return { ok: false, message: 'type must be one of xpath, css, regex' };
  }
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

function compileAs(
  type: QueryType,
  query: string,
  xpathOptions: Parameters<typeof compileXPath>[1],
): CompiledCss | CompiledXPath | CompiledRegex {
  if (type === 'css') return compileCss(query);
  if (type === 'xpath') return compileXPath(query, xpathOptions);
  return compileRegex(query);
}

function describe(type: QueryType, error: unknown): string {
  const label =
    type === 'css' ? 'invalid CSS selector' : type === 'xpath' ? 'invalid XPath' : 'invalid regex';
  return `${label}: ${(error as Error).message}`;
}

/**
 * Compiles a job's queries once, for evaluating many pages under `limits`. Throws ExtractionError
 * on a query that does not compile (or not within DEFAULT_COMPILE_TIME_LIMIT_MS).
 */
export function compileJob(queries: readonly QuerySpec[], limits: ExtractionLimits = {}): CompiledJob {
  const resolved = resolveLimits(limits);
  const seen = new Set<string>();
  for (const { name } of queries) {
    if (seen.has(name)) throw new ExtractionError(`query name "${name}" is used twice`);
    seen.add(name);
  }
  const compiled = queries.map((spec) => compileOne(spec, resolved));
  return {
    [brand]: {
      queries: compiled,
      needsDom: compiled.some((query) => query.type !== 'regex'),
      limits: resolved,
    },
  };
}

function compileOne(spec: QuerySpec, limits: ResolvedLimits): CompiledQuery {
  const join = spec.join === true;
  const base = { name: spec.name, join, label: `${spec.type} query "${spec.name}"` };
  if (spec.type !== 'css' && spec.type !== 'xpath' && spec.type !== 'regex') {
    throw new ExtractionError(`query "${spec.name}": unknown type "${String(spec.type)}"`);
  }
  // A row query may give one match past the records limit (which fails the page), so XPath
  // evaluation can stop there.
  const xpathOptions = join ? {} : { maxItems: limits.maxRecords + 1 };
  let compiled: CompiledCss | CompiledXPath | CompiledRegex;
  try {
    compiled = runWithTimeLimit(
      () => compileAs(spec.type, spec.query, xpathOptions),
      DEFAULT_COMPILE_TIME_LIMIT_MS,
    );
  } catch (error) {
    const message =
      error instanceof TimeLimitExceeded
        ? tooExpensiveToCompile(DEFAULT_COMPILE_TIME_LIMIT_MS).message
        : describe(spec.type, error);
    throw new ExtractionError(`query "${spec.name}": ${message}`, { cause: error });
  }
  switch (spec.type) {
    case 'css':
      return { ...base, type: 'css', css: compiled as CompiledCss };
    case 'xpath':
      return { ...base, type: 'xpath', xpath: compiled as CompiledXPath };
    case 'regex':
      return { ...base, type: 'regex', regex: compiled as CompiledRegex };
  }
}

/**
 * Extracts records from one page per docs/api.md §4 (join/row rules), within the job's
 * limits (docs/api.md §16): past any of them it throws ExtractionError naming the limit.
 */
export function extract(job: CompiledJob, html: string): ExtractedRecord[] {
  const { queries, needsDom, limits } = job[brand];
  const page = new PageValues(limits);
  try {
    // One watchdog for the whole page: it interrupts css-select, fontoxpath and a backtracking
    // RegExp alike, and costs one thread start per page instead of one per query.
    return runWithTimeLimit(
      () => extractPage(queries, needsDom ? parseHtml(html) : null, html, page),
      limits.timeLimitMs,
    );
  } catch (error) {
    if (!(error instanceof TimeLimitExceeded)) throw error;
    throw new ExtractionError(
      `extraction exceeded its time limit of ${limits.timeLimitMs} ms (${page.activity})`,
      { cause: error, limit: 'time' },
    );
  }
}

function extractPage(
  queries: readonly CompiledQuery[],
  root: Document | null,
  html: string,
  page: PageValues,
): ExtractedRecord[] {
  for (const query of queries) {
    page.begin(query.label, query.join);
    try {
      evaluate(query, html, root, page);
    } catch (error) {
      throw pageError(query, error);
    }
  }
  return buildRecords(queries, page.finish());
}

function evaluate(query: CompiledQuery, html: string, root: Document | null, page: PageValues): void {
  if (query.type === 'css') evaluateCss(query.css, root!, page);
  else if (query.type === 'xpath') evaluateXPathValues(query.xpath, root!, page);
  else evaluateRegex(query.regex, html, page);
}

function pageError(query: CompiledQuery, error: unknown): ExtractionError {
  if (error instanceof ExtractionError) return error;
  const message = String((error as Error)?.message ?? error).split('\n')[0];
  return new ExtractionError(`${query.label} failed on this page: ${message}`, { cause: error });
}
