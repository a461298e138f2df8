import type { Document } from 'domhandler';
import { evaluateCss } from './css.ts';
import { parseHtml } from './dom.ts';
import { ExtractionError, failedOnPage } from './errors.ts';
import { type ExtractionLimits, type ResolvedLimits, resolveLimits } from './limits.ts';
import { evaluateLinks, type LinkOptions, linksNeedDom } from './links.ts';
import { PageValues } from './page.ts';
import { type CompiledExpression, compileForJob, type QueryType } from './query.ts';
import { buildRecords, type ExtractedRecord } from './records.ts';
import { evaluateRegex } from './regex.ts';
import { runWithTimeLimit, TimeLimitExceeded } from './time-limit.ts';
import { evaluateXPathValues } from './xpath.ts';

export interface QuerySpec {
  name: string;
  type: QueryType;
  query: string;
  join?: boolean;
}

type CompiledQuery = {
  readonly name: string;
  readonly join: boolean;
  readonly label: string;
} & CompiledExpression;

const brand: unique symbol = Symbol('CompiledJob');

export interface CompiledJob {
  readonly [brand]: {
    readonly queries: readonly CompiledQuery[];
    readonly needsDom: boolean;
    readonly limits: ResolvedLimits;
  };
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
  const subject = `query "${spec.name}"`;
  // A row query may give one match past the records limit (which fails the page), so XPath
  // evaluation can stop there.
  const join = spec.join === true;
  const xpathOptions = join ? {} : { maxItems: limits.maxRecords + 1 };
  const compiled = compileForJob(spec.type, spec.query, xpathOptions, subject);
  return { name: spec.name, join, label: `${spec.type} ${subject}`, ...compiled };
}

/**
 * Extracts records from one page per docs/api.md §4 (join/row rules), within the job's
 * limits (docs/api.md §16): past any of them it throws ExtractionError naming the limit.
 */
export function extract(job: CompiledJob, html: string): ExtractedRecord[] {
  return extractPage(job, html).records;
}

/** What one page gives: its records and, when asked for, the URLs to follow from it. */
export interface PageExtraction {
  records: ExtractedRecord[];
  links: string[];
}

/**
 * Extracts a page's records as `extract` does and, given `links`, the URLs its link queries give
 * (evaluateLinks), from one parse of the page under one time limit (the job's) that covers
 * every query and every `accept` call. Link queries do not count toward the job's other limits.
 */
export function extractPage(job: CompiledJob, html: string, links?: LinkOptions): PageExtraction {
  const { queries, needsDom, limits } = job[brand];
  const parse = needsDom || (links !== undefined && linksNeedDom(links.compiled));
  const page = new PageValues(limits);
  try {
    // One watchdog for the whole page: it interrupts css-select, fontoxpath and a backtracking
    // RegExp alike, and costs one thread start per page instead of one per query.
    return runWithTimeLimit(() => {
      const root = parse ? parseHtml(html) : null;
      const records = evaluateRecords(queries, root, html, page);
      return { records, links: links === undefined ? [] : evaluateLinks(links, html, root, page) };
    }, limits.timeLimitMs);
  } catch (error) {
    if (!(error instanceof TimeLimitExceeded)) throw error;
    throw new ExtractionError(
      `extraction exceeded its time limit of ${limits.timeLimitMs} ms (${page.activity})`,
      { cause: error, limit: 'time' },
    );
  }
}

function evaluateRecords(
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
      throw failedOnPage(query.label, error);
    }
  }
  return buildRecords(queries, page.finish());
}

function evaluate(query: CompiledQuery, html: string, root: Document | null, page: PageValues): void {
  if (query.type === 'css') evaluateCss(query.css, root!, page);
  else if (query.type === 'xpath') evaluateXPathValues(query.xpath, root!, page);
  else evaluateRegex(query.regex, html, page);
}
