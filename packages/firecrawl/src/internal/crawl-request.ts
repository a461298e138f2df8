import { z } from 'zod';
import { pathPatternsField, urlField, urlPatterns, webhookSchema } from './fields.ts';
import { bookkeepingFields, parseBody, report, unsupportedOption, zeroDataRetention } from './parse.ts';
import { depthGuard, hostGuard, MAX_PATTERNS, pathDepth, seedPathGuard } from './path-patterns.ts';
import { scrapeOptionsSchema } from './scrape-options.ts';
import type { CrawlRequest, FirecrawlVersion, Parsed, SitemapMode } from './types.ts';

/** Firecrawl's default `limit`, and the most pages a job fetches (docs/api.md §11). */
const DEFAULT_CRAWL_LIMIT = 10_000;
const MAX_CRAWL_LIMIT = 100_000;
/** Link hops when `maxDiscoveryDepth` is not given (Firecrawl has no bound), and the most a job takes. */
const DEFAULT_DISCOVERY_DEPTH = 10;
const MAX_DISCOVERY_DEPTH = 50;

const optionalInt = (min: number) => z.int().min(min).nullable().optional();

const sharedFields = {
  url: urlField,
  ...bookkeepingFields,
  zeroDataRetention,
  includePaths: pathPatternsField,
  excludePaths: pathPatternsField,
  regexOnFullURL: z.boolean().default(false),
  maxDiscoveryDepth: optionalInt(0),
  limit: optionalInt(1),
  crawlEntireDomain: z.boolean().optional(),
  allowExternalLinks: z.boolean().default(false),
  allowSubdomains: z.boolean().default(false),
  ignoreRobotsTxt: z.boolean().default(false),
  ignoreQueryParameters: z.boolean().default(false),
  deduplicateSimilarURLs: z.boolean().optional(),
  // Seconds between requests, at most 60 as in Firecrawl.
  delay: z.number().positive().max(60).nullable().optional(),
  maxConcurrency: optionalInt(1),
  webhook: webhookSchema,
};

const v2Fields = {
  ...sharedFields,
  sitemap: z.enum(['include', 'skip', 'only']).default('include'),
  robotsUserAgent: unsupportedOption('robotsUserAgent'),
  prompt: unsupportedOption('prompt'),
  scrapeOptions: scrapeOptionsSchema('v2'),
};

const v1Fields = {
  ...sharedFields,
  maxDepth: z.int().min(0).default(10),
  allowBackwardLinks: z.boolean().default(false),
  ignoreSitemap: z.boolean().default(false),
  scrapeOptions: scrapeOptionsSchema('v1'),
};

type Shared = z.output<z.ZodObject<typeof sharedFields>> & {
  scrapeOptions: CrawlRequest['scrapeOptions'];
};

interface VersionParts {
  sitemap: SitemapMode;
  crawlEntireDomain: boolean;
  /** v1 `maxDepth`, or null. */
  maxPathDepth: number | null;
}

/** The exclude patterns that keep a crawl where Firecrawl keeps it (see path-patterns.ts). */
function guards(request: Shared, parts: VersionParts): string[] {
  const out: (string | null)[] = [];
  if (!parts.crawlEntireDomain) out.push(seedPathGuard(request.url));
  if (!request.allowExternalLinks) out.push(hostGuard(request.url, request.allowSubdomains));
  if (parts.maxPathDepth !== null) out.push(depthGuard(pathDepth(request.url) + parts.maxPathDepth));
  return out.filter((g): g is string => g !== null);
}

function finishCrawl(request: Shared, parts: VersionParts, ctx: z.RefinementCtx): CrawlRequest {
  const include = urlPatterns(request.includePaths, 'includePaths', request.regexOnFullURL, ctx);
  const exclude = [
    ...urlPatterns(request.excludePaths, 'excludePaths', request.regexOnFullURL, ctx),
    ...guards(request, parts),
  ];
  if (include.length > MAX_PATTERNS)
    report([{ path: ['includePaths'], message: `must have at most ${MAX_PATTERNS} items` }], ctx);
  if (exclude.length > MAX_PATTERNS) {
    const room = MAX_PATTERNS - (exclude.length - request.excludePaths.length);
    report([{ path: ['excludePaths'], message: `must have at most ${room} items with these options` }], ctx);
  }
  const depth = request.maxDiscoveryDepth ?? DEFAULT_DISCOVERY_DEPTH;
  return {
    url: request.url,
    limit: Math.min(request.limit ?? DEFAULT_CRAWL_LIMIT, MAX_CRAWL_LIMIT),
    maxDiscoveryDepth: Math.min(depth, MAX_DISCOVERY_DEPTH),
    maxPathDepth: parts.maxPathDepth,
    include,
    exclude,
    sitemap: parts.sitemap,
    crawlEntireDomain: parts.crawlEntireDomain,
    allowExternalLinks: request.allowExternalLinks,
    allowSubdomains: request.allowSubdomains,
    ignoreRobotsTxt: request.ignoreRobotsTxt,
    ignoreQueryParameters: request.ignoreQueryParameters,
    delay: request.delay ?? null,
    maxConcurrency: request.maxConcurrency ?? null,
    scrapeOptions: request.scrapeOptions,
    webhook: request.webhook,
  };
}

const v2Schema = z
  .strictObject(v2Fields)
  .transform((request, ctx) =>
    finishCrawl(
      request,
      { sitemap: request.sitemap, crawlEntireDomain: request.crawlEntireDomain ?? false, maxPathDepth: null },
      ctx,
    ),
  );

const v1Schema = z.strictObject(v1Fields).transform((request, ctx) => {
  // v1's maxDepth counts path segments below the seed's; the seed itself must fit in it.
  if (pathDepth(request.url) > request.maxDepth)
    report([{ path: ['url'], message: 'URL depth exceeds the specified maxDepth' }], ctx);
  return finishCrawl(
    request,
    {
      sitemap: request.ignoreSitemap ? 'skip' : 'include',
      crawlEntireDomain: request.crawlEntireDomain ?? request.allowBackwardLinks,
      maxPathDepth: request.maxDepth,
    },
    ctx,
  );
});

/** POST /v1/crawl and /v2/crawl bodies. */
export const parseCrawlRequest = (body: unknown, version: FirecrawlVersion): Parsed<CrawlRequest> =>
  parseBody(version === 'v1' ? v1Schema : v2Schema, body);
