import type { Document } from 'domhandler';
import { type CompiledCss, compileCss, evaluateCss } from './css.ts';
import { parseHtml } from './dom.ts';
import { ExtractionError } from './errors.ts';
import { buildRecords, type ExtractedRecord } from './records.ts';
import { type CompiledRegex, compileRegex, evaluateRegex } from './regex.ts';
import { TimeLimitExceeded } from './time-limit.ts';
import { type CompiledXPath, compileXPath, evaluateXPathValues } from './xpath.ts';

export type QueryType = 'xpath' | 'css' | 'regex';

export interface QuerySpec {
  name: string;
  type: QueryType;
  query: string;
  join?: boolean;
}

export type CompileResult = { ok: true } | { ok: false; message: string };

/** Per-query limits on one page; a query past its limit fails the page with ExtractionError. */
export interface ExtractionLimits {
  /** Milliseconds one regex query may run on one page (default 1000). */
  regexTimeLimitMs?: number;
  /** Milliseconds one XPath query may run on one page (default 5000). */
  xpathTimeLimitMs?: number;
}

const DEFAULT_REGEX_LIMIT_MS = 1000;
const DEFAULT_XPATH_LIMIT_MS = 5000;
// Compiling an XPath evaluates it on an empty page; one that cannot finish that is rejected.
const XPATH_COMPILE_LIMIT_MS = 1000;

type CompiledQuery =
  | { name: string; join: boolean; type: 'css'; css: CompiledCss }
  | { name: string; join: boolean; type: 'xpath'; xpath: CompiledXPath }
  | { name: string; join: boolean; type: 'regex'; regex: CompiledRegex };

const brand: unique symbol = Symbol('CompiledJob');

export interface CompiledJob {
  readonly [brand]: {
    readonly queries: readonly CompiledQuery[];
    readonly needsDom: boolean;
    readonly regexTimeLimitMs: number;
    readonly xpathTimeLimitMs: number;
  };
}

/** Checks that a query compiles in its language; message is a short human text for a 400. */
export function compileQuery(type: QueryType, query: string): CompileResult {
  try {
    if (type === 'css') compileCss(query);
    else if (type === 'xpath') compileXPath(query, XPATH_COMPILE_LIMIT_MS, false);
    else if (type === 'regex') compileRegex(query);
    else return { ok: false, message: 'type must be one of xpath, css, regex' };
    return { ok: true };
  } catch (error) {
    return { ok: false, message: describe(type, error) };
  }
}

function describe(type: QueryType, error: unknown): string {
  const label =
    type === 'css' ? 'invalid CSS selector' : type === 'xpath' ? 'invalid XPath' : 'invalid regex';
  return `${label}: ${(error as Error).message}`;
}

/** Compiles a job's queries once, for evaluating many pages. Throws ExtractionError on an uncompilable query. */
export function compileJob(queries: readonly QuerySpec[], limits: ExtractionLimits = {}): CompiledJob {
  const seen = new Set<string>();
  for (const { name } of queries) {
    if (seen.has(name)) throw new ExtractionError(`query name "${name}" is used twice`);
    seen.add(name);
  }
  const compiled = queries.map(compileOne);
  return {
    [brand]: {
      queries: compiled,
      needsDom: compiled.some((query) => query.type !== 'regex'),
      regexTimeLimitMs: limits.regexTimeLimitMs ?? DEFAULT_REGEX_LIMIT_MS,
      xpathTimeLimitMs: limits.xpathTimeLimitMs ?? DEFAULT_XPATH_LIMIT_MS,
    },
  };
}

function compileOne(spec: QuerySpec): CompiledQuery {
  const base = { name: spec.name, join: spec.join === true };
  try {
    switch (spec.type) {
      case 'css':
        return { ...base, type: 'css', css: compileCss(spec.query) };
      case 'xpath':
        return { ...base, type: 'xpath', xpath: compileXPath(spec.query, XPATH_COMPILE_LIMIT_MS) };
      case 'regex':
        return { ...base, type: 'regex', regex: compileRegex(spec.query) };
    }
  } catch (error) {
    throw new ExtractionError(`query "${spec.name}": ${describe(spec.type, error)}`, { cause: error });
  }
  throw new ExtractionError(`query "${spec.name}": unknown type "${String(spec.type)}"`);
}

/** Extracts records from one page per CONTRACT section 4 (join/row rules). */
export function extract(job: CompiledJob, html: string): ExtractedRecord[] {
  const { queries, needsDom, regexTimeLimitMs, xpathTimeLimitMs } = job[brand];
  const root = needsDom ? parseHtml(html) : null;
  const matches = queries.map((query) => {
    try {
      return evaluate(query, html, root, regexTimeLimitMs, xpathTimeLimitMs);
    } catch (error) {
      throw pageError(query, error);
    }
  });
  return buildRecords(queries, matches);
}

function evaluate(
  query: CompiledQuery,
  html: string,
  root: Document | null,
  regexTimeLimitMs: number,
  xpathTimeLimitMs: number,
): string[] {
  switch (query.type) {
    case 'css':
      return evaluateCss(query.css, root!);
    case 'xpath':
      return evaluateXPathValues(query.xpath, root!, xpathTimeLimitMs);
    case 'regex':
      return evaluateRegex(query.regex, html, regexTimeLimitMs);
  }
}

function pageError(query: CompiledQuery, error: unknown): ExtractionError {
  if (error instanceof TimeLimitExceeded) {
    return new ExtractionError(
      `${query.type} query "${query.name}" exceeded its time limit (${error.message})`,
      {
        cause: error,
      },
    );
  }
  const message = String((error as Error)?.message ?? error).split('\n')[0];
  return new ExtractionError(`${query.type} query "${query.name}" failed on this page: ${message}`, {
    cause: error,
  });
}
