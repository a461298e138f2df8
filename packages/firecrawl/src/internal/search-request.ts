import { z } from 'zod';
import { bookkeepingFields, nestedIssues, parseBody, report } from './parse.ts';
import { scrapeOptionsSchema } from './scrape-options.ts';
import type { FirecrawlVersion, Parsed, ScrapeOptions } from './types.ts';

/** Firecrawl's default search timeout (ms), and the longest taken. */
const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_TIMEOUT_MS = 300_000;

/** A search request (docs/api.md §25), with what could not be honoured as warnings. */
export interface SearchRequest {
  query: string;
  limit: number;
  lang: string | null;
  country: string | null;
  tbs: string | null;
  timeout: number;
  /** The results' pages are scraped with these, or not at all (null). */
  scrapeOptions: ScrapeOptions | null;
  warnings: string[];
}

const scrapeOptionsSchemas = { v1: scrapeOptionsSchema('v1'), v2: scrapeOptionsSchema('v2') };

const source = z.union([z.string(), z.looseObject({ type: z.string() })]);

const searchSchema = (version: FirecrawlVersion): z.ZodType<SearchRequest> =>
  z
    .strictObject({
      query: z.string().trim().min(1).max(2000),
      limit: z.int().min(1).max(100).default(5),
      lang: z.string().max(10).nullish(),
      country: z.string().max(10).nullish(),
      tbs: z.string().max(200).nullish(),
      timeout: z.int().min(1000).max(MAX_TIMEOUT_MS).default(DEFAULT_TIMEOUT_MS),
      scrapeOptions: z.unknown().optional(),
      // Accepted; what this service's engine cannot do is named in the answer's warning.
      sources: z.array(source).max(10).optional(),
      categories: z.array(source).max(10).optional(),
      location: z.string().max(200).nullish(),
      includeDomains: z.array(z.string().max(253)).max(100).optional(),
      excludeDomains: z.array(z.string().max(253)).max(100).optional(),
      highlights: z.boolean().optional(),
      domainTools: z.boolean().optional(),
      toolDetail: z.string().optional(),
      ignoreInvalidURLs: z.boolean().optional(),
      filter: z.string().max(200).nullish(),
      enterprise: z.array(z.string()).max(5).optional(),
      ...bookkeepingFields,
    })
    .transform((r, ctx): SearchRequest => {
      let scrapeOptions: ScrapeOptions | null = null;
      if (r.scrapeOptions !== undefined && r.scrapeOptions !== null) {
        const parsed = scrapeOptionsSchemas[version].safeParse(r.scrapeOptions);
        if (!parsed.success) {
          report(nestedIssues(parsed.error.issues, ['scrapeOptions']), ctx);
          return z.NEVER;
        }
        // The results are scraped only when formats are asked for.
        if (parsed.data.formats.length > 0) scrapeOptions = parsed.data;
      }
      const warnings: string[] = [];
      const sources = (r.sources ?? []).map((s) => (typeof s === 'string' ? s : s.type));
      const other = sources.filter((s) => s !== 'web');
      if (other.length > 0)
        warnings.push(`only web results are searched here; the sources ${other.join(', ')} were left out`);
      if (r.categories?.length)
        warnings.push('categories are not supported by this service and were ignored');
      if (r.location) warnings.push('location is not supported by the search engine; use country and lang');
      if (r.includeDomains?.length || r.excludeDomains?.length)
        warnings.push('includeDomains and excludeDomains are not supported; use site: in the query');
      return {
        query: r.query,
        limit: r.limit,
        lang: r.lang?.toLowerCase() ?? null,
        country: r.country?.toLowerCase() ?? null,
        tbs: r.tbs ?? null,
        timeout: r.timeout,
        scrapeOptions,
        warnings,
      };
    });

const searchSchemas = { v1: searchSchema('v1'), v2: searchSchema('v2') };

/** POST /v1/search and /v2/search bodies. */
export const parseSearchRequest = (body: unknown, version: FirecrawlVersion): Parsed<SearchRequest> =>
  parseBody(searchSchemas[version], body);

/** One search result with its page's document when it was scraped (Firecrawl's shape). */
export interface SearchHit {
  url: string;
  title: string;
  description: string;
  /** The Firecrawl document of the page (markdown, metadata, …) when scraped. */
  document?: Record<string, unknown>;
}

/** The answer: v2 groups web results under `data.web`, v1 lists them in `data`. */
export function searchBody(
  hits: readonly SearchHit[],
  version: FirecrawlVersion,
  warnings: readonly string[],
) {
  const results = hits.map((hit, i) => ({
    url: hit.url,
    title: hit.title,
    description: hit.description,
    ...(version === 'v2' && { position: i + 1 }),
    ...hit.document,
  }));
  const warning = warnings.length > 0 ? { warning: warnings.join('; ') } : {};
  return version === 'v1'
    ? { success: true as const, data: results, ...warning }
    : { success: true as const, data: { web: results }, ...warning };
}
