import { checkSelector } from '@scrapejobs/content';
import { z } from 'zod';
import { type Issue, nestedIssues, report, schemaProblem } from './parse.ts';
import { qualitySchema, type ScreenshotAsk, viewportSchema } from './screenshot.ts';
import {
  type AttributeQuery,
  type ChangeTrackingOptions,
  FIRECRAWL_FORMATS,
  type FirecrawlFormat,
  type JsonOptions,
} from './types.ts';

const SUPPORTED: Readonly<Record<string, FirecrawlFormat>> = {
  markdown: 'markdown',
  html: 'html',
  rawHtml: 'rawHtml',
  links: 'links',
  screenshot: 'screenshot',
  // Screenshots here are always of the full page.
  'screenshot@fullPage': 'screenshot',
  json: 'json',
  // v1's name of the json format.
  extract: 'json',
  summary: 'summary',
  changeTracking: 'changeTracking',
  images: 'images',
  attributes: 'attributes',
};

/** Formats the operator's language model writes (docs/api.md §24). */
const MODEL_FORMATS: readonly FirecrawlFormat[] = ['json', 'summary'];

/** Firecrawl formats (v1 and v2) this service does not produce: named in the 400. */
const UNSUPPORTED = new Set([
  'branding',
  'rawBase64',
  'product',
  'menu',
  'question',
  'highlights',
  'query',
  'audio',
  'video',
  'deterministicJson',
  'content',
]);

const notSupported = (name: string) => `the format "${name}" is not supported by this service`;
const UNKNOWN = `is not a Firecrawl format: must be one of ${FIRECRAWL_FORMATS.join(', ')}`;

/** Entries `formats` may have: every format once, and room for what a client repeats. */
const MAX_FORMATS = 20;

const screenshotObject = z.strictObject({
  type: z.literal('screenshot'),
  fullPage: z.boolean().default(false),
  quality: qualitySchema.optional(),
  viewport: viewportSchema.optional(),
});

/** A JSON Schema for the language model: an object, bounded in nesting and size. */
const modelSchema = z
  .record(z.string(), z.unknown())
  .nullish()
  .superRefine((schema, ctx) => {
    const problem = schema ? schemaProblem(schema) : null;
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** `{type: "json", schema?, prompt?}` (v2), its options read as the job's extraction. */
const jsonObject = z.strictObject({
  type: z.enum(['json', 'extract']),
  schema: modelSchema,
  prompt: z.string().trim().min(1).max(10_000).nullish(),
  // The SDK's own option: pages are always data to the model here (docs/api.md §24).
  checkPromptInjection: z.boolean().optional(),
});

/** The changeTracking format's options: `{modes?, schema?, prompt?, tag?}` (v2's object, v1's `changeTrackingOptions`). */
export const changeTrackingFields = {
  modes: z
    .array(z.enum(['git-diff', 'json']))
    .max(10)
    .default([])
    .transform((modes) => [...new Set(modes)]),
  schema: modelSchema,
  prompt: z.string().trim().min(1).max(10_000).nullish(),
  tag: z.string().min(1).max(256).nullish(),
};

const changeTrackingObject = z.strictObject({ type: z.literal('changeTracking'), ...changeTrackingFields });

/** `{type: "attributes", selectors: [{selector, attribute}]}`: each selector a CSS selector this service runs. */
const attributesObject = z.strictObject({
  type: z.literal('attributes'),
  selectors: z
    .array(
      z.strictObject({
        selector: z
          .string()
          .min(1)
          .max(1000)
          .superRefine((selector, ctx) => {
            const problem = checkSelector(selector);
            if (problem) ctx.addIssue({ code: 'custom', message: problem });
          }),
        attribute: z.string().min(1).max(200),
      }),
    )
    .min(1)
    .max(20),
});

/** The changeTracking options as parsed, with Firecrawl's defaults. */
export const trackingOptions = (
  given: Partial<z.output<z.ZodObject<typeof changeTrackingFields>>> = {},
): ChangeTrackingOptions => ({
  modes: given.modes ?? [],
  schema: given.schema ?? null,
  prompt: given.prompt ?? null,
  tag: given.tag ?? null,
});

/** The formats of a request: their names once each, the json format's options, and where model formats are. */
export interface ParsedFormats {
  names: FirecrawlFormat[];
  /** The json format's schema and prompt as given in the format object (v1 gives them apart). */
  json: JsonOptions | null;
  /** Indexes in `formats` of the formats that need the language model (changeTracking's is added once its modes are known). */
  modelAt: number[];
  /** The changeTracking format's options as given in the format object; null for none or the name alone. */
  changeTracking: ChangeTrackingOptions | null;
  /** Where in `formats` the changeTracking format is; null without it. */
  changeTrackingAt: number | null;
  /** What is served a little differently than asked. */
  warnings: string[];
  /** The attributes format's selectors; empty without it. */
  attributes: AttributeQuery[];
  /** The screenshot format as asked (`screenshot@fullPage` is the full page); null without it. */
  screenshot: ScreenshotAsk | null;
}

function formatName(type: string, at: number, issues: Issue[]): FirecrawlFormat | null {
  const name = SUPPORTED[type];
  if (name !== undefined) return name;
  issues.push({ path: [at], message: UNSUPPORTED.has(type) ? notSupported(type) : UNKNOWN });
  return null;
}

function readFormat(item: unknown, at: number, issues: Issue[], out: ParsedFormats): FirecrawlFormat | null {
  if (typeof item === 'string') {
    const name = formatName(item, at, issues);
    if (name === 'changeTracking') out.changeTrackingAt = at;
    if (name === 'screenshot') out.screenshot = { fullPage: item === 'screenshot@fullPage' };
    if (name === 'attributes') {
      issues.push({
        path: [at],
        message: 'the attributes format needs its selectors: {type: "attributes", selectors}',
      });
      return null;
    }
    return name;
  }
  if (typeof item !== 'object' || item === null || typeof (item as { type?: unknown }).type !== 'string') {
    issues.push({ path: [at], message: 'must be a format name or an object with a type' });
    return null;
  }
  const type = (item as { type: string }).type;
  const name = formatName(type, at, issues);
  if (name === null) return null;
  if (name === 'json') {
    const parsed = jsonObject.safeParse(item);
    if (!parsed.success) {
      issues.push(...nestedIssues(parsed.error.issues, [at]));
      return null;
    }
    out.json = { schema: parsed.data.schema ?? null, prompt: parsed.data.prompt ?? null };
    return name;
  }
  if (name === 'changeTracking') {
    const parsed = changeTrackingObject.safeParse(item);
    if (!parsed.success) {
      issues.push(...nestedIssues(parsed.error.issues, [at]));
      return null;
    }
    out.changeTracking = trackingOptions(parsed.data);
    out.changeTrackingAt = at;
    return name;
  }
  if (name === 'attributes') {
    const parsed = attributesObject.safeParse(item);
    if (!parsed.success) {
      issues.push(...nestedIssues(parsed.error.issues, [at]));
      return null;
    }
    out.attributes.push(...parsed.data.selectors);
    return name;
  }
  if (type === 'screenshot') {
    const shot = screenshotObject.safeParse(item);
    if (shot.success) {
      out.screenshot = shot.data;
      return name;
    }
    issues.push(...nestedIssues(shot.error.issues, [at]));
    return null;
  }
  const parsed = z.strictObject({ type: z.string() }).safeParse(item);
  if (parsed.success) return name;
  issues.push(...nestedIssues(parsed.error.issues, [at]));
  return null;
}

/** Firecrawl's `formats` (default `["markdown"]`): the supported names, once each; others a 400 naming them. */
export const formatsSchema = z
  .array(z.unknown())
  .max(MAX_FORMATS)
  .default(['markdown'])
  .transform((items, ctx): ParsedFormats => {
    const issues: Issue[] = [];
    const out: ParsedFormats = {
      names: [],
      json: null,
      modelAt: [],
      changeTracking: null,
      changeTrackingAt: null,
      warnings: [],
      attributes: [],
      screenshot: null,
    };
    const names = items.map((item, at) => readFormat(item, at, issues, out));
    const screenshots = names.filter((name) => name === 'screenshot').length;
    if (screenshots > 1) issues.push({ path: [], message: 'you may only specify one screenshot format' });
    if (out.changeTrackingAt !== null && !names.includes('markdown'))
      issues.push({
        path: [out.changeTrackingAt],
        message: 'the changeTracking format compares markdown: the markdown format must be asked for as well',
      });
    if (report(issues, ctx)) return z.NEVER;
    out.names = [...new Set(names.filter((n): n is FirecrawlFormat => n !== null))];
    out.modelAt = names.flatMap((name, at) => (name && MODEL_FORMATS.includes(name) ? [at] : []));
    return out;
  });
