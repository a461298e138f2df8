import { z } from 'zod';
import { actionsSchema, planRender } from './actions.ts';
import { headersSchema, locationSchema, readFetchSettings } from './fetch-settings.ts';
import { changeTrackingFields, formatsSchema, trackingOptions } from './formats.ts';
import {
  bookkeepingFields,
  type Issue,
  onlyBoolean,
  report,
  schemaProblem,
  unsupportedOption,
} from './parse.ts';
import { screenshotOptions } from './screenshot.ts';
import type { ChangeTrackingOptions, FirecrawlVersion, JsonOptions, ScrapeOptions } from './types.ts';

/** Default `timeout` of a scrape (ms), raised to twice its waits when those are longer. */
export const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_TIMEOUT_MS = 300_000;

const PROXIES = ['basic', 'auto', 'stealth', 'enhanced'];

/** v2's default `maxAge` (Firecrawl's: two days); v1's is 0, always fetched. */
const V2_MAX_AGE_MS = 2 * 24 * 3_600_000;

/** Firecrawl's `proxy`: `basic` and `auto` fetch as this service does; `stealth` and `enhanced` are served so too. */
const proxySchema = z
  .string()
  .optional()
  .refine((proxy) => proxy === undefined || PROXIES.includes(proxy), `must be one of ${PROXIES.join(', ')}`);

const PARSER_TYPES = ['pdf', 'image'];

const tags = z.array(z.string().min(1).max(500)).max(50).default([]);

/** v2 `parsers`: PDFs are always parsed here; other entries and their options are served with a warning. */
const parsersSchema = z
  .array(z.union([z.string().max(50), z.looseObject({ type: z.string().max(50) })]))
  .max(10)
  .optional();

/** What the parsers asked for that this service does differently. */
function parserWarnings(parsers: z.output<typeof parsersSchema>): string[] {
  if (parsers === undefined) return [];
  const types = parsers.map((p) => (typeof p === 'string' ? p : p.type));
  const warnings = types
    .filter((type) => !PARSER_TYPES.includes(type))
    .map((type) => `the parser "${type}" is not known to this service and is ignored`);
  if (!types.includes('pdf')) warnings.push('PDFs are always parsed by this service');
  const options = parsers.some((p) => typeof p === 'object' && Object.keys(p).some((k) => k !== 'type'));
  if (options) warnings.push("parsers' options are ignored: documents have no per-page markdown or blocks");
  return warnings;
}

/** The scrape options both versions share (Firecrawl's names and defaults). */
const commonFields = {
  formats: formatsSchema,
  headers: headersSchema,
  includeTags: tags,
  excludeTags: tags,
  onlyMainContent: z.boolean().default(true),
  onlyCleanContent: onlyBoolean(false, 'the main content is what onlyMainContent keeps'),
  timeout: z.int().min(1000).max(MAX_TIMEOUT_MS).optional(),
  waitFor: z.int().min(0).max(60_000).default(0),
  mobile: z.boolean().default(false),
  actions: actionsSchema,
  location: locationSchema,
  // Default false here (Firecrawl's is true): a bad certificate is a SCRAPE_SSL_ERROR unless asked.
  skipTlsVerification: z.boolean().optional(),
  // Accepted without effect: see the package README.
  removeBase64Images: z.boolean().optional(),
  fastMode: z.boolean().optional(),
  blockAds: z.boolean().optional(),
  maxAge: z.int().min(0).default(0),
  storeInCache: z.boolean().default(true),
  proxy: proxySchema,
  useMock: unsupportedOption('useMock'),
  threatProtection: unsupportedOption('threatProtection'),
  // The SDKs' scrape options type has these, so they can arrive inside a crawl's scrapeOptions.
  ...bookkeepingFields,
};

/** v2's scrape option fields (POST /v2/parse reads some of them). */
export const v2Fields = {
  ...commonFields,
  maxAge: z.int().min(0).default(V2_MAX_AGE_MS),
  parsers: parsersSchema,
  minAge: unsupportedOption('minAge'),
  lockdown: onlyBoolean(false, 'pages are always fetched from the site'),
  safeMode: onlyBoolean(false, 'there is no safe mode'),
  redactPII: z
    .unknown()
    .optional()
    .refine((v) => v === undefined || v === false, 'the option "redactPII" is not supported by this service'),
  profile: unsupportedOption('profile'),
  // Firecrawl's MCP server sends its catalogue's calls (firecrawl_find_tools) as scrapes.
  alexandria: unsupportedOption('alexandria'),
  domainTools: onlyBoolean(false, 'there are no domain tools'),
  toolDetail: z.string().optional(),
};

/** v1's options of the json (and extract) format; `systemPrompt` joins the prompt. */
const v1JsonOptions = z
  .strictObject({
    schema: z.record(z.string(), z.unknown()).nullish(),
    prompt: z.string().max(10_000).nullish(),
    systemPrompt: z.string().max(10_000).nullish(),
  })
  .optional();

const v1Fields = {
  ...commonFields,
  parsePDF: onlyBoolean(true, 'PDFs are always parsed'),
  extract: v1JsonOptions,
  jsonOptions: v1JsonOptions,
  changeTrackingOptions: z.strictObject(changeTrackingFields).optional(),
  agent: unsupportedOption('agent'),
  geolocation: locationSchema,
};

/** The scrape option fields of a version: spread them into a request's strict object. */
export const scrapeFields = (version: FirecrawlVersion) => (version === 'v1' ? v1Fields : v2Fields);

type CommonOptions = z.output<z.ZodObject<typeof commonFields>> & {
  parsers?: z.output<typeof parsersSchema>;
  geolocation?: z.output<typeof locationSchema>;
  extract?: z.output<typeof v1JsonOptions>;
  jsonOptions?: z.output<typeof v1JsonOptions>;
  changeTrackingOptions?: z.output<typeof v1Fields.changeTrackingOptions>;
};

/**
 * The json format's options: the format object's (v2), else v1's `jsonOptions` or `extract`
 * (`systemPrompt` before the prompt). A json format with neither schema nor prompt is a 400.
 */
function jsonOptions(options: CommonOptions, issues: Issue[]): JsonOptions | null {
  const { names, json } = options.formats;
  if (!names.includes('json')) return null;
  const v1 = options.jsonOptions ?? options.extract;
  const prompt = [v1?.systemPrompt, v1?.prompt].filter((p) => p?.trim()).join('\n') || null;
  const found = json ?? (v1 ? { schema: v1.schema ?? null, prompt } : null);
  if (found && (found.schema !== null || found.prompt !== null)) {
    const problem = found.schema && !json ? schemaProblem(found.schema) : null;
    if (problem)
      issues.push({ path: [options.jsonOptions ? 'jsonOptions' : 'extract', 'schema'], message: problem });
    return found;
  }
  const at = options.formats.modelAt.find((i) => i >= 0) ?? 0;
  issues.push({
    path: ['formats', at],
    message: 'the json format needs a schema or a prompt ({type: "json", schema, prompt}; v1: jsonOptions)',
  });
  return null;
}

/**
 * The changeTracking format's options: the format object's (v2), else v1's
 * `changeTrackingOptions`; `json` mode needs a schema or a prompt, and the language model (its
 * index joins `modelAt`).
 */
function changeTracking(
  options: CommonOptions,
  issues: Issue[],
): { tracking: ChangeTrackingOptions | null; modelAt: number[] } {
  const { changeTrackingAt: at, modelAt } = options.formats;
  const v1 = options.changeTrackingOptions;
  if (at === null) {
    if (v1)
      issues.push({ path: ['changeTrackingOptions'], message: 'is only for the changeTracking format' });
    return { tracking: null, modelAt };
  }
  const tracking = options.formats.changeTracking ?? trackingOptions(v1);
  if (!tracking.modes.includes('json')) return { tracking, modelAt };
  if (tracking.schema === null && tracking.prompt === null)
    issues.push({
      path: options.formats.changeTracking ? ['formats', at] : ['changeTrackingOptions'],
      message: 'the json mode of changeTracking needs a schema or a prompt',
    });
  return { tracking, modelAt: [...modelAt, at].sort((a, b) => a - b) };
}

/**
 * The options of a parsed request as ScrapeOptions: `waitFor` and `actions` become render steps,
 * headers and location the fetch settings. Problems go to `ctx` at their field's path.
 */
export function finishScrapeOptions(options: CommonOptions, ctx: z.RefinementCtx): ScrapeOptions {
  const render = planRender(options.waitFor, options.actions);
  const fetch = readFetchSettings({
    headers: options.headers,
    mobile: options.mobile,
    location: options.location ?? options.geolocation,
    skipTlsVerification: options.skipTlsVerification,
  });
  const issues = [...(render.ok ? [] : render.issues), ...fetch.issues];
  const json = jsonOptions(options, issues);
  const tracked = changeTracking(options, issues);
  if (options.timeout !== undefined && options.waitFor > options.timeout / 2)
    issues.push({ path: ['waitFor'], message: 'waitFor must not exceed half of timeout' });
  report(issues, ctx);
  const plan = render.ok
    ? render.plan
    : { steps: [], outputs: { screenshots: 0, scrapes: 0, scripts: 0 }, screenshot: null, totalWaitMs: 0 };
  return {
    formats: options.formats.names,
    json,
    modelFormatsAt: tracked.modelAt,
    changeTracking: tracked.tracking,
    actionOutputs: plan.outputs,
    attributes: options.formats.attributes,
    cache: { maxAge: options.maxAge, store: options.storeInCache },
    onlyMainContent: options.onlyMainContent,
    includeTags: options.includeTags,
    excludeTags: options.excludeTags,
    timeout: options.timeout ?? Math.max(DEFAULT_TIMEOUT_MS, 2 * plan.totalWaitMs),
    renderActions: plan.steps,
    screenshot: screenshotOptions(options.formats.screenshot, plan.screenshot),
    mobile: options.mobile,
    fetch: fetch.settings,
    warnings: [
      ...options.formats.warnings,
      ...(options.proxy === 'stealth' || options.proxy === 'enhanced'
        ? [`the proxy "${options.proxy}" is served with this service's own proxies, or none`]
        : []),
      ...parserWarnings(options.parsers),
    ],
  };
}

/** A crawl's `scrapeOptions` object of a version (Firecrawl's defaults when omitted or null). */
export function scrapeOptionsSchema(version: FirecrawlVersion) {
  const options = z.strictObject(scrapeFields(version));
  return options
    .nullable()
    .default(null)
    .transform((given, ctx) => finishScrapeOptions(given ?? options.parse({}), ctx));
}
