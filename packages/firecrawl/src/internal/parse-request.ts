import { checkSelector } from '@scrapejobs/content';
import { issuesToDetails } from '@scrapejobs/contracts';
import { z } from 'zod';
import { formatsSchema } from './formats.ts';
import { bookkeepingFields, invalid } from './parse.ts';
// Firecrawl's default `timeout` of a parse is a scrape's.
import { DEFAULT_TIMEOUT_MS, v2Fields as v2 } from './scrape-options.ts';
import type { AttributeQuery, FirecrawlFormat, Parsed } from './types.ts';

/** POST /v2/parse's options as this service reads them (docs/api.md §18). */
export interface ParseRequest {
  /** The formats asked for, once each (never screenshot or changeTracking). */
  formats: FirecrawlFormat[];
  /** The attributes format's selectors. */
  attributes: AttributeQuery[];
  /** Indexes in `formats` of formats the language model writes (json, summary). */
  modelFormatsAt: number[];
  onlyMainContent: boolean;
  includeTags: string[];
  excludeTags: string[];
  /** Milliseconds the conversion may take (Firecrawl's `timeout`). */
  timeout: number;
  /** A PDF's first pages to read (`pdfOptions.maxPages`, or a pdf parser's `maxPages`); null: all. */
  maxPages: number | null;
  /** What is served differently than asked. */
  warnings: string[];
}

/** Firecrawl's bound of `pdfOptions.maxPages`. */
const MAX_PDF_PAGES = 10_000;

/** CSS selectors of includeTags or excludeTags: each one css-select runs, else a 400 at it. */
const selectors = v2.includeTags.superRefine((list, ctx) =>
  list.forEach((selector, at) => {
    const problem = checkSelector(selector);
    if (problem) ctx.addIssue({ code: 'custom', path: [at], message: problem });
  }),
);

/** A scrape option that means nothing for an uploaded file: a 400 with Firecrawl's words. */
const notForParse = (what: string) =>
  z
    .unknown()
    .optional()
    .superRefine((value, ctx) => {
      if (value !== undefined) ctx.addIssue({ code: 'custom', message: `parse does not support ${what}` });
    });

/** Formats a file has no page for: Firecrawl's SDK refuses them too. */
const NOT_FOR_FILES = new Set(['screenshot', 'screenshot@fullPage', 'changeTracking', 'branding']);

const parseFormats = z
  .array(z.unknown())
  .max(20)
  .optional()
  .superRefine((items, ctx) =>
    items?.forEach((item, at) => {
      const type = typeof item === 'object' && item !== null ? (item as { type?: unknown }).type : item;
      if (typeof type === 'string' && NOT_FOR_FILES.has(type))
        ctx.addIssue({
          code: 'custom',
          path: [at],
          message: `parse does not support the ${type.replace('@fullPage', '')} format`,
        });
    }),
  )
  .pipe(formatsSchema);

const pdfMaxPages = z.int().min(1).max(MAX_PDF_PAGES);

/** `parsers`: a pdf parser's `maxPages` is honoured; other entries and options are served with a warning. */
const parsersSchema = z
  .array(
    z.union([
      z.string().max(50),
      z.looseObject({ type: z.string().max(50), maxPages: pdfMaxPages.optional() }),
    ]),
  )
  .max(10)
  .optional();

function parserWarnings(parsers: z.output<typeof parsersSchema>): string[] {
  const warnings: string[] = [];
  for (const parser of parsers ?? []) {
    const { type, ...options } = typeof parser === 'string' ? { type: parser } : parser;
    if (type !== 'pdf') warnings.push(`the parser "${type}" is not known to this service and is ignored`);
    const ignored = Object.keys(options).filter((key) => key !== 'maxPages');
    if (ignored.length > 0)
      warnings.push(`the ${type} parser's options ${ignored.join(', ')} are ignored: only maxPages is read`);
  }
  return warnings;
}

const optionsSchema = z
  .strictObject({
    formats: parseFormats,
    onlyMainContent: v2.onlyMainContent,
    includeTags: selectors,
    excludeTags: selectors,
    timeout: v2.timeout,
    parsers: parsersSchema,
    pdfOptions: z.strictObject({ maxPages: pdfMaxPages.optional() }).optional(),
    // Nothing is fetched, cached or kept for a parse: these are accepted and change nothing.
    headers: v2.headers,
    skipTlsVerification: z.boolean().optional(),
    removeBase64Images: z.boolean().optional(),
    fastMode: z.boolean().optional(),
    blockAds: z.boolean().optional(),
    maxAge: z.int().min(0).optional(),
    storeInCache: z.boolean().optional(),
    zeroDataRetention: z.boolean().optional(),
    proxy: z.enum(['basic', 'auto']).optional(),
    redactPII: v2.redactPII,
    waitFor: notForParse('waitFor'),
    actions: notForParse('actions'),
    location: notForParse('location overrides'),
    mobile: notForParse('mobile rendering'),
    minAge: notForParse('cache/index options'),
    lockdown: notForParse('cache/index options'),
    onlyCleanContent: v2.onlyCleanContent,
    ...bookkeepingFields,
  })
  .transform((options): ParseRequest => {
    const pdfParser = options.parsers?.find((p) => typeof p === 'object' && p.type === 'pdf');
    const fromParser = typeof pdfParser === 'object' ? pdfParser.maxPages : undefined;
    return {
      formats: options.formats.names,
      attributes: options.formats.attributes,
      modelFormatsAt: options.formats.modelAt,
      onlyMainContent: options.onlyMainContent,
      includeTags: options.includeTags,
      excludeTags: options.excludeTags,
      timeout: options.timeout ?? DEFAULT_TIMEOUT_MS,
      maxPages: options.pdfOptions?.maxPages ?? fromParser ?? null,
      warnings: [...options.formats.warnings, ...parserWarnings(options.parsers)],
    };
  });

/**
 * The `options` part of a POST /v2/parse form: JSON of Firecrawl's ParseOptions (absent: the
 * defaults). Problems are a 400 at `options` or `options.<field>`.
 */
export function parseParseOptions(raw: string | undefined): Parsed<ParseRequest> {
  let value: unknown = {};
  if (raw !== undefined && raw.trim() !== '') {
    try {
      value = JSON.parse(raw);
    } catch (err) {
      return invalid({ options: `is not valid JSON: ${(err as Error).message}` });
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return invalid({ options: 'must be a JSON object' });
  const parsed = optionsSchema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues.map((issue) => ({ ...issue, path: ['options', ...issue.path] }));
  return invalid(issuesToDetails(issues));
}
