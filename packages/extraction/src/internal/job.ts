import { evaluateCss } from './css.ts';
import { parseHtml } from './dom.ts';
import { ExtractionError, failedOnPage } from './errors.ts';
import { type ExtractionLimits, type ResolvedLimits, resolveLimits } from './limits.ts';
import { evaluateLinks, type LinkOptions, linksNeedDom } from './links.ts';
import { PageValues } from './page.ts';
import { type CompiledExpression, compileForJob, type QueryType } from './query.ts';
import { buildRecords, type ExtractedRecord } from './records.ts';
import { evaluateRegex } from './regex.ts';
import { pushStreamed, type StreamQuery, streamValues } from './stream.ts';
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
    /** The queries for one pass over the page without a tree (stream.ts), when they all allow it. */
    readonly stream: readonly StreamQuery[] | null;
    /** The pass takes every query and no regex: its time is linear in the page's size. */
    readonly linear: boolean;
    readonly limits: ResolvedLimits;
  };
}

/**
 * Compiles a job's queries once, for evaluating many pages under `limits`. Throws ExtractionError
 * on a query that does not compile (or not within the page's time limit, at least
 * DEFAULT_COMPILE_TIME_LIMIT_MS).
 */
export function compileJob(queries: readonly QuerySpec[], limits: ExtractionLimits = {}): CompiledJob {
  const resolved = resolveLimits(limits);
  const seen = new Set<string>();
  for (const { name } of queries) {
    if (seen.has(name)) throw new ExtractionError(`query name "${name}" is used twice`);
    seen.add(name);
  }
  const compiled = queries.map((spec) => compileOne(spec, resolved));
  const needsDom = compiled.some((query) => query.type !== 'regex');
  const stream = needsDom ? streamQueries(compiled) : null;
  return {
    [brand]: {
      queries: compiled,
      needsDom,
      stream,
      linear: stream?.every((query) => query.kind !== 'regex') ?? false,
      limits: resolved,
    },
  };
}

function streamQueries(queries: readonly CompiledQuery[]): StreamQuery[] | null {
  const stream: StreamQuery[] = [];
  for (const query of queries) {
    if (query.type === 'css' && query.css.upward)
      stream.push({ kind: 'css', css: query.css, upward: query.css.upward });
    else if (query.type === 'xpath' && query.xpath.simple)
      stream.push({ kind: 'xpath', path: query.xpath.simple });
    else if (query.type === 'regex') stream.push({ kind: 'regex' });
    else return null;
  }
  return stream;
}

function compileOne(spec: QuerySpec, limits: ResolvedLimits): CompiledQuery {
  const subject = `query "${spec.name}"`;
  // A row query may give one match past the records limit (which fails the page), so XPath
  // evaluation can stop there.
  const join = spec.join === true;
  const xpathOptions = join ? {} : { maxItems: limits.maxRecords + 1 };
  const compiled = compileForJob(spec.type, spec.query, xpathOptions, subject, limits.timeLimitMs);
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
  const { queries, needsDom, stream, linear, limits } = job[brand];
  const linksNeedTree = links !== undefined && linksNeedDom(links.compiled);
  const page = new PageValues(limits);
  // Read in one pass, a page costs time linear in its size whatever its queries: it needs no
  // watchdog thread (a page's size is bounded where it is fetched; a thread pool running
  // extraction still ends a thread past the time limit).
  const unwatched = linear && links === undefined;
  const streamedAtOnce = unwatched ? streamValues(stream!, html, limits) : null;
  if (streamedAtOnce) {
    const records = evaluateRecords(queries, page, (_query, i) => {
      pushStreamed(stream![i]!, streamedAtOnce[i]!, page);
    });
    return { records, links: [] };
  }
  // One watchdog for the whole page: it interrupts css-select, fontoxpath and a backtracking
  // RegExp alike, and costs one thread start per page instead of one per query.
  return watched(page, limits, () => {
    const streamed = stream && !linksNeedTree && !unwatched ? streamValues(stream, html, limits) : null;
    const root = streamed === null && (needsDom || linksNeedTree) ? parseHtml(html) : null;
    const records = evaluateRecords(queries, page, (query, i) => {
      if (query.type === 'regex') evaluateRegex(query.regex, html, page);
      else if (streamed) pushStreamed(stream![i]!, streamed[i]!, page);
      else if (query.type === 'css') evaluateCss(query.css, root!, page);
      else evaluateXPathValues(query.xpath, root!, page);
    });
    return { records, links: links === undefined ? [] : evaluateLinks(links, html, root, page) };
  });
}

/**
 * The records of a document that is text without markup (a PDF's): its regex queries apply to
 * the text, its css and xpath queries match nothing (docs/api.md §17). Same limits as a page.
 */
export function extractText(job: CompiledJob, text: string): ExtractedRecord[] {
  const { queries, limits } = job[brand];
  const page = new PageValues(limits);
  return watched(page, limits, () =>
    evaluateRecords(queries, page, (query) => {
      if (query.type === 'regex') evaluateRegex(query.regex, text, page);
    }),
  );
}

/** `work` under the page's time limit; past it, an ExtractionError saying what the page was doing. */
function watched<T>(page: PageValues, limits: ResolvedLimits, work: () => T): T {
  try {
    return runWithTimeLimit(work, limits.timeLimitMs);
  } catch (error) {
    if (!(error instanceof TimeLimitExceeded)) throw error;
    throw new ExtractionError(
      `extraction exceeded its time limit of ${limits.timeLimitMs} ms (${page.activity})`,
      { cause: error, limit: 'time' },
    );
  }
}

/** Each query's values into `page` in the job's order (`evaluate` puts them there), then the records. */
function evaluateRecords(
  queries: readonly CompiledQuery[],
  page: PageValues,
  evaluate: (query: CompiledQuery, index: number) => void,
): ExtractedRecord[] {
  queries.forEach((query, index) => {
    page.begin(query.label, query.join);
    try {
      evaluate(query, index);
    } catch (error) {
      throw failedOnPage(query.label, error);
    }
  });
  return buildRecords(queries, page.finish());
}

/** The same job, its pages always read through the tree; for the tests that compare the two ways. */
export function withoutStream(job: CompiledJob): CompiledJob {
  return { [brand]: { ...job[brand], stream: null, linear: false } };
}

/** Whether a page of the job is read in one pass (it may still be read through the tree after all); for tests. */
export function streamedPage(job: CompiledJob, html: string): boolean {
  const { stream, limits } = job[brand];
  return stream !== null && streamValues(stream, html, limits) !== null;
}
