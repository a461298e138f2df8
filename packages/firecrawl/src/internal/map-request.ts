import { z } from 'zod';
import { headersSchema, locationSchema, readFetchSettings } from './fetch-settings.ts';
import { pathPatternsField, urlField, urlPatterns } from './fields.ts';
import { bookkeepingFields, parseBody, report, unsupportedOption } from './parse.ts';
import { hostGuard, MAX_PATTERNS, seedPathGuard } from './path-patterns.ts';
import type { FirecrawlVersion, MapRequest, Parsed, SitemapMode } from './types.ts';

const DEFAULT_MAP_LIMIT = 5000;
const MAX_MAP_LIMIT = 100_000;
const MAX_MAP_TIMEOUT_MS = 300_000;

const sharedFields = {
  url: urlField,
  ...bookkeepingFields,
  search: z.string().max(1000).nullable().optional(),
  includeSubdomains: z.boolean().default(true),
  ignoreQueryParameters: z.boolean().default(true),
  limit: z.int().min(1).max(MAX_MAP_LIMIT).default(DEFAULT_MAP_LIMIT),
  timeout: z.number().positive().max(MAX_MAP_TIMEOUT_MS).nullable().optional(),
  includePaths: pathPatternsField,
  excludePaths: pathPatternsField,
  regexOnFullURL: z.boolean().default(false),
  allowExternalLinks: z.boolean().default(false),
  allowSubdomains: z.boolean().optional(),
  ignoreRobotsTxt: z.boolean().default(false),
  filterByPath: z.boolean().default(true),
  location: locationSchema,
  headers: headersSchema,
  // Accepted without effect: a map is a shallow crawl here, not a look-up in an index.
  maxDiscoveryDepth: z.number().nullable().optional(),
  crawlEntireDomain: z.boolean().optional(),
  deduplicateSimilarURLs: z.boolean().optional(),
  delay: z.number().positive().max(60).nullable().optional(),
  useIndex: z.boolean().optional(),
  ignoreCache: z.boolean().optional(),
  useMock: unsupportedOption('useMock'),
  robotsUserAgent: unsupportedOption('robotsUserAgent'),
  threatProtection: unsupportedOption('threatProtection'),
};

type Shared = z.output<z.ZodObject<typeof sharedFields>>;

function finishMap(request: Shared, sitemap: SitemapMode, ctx: z.RefinementCtx): MapRequest {
  const include = urlPatterns(request.includePaths, 'includePaths', request.regexOnFullURL, ctx);
  const includeSubdomains = request.includeSubdomains || request.allowSubdomains === true;
  // Like Firecrawl: links on the seed's domain and, with filterByPath, under its path.
  const guards = request.allowExternalLinks
    ? []
    : [request.filterByPath ? seedPathGuard(request.url) : null, hostGuard(request.url, includeSubdomains)];
  const exclude = [
    ...urlPatterns(request.excludePaths, 'excludePaths', request.regexOnFullURL, ctx),
    ...guards.filter((g): g is string => g !== null),
  ];
  if (include.length > MAX_PATTERNS)
    report([{ path: ['includePaths'], message: `must have at most ${MAX_PATTERNS} items` }], ctx);
  if (exclude.length > MAX_PATTERNS)
    report([{ path: ['excludePaths'], message: `must have at most ${MAX_PATTERNS - 2} items` }], ctx);
  const fetch = readFetchSettings({ headers: request.headers, location: request.location });
  report(fetch.issues, ctx);
  return {
    url: request.url,
    search: request.search?.trim() || null,
    sitemap,
    includeSubdomains,
    ignoreQueryParameters: request.ignoreQueryParameters,
    limit: request.limit,
    timeout: request.timeout ?? null,
    include,
    exclude,
    allowExternalLinks: request.allowExternalLinks,
    filterByPath: request.filterByPath,
    ignoreRobotsTxt: request.ignoreRobotsTxt,
    fetch: fetch.settings,
  };
}

const v2Schema = z
  .strictObject({ ...sharedFields, sitemap: z.enum(['include', 'skip', 'only']).default('include') })
  .transform((request, ctx) => finishMap(request, request.sitemap, ctx));

const v1Schema = z
  .strictObject({
    ...sharedFields,
    ignoreSitemap: z.boolean().default(false),
    sitemapOnly: z.boolean().default(false),
    // v1 crawler options a map accepts and does not use.
    maxDepth: z.number().optional(),
    allowBackwardLinks: z.boolean().optional(),
  })
  .transform((request, ctx) =>
    finishMap(request, request.sitemapOnly ? 'only' : request.ignoreSitemap ? 'skip' : 'include', ctx),
  );

/** POST /v1/map and /v2/map bodies. */
export const parseMapRequest = (body: unknown, version: FirecrawlVersion): Parsed<MapRequest> =>
  parseBody(version === 'v1' ? v1Schema : v2Schema, body);
