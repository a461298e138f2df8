import { z } from 'zod';
import { contentSchema, FORMATS } from './jobs.ts';
import { documentSchema } from './results.ts';

/** The longest time a search (and the scrape of its results) may take, in ms. */
export const MAX_SEARCH_TIMEOUT_MS = 300_000;

/** POST /search body (docs/api.md §25). */
export const searchRequestSchema = z.strictObject({
  query: z.string().trim().min(1).max(2000),
  limit: z.int().min(1).max(100).default(5),
  lang: z
    .string()
    .regex(/^[a-z]{2,3}$/i, 'must be an ISO 639-1 language code such as en')
    .transform((s) => s.toLowerCase())
    .nullable()
    .default(null),
  country: z
    .string()
    .regex(/^[a-z]{2}$/i, 'must be an ISO 3166-1 alpha-2 country code such as us')
    .transform((s) => s.toLowerCase())
    .nullable()
    .default(null),
  tbs: z
    .string()
    .max(200)
    .nullable()
    .default(null)
    .describe('a time filter: qdr:h, qdr:d, qdr:w, qdr:m or qdr:y'),
  timeout: z
    .int()
    .min(1000)
    .max(MAX_SEARCH_TIMEOUT_MS)
    .default(60_000)
    .describe('ms for the search and its scrape'),
  formats: z
    .array(z.enum(FORMATS))
    .max(FORMATS.length)
    .refine((a) => new Set(a).size === a.length, 'values must be unique')
    .default([])
    .describe("the results' pages are scraped by the fleet as one batch and each result gets its document"),
  content: contentSchema.nullable().default(null),
});

export const searchResultSchema = z.object({
  url: z.string(),
  title: z.string(),
  description: z.string(),
  document: documentSchema
    .nullable()
    .describe('with formats: the page as scraped; null when it could not be (see error)'),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});

export const searchResponseSchema = z.object({
  results: z.array(searchResultSchema),
  run_id: z.string().nullable().describe("with formats: the scrape's run (its job is of origin firecrawl)"),
  warnings: z.array(z.string()),
});

export type SearchRequest = z.output<typeof searchRequestSchema>;
export type SearchResultView = z.infer<typeof searchResultSchema>;
