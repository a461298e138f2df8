import type { ProxyEntry } from '@scrapejobs/config';
import { checkSelector } from '@scrapejobs/content';
import {
  type CreateJobInput,
  createJobSchema,
  issuesToDetails,
  QUERY_TYPES,
  type UpdateJobInput,
  unknownKeyNames,
  updateJobSchema,
} from '@scrapejobs/contracts';
import { validationError } from '@scrapejobs/domain';
import { expandGlob, type QueryType } from '@scrapejobs/extraction';
import { extractSchemaProblem, NO_MODEL_MESSAGE } from '@scrapejobs/llm';
import type { z } from 'zod';
import type { QueryCompiler } from './query-compiler.ts';

export const MAX_SOURCE_URLS = 1000;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A compile failure at its path: `too expensive to compile (…)` as it is, a language error after `invalid <type>: `. */
function queryMessage(type: QueryType, message: string): string {
  if (message.startsWith('too expensive to compile')) return message;
  return `invalid ${type}: ${message.replace(/^invalid (CSS selector|XPath|regex): /, '')}`;
}

/** What a job body is checked against beyond its schema. */
export interface JobInputRules {
  /** The operator's proxies, for proxy_config. */
  proxies: readonly ProxyEntry[];
  compiler: QueryCompiler;
  /** Whether the operator named a language model (docs/api.md §24): extract and summary need one. */
  model: boolean;
}

/** A query to compile, with the path its error is reported at. */
interface Compilable {
  path: string;
  type: QueryType;
  query: string;
}

/** `q` as something to compile at `path`, when its type and length pass the schema (else the schema reports it). */
function compilable(q: Record<string, unknown>, path: string): Compilable | null {
  const type = q.type as QueryType;
  const { query } = q;
  if (!QUERY_TYPES.includes(type) || typeof query !== 'string' || query.length === 0 || query.length > 2000)
    return null;
  return { path, type, query };
}

/** The crawl's link queries to compile, and its URL patterns that are not JavaScript regular expressions. */
function crawlChecks(crawl: unknown, details: Record<string, string>): Compilable[] {
  if (!isObject(crawl)) return [];
  const follow = Array.isArray(crawl.follow) ? crawl.follow : [];
  const queries = follow.flatMap((q, i) => (isObject(q) ? [compilable(q, `crawl.follow[${i}].query`)] : []));
  for (const key of ['include', 'exclude'] as const) {
    const patterns = crawl[key];
    if (!Array.isArray(patterns)) continue;
    patterns.forEach((pattern, i) => {
      if (typeof pattern !== 'string' || pattern.length === 0 || pattern.length > 500) return;
      try {
        new RegExp(pattern);
      } catch (err) {
        const reason = (err as Error).message.replace(/^Invalid regular expression: /, '');
        details[`crawl.${key}[${i}]`] = `invalid regular expression: ${reason}`;
      }
    });
  }
  return queries.filter((q) => q !== null);
}

/** The `content` selectors that do not compile, as details at their paths. */
function contentChecks(content: unknown, details: Record<string, string>): void {
  if (!isObject(content)) return;
  for (const key of ['include_tags', 'exclude_tags'] as const) {
    const selectors = content[key];
    if (!Array.isArray(selectors)) continue;
    selectors.forEach((selector, i) => {
      if (typeof selector !== 'string' || selector.length === 0 || selector.length > 500) return;
      const problem = checkSelector(selector);
      if (problem) details[`content.${key}[${i}]`] = `invalid CSS selector: ${problem}`;
    });
  }
}

/**
 * What needs the language model (docs/api.md §24): without one, `extract` and the `summary`
 * format are a 400 saying so; with one, the schema must compile. Returns the extract's record
 * fields when the body has an extract.
 */
function modelChecks(
  raw: Record<string, unknown>,
  rules: JobInputRules,
  details: Record<string, string>,
): string[] | null {
  const { extract, formats } = raw;
  if (Array.isArray(formats) && !rules.model)
    formats.forEach((format, i) => {
      if (format === 'summary') details[`formats[${i}]`] = NO_MODEL_MESSAGE;
    });
  if (!isObject(extract)) return null;
  if (!rules.model) details.extract = NO_MODEL_MESSAGE;
  else if (isObject(extract.schema)) {
    const problem = extractSchemaProblem(extract.schema);
    if (problem) details['extract.schema'] = problem;
  }
  return isObject(extract.schema) && isObject(extract.schema.properties)
    ? Object.keys(extract.schema.properties)
    : [];
}

/**
 * Checks the schema cannot express: queries (the records' and the crawl's links') compile, names
 * are unique, globs expand, crawl patterns are regular expressions, proxies exist.
 */
async function semanticDetails(
  raw: Record<string, unknown>,
  rules: JobInputRules,
  owner: string,
): Promise<Record<string, string>> {
  const details: Record<string, string> = {};
  const { source, queries, proxy_config: proxy } = raw;
  const toCompile: Compilable[] = [];

  if (typeof source === 'string' && source.length <= 2048 && /^https?:\/\//i.test(source)) {
    const expanded = expandGlob(source, MAX_SOURCE_URLS);
    if (!expanded.ok) details.source = expanded.message;
    else if (!expanded.urls.every((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol)))
      details.source = 'must be an absolute http or https URL';
  }

  if (Array.isArray(queries)) {
    const seen = new Set<string>();
    queries.forEach((q, index) => {
      if (!isObject(q)) return;
      if (typeof q.name === 'string') {
        if (seen.has(q.name)) details[`queries[${index}].name`] = `duplicate query name "${q.name}"`;
        seen.add(q.name);
      }
      const query = compilable(q, `queries[${index}].query`);
      if (query) toCompile.push(query);
    });
  }
  toCompile.push(...crawlChecks(raw.crawl, details));
  contentChecks(raw.content, details);
  const extractFields = modelChecks(raw, rules, details);
  // A key names the job's record fields: checked here when the body has them (an update that
  // changes only the key is checked against the stored job by the service).
  const tracking = raw.change_tracking;
  if (isObject(tracking) && Array.isArray(tracking.key) && (Array.isArray(queries) || extractFields))
    Object.assign(
      details,
      unknownKeyNames(tracking.key, [
        ...(Array.isArray(queries) ? queries : []).flatMap((q) =>
          isObject(q) && typeof q.name === 'string' ? [q.name] : [],
        ),
        ...(extractFields ?? []),
      ]),
    );
  // One request, one compile budget: the crawl's link queries share it with the record queries.
  const results = await rules.compiler.compileAll(owner, toCompile);
  results.forEach((result, i) => {
    const { path, type } = toCompile[i]!;
    if (!result.ok) details[path] = queryMessage(type, result.message);
  });

  const { proxies } = rules;
  if (isObject(proxy) && proxy.enabled === true) {
    const country = typeof proxy.geo_targeting === 'string' ? proxy.geo_targeting.toUpperCase() : null;
    if (proxies.length === 0)
      details.proxy_config = 'proxies cannot be enabled: the operator has configured none';
    else if (country && !proxies.some((p) => p.country === country))
      details.proxy_config = `no proxy is configured for country ${country}`;
  }
  return details;
}

async function parseJobBody<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  rules: JobInputRules,
  owner: string,
): Promise<z.output<S>> {
  const parsed = schema.safeParse(raw);
  const details = {
    ...(isObject(raw) ? await semanticDetails(raw, rules, owner) : {}),
    ...(parsed.success ? {} : issuesToDetails(parsed.error.issues)),
  };
  if (!parsed.success || Object.keys(details).length > 0)
    throw validationError(details, 'The job configuration is invalid.');
  return parsed.data;
}

/** A POST /jobs body, checked whole; `owner` is the user asking (their share of the compile threads). */
export const parseCreateJob = (raw: unknown, rules: JobInputRules, owner: string): Promise<CreateJobInput> =>
  parseJobBody(createJobSchema, raw, rules, owner);

/** A PUT/PATCH /jobs/{id} body, checked whole. */
export const parseUpdateJob = (raw: unknown, rules: JobInputRules, owner: string): Promise<UpdateJobInput> =>
  parseJobBody(updateJobSchema, raw, rules, owner);
