import type { CreateJobInput } from '@scrapejobs/contracts';
import { z } from 'zod';
import { batchScrapeJob } from './jobs.ts';
import { bookkeepingFields, nestedIssues, parseBody, report, schemaProblem } from './parse.ts';
import { scrapeOptionsSchema } from './scrape-options.ts';
import type { FirecrawlVersion, JsonOptions, Parsed, ScrapeOptions } from './types.ts';

/** Pages one extraction reads at most, its wildcards' pages included. */
export const EXTRACT_MAX_PAGES = 100;
/** URLs one extraction may name. */
const MAX_URLS = 100;

export interface ExtractRequest {
  /** The URLs as given, a trailing `/*` removed from those that had one. */
  urls: string[];
  /** The URLs that ended in `/*`: their sites' pages under that path are read too (found as a map finds them). */
  wildcards: string[];
  json: JsonOptions;
  scrapeOptions: ScrapeOptions;
  warnings: string[];
}

const scrapeOptionsSchemas = { v1: scrapeOptionsSchema('v1'), v2: scrapeOptionsSchema('v2') };

const extractSchema = (version: FirecrawlVersion): z.ZodType<ExtractRequest> =>
  z
    .strictObject({
      urls: z.array(z.string().min(1).max(2048)).min(1).max(MAX_URLS),
      prompt: z.string().trim().min(1).max(10_000).nullish(),
      schema: z.record(z.string(), z.unknown()).nullish(),
      systemPrompt: z.string().max(10_000).nullish(),
      scrapeOptions: z.unknown().optional(),
      allowExternalLinks: z.boolean().optional(),
      enableWebSearch: z.boolean().optional(),
      showSources: z.boolean().optional(),
      ignoreInvalidURLs: z.boolean().optional(),
      agent: z.unknown().optional(),
      webhook: z.unknown().optional(),
      ...bookkeepingFields,
    })
    .transform((r, ctx): ExtractRequest => {
      const warnings: string[] = [];
      const prompt = [r.systemPrompt, r.prompt].filter((p) => p?.trim()).join('\n') || null;
      const schema = r.schema ?? null;
      if (schema === null && prompt === null)
        ctx.addIssue({
          code: 'custom',
          path: ['prompt'],
          message: 'an extraction needs a prompt, a schema, or both',
        });
      const problem = schema && schemaProblem(schema);
      if (problem) ctx.addIssue({ code: 'custom', path: ['schema'], message: problem });
      const urls: string[] = [];
      const wildcards: string[] = [];
      r.urls.forEach((raw, i) => {
        const wild = raw.endsWith('/*');
        const url = wild ? raw.slice(0, -1) : raw;
        if (!/^https?:\/\/[^/?#\s]+/i.test(url) || !URL.canParse(url))
          ctx.addIssue({
            code: 'custom',
            path: ['urls', i],
            message: 'must be an absolute http or https URL',
          });
        else (wild ? wildcards : urls).push(url);
      });
      let scrapeOptions = scrapeOptionsSchemas[version].parse(null);
      if (r.scrapeOptions !== undefined && r.scrapeOptions !== null) {
        const parsed = scrapeOptionsSchemas[version].safeParse(r.scrapeOptions);
        if (!parsed.success) report(nestedIssues(parsed.error.issues, ['scrapeOptions']), ctx);
        else scrapeOptions = parsed.data;
      }
      if (r.enableWebSearch) warnings.push('enableWebSearch is not supported: only the URLs given are read');
      if (r.agent !== undefined) warnings.push('agent options are not supported and were ignored');
      return {
        urls,
        wildcards,
        json: { schema, prompt },
        scrapeOptions: { ...scrapeOptions, formats: ['json'], json: { schema, prompt } },
        warnings,
      };
    });

const extractSchemas = { v1: extractSchema('v1'), v2: extractSchema('v2') };

/** POST /v1/extract and /v2/extract bodies. */
export const parseExtractRequest = (body: unknown, version: FirecrawlVersion): Parsed<ExtractRequest> =>
  parseBody(extractSchemas[version], body);

/**
 * The job of an extraction: a batch of its URLs with the language model's extraction; with
 * wildcards, a crawl from them (sitemap and links, under their paths) up to EXTRACT_MAX_PAGES.
 */
export function extractJob(request: ExtractRequest): { job: CreateJobInput; urls: string[] } {
  const seeds = [...new Set([...request.urls, ...request.wildcards])];
  const { job } = batchScrapeJob({
    ...request.scrapeOptions,
    urls: seeds,
    invalidURLs: [],
    webhook: null,
    maxConcurrency: null,
  });
  const named = { ...job, name: `Firecrawl extract ${seeds[0] ?? ''}`.slice(0, 200).trim() };
  if (request.wildcards.length === 0) return { job: named, urls: seeds };
  return {
    job: {
      ...named,
      crawl: {
        follow: [{ type: 'css', query: 'a::attr(href)' }],
        max_depth: 3,
        max_pages: EXTRACT_MAX_PAGES,
        same_origin: false,
        include: request.wildcards.map((w) => `^${escapeRegex(w)}`),
        exclude: [],
        respect_robots_txt: true,
        sitemap: true,
      },
    },
    urls: seeds,
  };
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The objects of an extraction's pages as one (Firecrawl answers one object): an array property
 * gathers every page's items once each, any other property takes the first page's value that is
 * not null.
 */
export function mergeExtracted(objects: readonly Record<string, unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const seen = new Map<string, Set<string>>();
  for (const object of objects)
    for (const [key, value] of Object.entries(object)) {
      if (Array.isArray(value)) {
        if (out[key] === undefined || out[key] === null) out[key] = [];
        const items = out[key];
        if (!Array.isArray(items)) continue;
        const keys = seen.get(key) ?? new Set<string>();
        seen.set(key, keys);
        for (const item of value) {
          const k = JSON.stringify(item);
          if (!keys.has(k)) {
            keys.add(k);
            items.push(item);
          }
        }
      } else if ((out[key] === undefined || out[key] === null) && value !== undefined) out[key] = value;
    }
  return out;
}
