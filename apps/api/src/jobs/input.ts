import type { ProxyEntry } from '@scrapejobs/config';
import {
  type CreateJobInput,
  createJobSchema,
  issuesToDetails,
  QUERY_TYPES,
  type UpdateJobInput,
  updateJobSchema,
} from '@scrapejobs/contracts';
import { compileQuery, expandGlob } from '@scrapejobs/extraction';
import type { z } from 'zod';
import { validationError } from '../errors.ts';

export const MAX_SOURCE_URLS = 1000;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks the schema cannot express: queries compile, names are unique, globs expand, proxies exist. */
function semanticDetails(
  raw: Record<string, unknown>,
  proxies: readonly ProxyEntry[],
): Record<string, string> {
  const details: Record<string, string> = {};
  const { source, queries, proxy_config: proxy } = raw;

  if (typeof source === 'string' && source.length <= 2048 && /^https?:\/\//i.test(source)) {
    const expanded = expandGlob(source, MAX_SOURCE_URLS);
    if (!expanded.ok) details.source = expanded.message;
    else if (!expanded.urls.every((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol)))
      details.source = 'must be an absolute http or https URL';
  }

  if (Array.isArray(queries)) {
    const seen = new Set<string>();
    queries.forEach((q, i) => {
      if (!isObject(q)) return;
      if (typeof q.name === 'string') {
        if (seen.has(q.name)) details[`queries[${i}].name`] = `duplicate query name "${q.name}"`;
        seen.add(q.name);
      }
      const type = q.type as (typeof QUERY_TYPES)[number];
      if (
        QUERY_TYPES.includes(type) &&
        typeof q.query === 'string' &&
        q.query.length > 0 &&
        q.query.length <= 2000
      ) {
        const compiled = compileQuery(type, q.query);
        if (!compiled.ok) details[`queries[${i}].query`] = `invalid ${type}: ${compiled.message}`;
      }
    });
  }

  if (isObject(proxy) && proxy.enabled === true) {
    const country = typeof proxy.geo_targeting === 'string' ? proxy.geo_targeting.toUpperCase() : null;
    if (proxies.length === 0)
      details.proxy_config = 'proxies cannot be enabled: the operator has configured none';
    else if (country && !proxies.some((p) => p.country === country))
      details.proxy_config = `no proxy is configured for country ${country}`;
  }
  return details;
}

function parseJobBody<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  proxies: readonly ProxyEntry[],
): z.output<S> {
  const parsed = schema.safeParse(raw);
  const details = {
    ...(isObject(raw) ? semanticDetails(raw, proxies) : {}),
    ...(parsed.success ? {} : issuesToDetails(parsed.error.issues)),
  };
  if (!parsed.success || Object.keys(details).length > 0)
    throw validationError(details, 'The job configuration is invalid.');
  return parsed.data;
}

export const parseCreateJob = (raw: unknown, proxies: readonly ProxyEntry[]): CreateJobInput =>
  parseJobBody(createJobSchema, raw, proxies);

export const parseUpdateJob = (raw: unknown, proxies: readonly ProxyEntry[]): UpdateJobInput =>
  parseJobBody(updateJobSchema, raw, proxies);
