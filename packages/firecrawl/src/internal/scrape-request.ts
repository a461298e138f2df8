import { z } from 'zod';
import { urlField, webhookSchema } from './fields.ts';
import { bookkeepingFields, parseBody, report, unsupportedOption, zeroDataRetention } from './parse.ts';
import { finishScrapeOptions, scrapeFields } from './scrape-options.ts';
import type { BatchScrapeRequest, FirecrawlVersion, Parsed, ScrapeRequest } from './types.ts';
import { readInputUrl } from './urls.ts';

/** URLs one batch may scrape: a job's sources expand to at most this many (docs/api.md §3.4). */
const MAX_BATCH_URLS = 1000;
/** URLs a batch may list before duplicates and invalid ones are dropped. */
const MAX_LISTED_URLS = 10 * MAX_BATCH_URLS;

const scrapeSchema = (version: FirecrawlVersion): z.ZodType<ScrapeRequest> =>
  z
    .strictObject({ ...scrapeFields(version), url: urlField, ...bookkeepingFields, zeroDataRetention })
    .transform((request, ctx): ScrapeRequest => ({ ...finishScrapeOptions(request, ctx), url: request.url }));

const scrapeSchemas = { v1: scrapeSchema('v1'), v2: scrapeSchema('v2') };

/** POST /v1/scrape and /v2/scrape bodies. */
export const parseScrapeRequest = (body: unknown, version: FirecrawlVersion): Parsed<ScrapeRequest> =>
  parseBody(scrapeSchemas[version], body);

interface SortedUrls {
  urls: string[];
  invalidURLs: string[];
}

/**
 * The batch's URLs: valid ones once each, in order; an invalid one is listed with
 * `ignoreInvalidURLs`, else a 400 at `urls[i]`.
 */
function sortUrls(given: readonly string[], ignoreInvalid: boolean, ctx: z.RefinementCtx): SortedUrls {
  const urls = new Set<string>();
  const invalidURLs: string[] = [];
  given.forEach((raw, at) => {
    const read = readInputUrl(raw);
    if (read.ok) urls.add(read.url);
    else if (ignoreInvalid) invalidURLs.push(raw);
    else report([{ path: ['urls', at], message: read.message }], ctx);
  });
  if (urls.size > MAX_BATCH_URLS)
    report([{ path: ['urls'], message: `must have at most ${MAX_BATCH_URLS} distinct valid URLs` }], ctx);
  else if (urls.size === 0 && given.length > 0 && ignoreInvalid)
    report([{ path: ['urls'], message: 'has no valid URL' }], ctx);
  return { urls: [...urls], invalidURLs };
}

const batchSchema = (version: FirecrawlVersion): z.ZodType<BatchScrapeRequest> =>
  z
    .strictObject({
      ...scrapeFields(version),
      urls: z.array(z.string()).min(1).max(MAX_LISTED_URLS),
      ...bookkeepingFields,
      zeroDataRetention,
      webhook: webhookSchema,
      appendToId: unsupportedOption('appendToId'),
      // Firecrawl's defaults: v2 lists invalid URLs, v1 refuses them.
      ignoreInvalidURLs: z.boolean().default(version === 'v2'),
      maxConcurrency: z.int().positive().nullable().default(null),
    })
    .transform(
      (request, ctx): BatchScrapeRequest => ({
        ...finishScrapeOptions(request, ctx),
        ...sortUrls(request.urls, request.ignoreInvalidURLs, ctx),
        webhook: request.webhook,
        maxConcurrency: request.maxConcurrency,
      }),
    );

const batchSchemas = { v1: batchSchema('v1'), v2: batchSchema('v2') };

/** POST /v1/batch/scrape and /v2/batch/scrape bodies. */
export const parseBatchScrapeRequest = (
  body: unknown,
  version: FirecrawlVersion,
): Parsed<BatchScrapeRequest> => parseBody(batchSchemas[version], body);
