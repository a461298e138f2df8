import { z } from 'zod';
import { changeTrackingSchema, healthSchema, runChangesSchema } from './changes.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json.ts';
import { renderActionSchema, requestSchema } from './request.ts';

export const JOB_STATUSES = ['scheduled', 'running', 'success', 'failed', 'paused'] as const;
/** Where a job was made: this API (and the console), or the Firecrawl-compatible API (docs/api.md §18). */
export const JOB_ORIGINS = ['api', 'firecrawl'] as const;
export type JobOriginName = (typeof JOB_ORIGINS)[number];
export const QUERY_TYPES = ['xpath', 'css', 'regex'] as const;
export const WAIT_STRATEGIES = ['load', 'domcontentloaded', 'networkidle0', 'networkidle2'] as const;
export const ROTATION_STRATEGIES = ['round_robin', 'random', 'sticky'] as const;
/**
 * How a run fetches a page its job fetched before (docs/api.md §20): `conditional` asks whether it
 * changed and copies its last records and document when it did not; `always` fetches and extracts it.
 */
export const REFETCH_MODES = ['conditional', 'always'] as const;
export type RefetchModeName = (typeof REFETCH_MODES)[number];

const trimmed = (min: number, max: number) =>
  z
    .string()
    .refine(
      (s) => s.trim().length >= min,
      `must have at least ${min} character${min === 1 ? '' : 's'} after trimming`,
    )
    .refine((s) => s.trim().length <= max, `must have at most ${max} characters after trimming`)
    .transform((s) => s.trim());

export const querySchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(
      /^[A-Za-z_][A-Za-z0-9_-]*$/,
      'must start with a letter or _ and contain only letters, digits, _ and -',
    ),
  type: z.enum(QUERY_TYPES),
  query: z.string().min(1).max(2000),
  join: z.boolean().default(false),
});

const uniqueInts = (min: number, max: number) =>
  z
    .array(z.int().min(min).max(max))
    .max(max - min + 1)
    .refine((a) => new Set(a).size === a.length, 'values must be unique')
    .transform((a) => [...a].sort((x, y) => x - y));

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export const schedulingSchema = z
  .strictObject({
    days: uniqueInts(0, 6).default([]),
    hours: uniqueInts(0, 23).default([]),
    minutes: uniqueInts(0, 59).default([]),
    timezone: z
      .string()
      .refine(isTimeZone, 'must be an IANA time zone name such as Europe/Paris')
      .default('UTC'),
  })
  // docs/api.md §3.5: empty or omitted minutes mean minute 0.
  .transform((s) => ({ ...s, minutes: s.minutes.length ? s.minutes : [0] }));

/** How a job renders its pages (docs/api.md §23). */
export const RENDER_MODES = ['always', 'auto'] as const;
export type RenderModeName = (typeof RENDER_MODES)[number];

/** Bounds of a screenshot's window (docs/api.md §14): up to 4K wide, as tall as the capture may be. */
export const SCREENSHOT_VIEWPORT = {
  minWidth: 100,
  maxWidth: 3840,
  minHeight: 100,
  maxHeight: 4320,
} as const;

/** How the screenshot is taken (docs/api.md §14); null: a full-page PNG at the renderer's 800 px window. */
export const screenshotOptionsSchema = z.strictObject({
  /** The browser window the page is laid out and captured in. */
  viewport: z
    .strictObject({
      width: z.int().min(SCREENSHOT_VIEWPORT.minWidth).max(SCREENSHOT_VIEWPORT.maxWidth),
      height: z.int().min(SCREENSHOT_VIEWPORT.minHeight).max(SCREENSHOT_VIEWPORT.maxHeight),
    })
    .nullable()
    .default(null),
  /** A JPEG of this quality; null: a PNG. */
  quality: z.int().min(1).max(100).nullable().default(null),
  /** The whole page (true), or only the window (false, with a viewport). */
  full_page: z.boolean().default(true),
});
export type ScreenshotOptions = z.output<typeof screenshotOptionsSchema>;

export const renderConfigSchema = z.strictObject({
  enabled: z.boolean().default(false),
  wait_strategy: z.enum(WAIT_STRATEGIES).default('load'),
  wait_timeout_ms: z.int().min(0).max(120_000).default(30_000),
  /** Steps run in order after the wait strategy, before extraction (docs/api.md §14). */
  actions: z.array(renderActionSchema).max(20).default([]),
  /** A full-page PNG of each rendered URL, kept with the run (docs/api.md §14). */
  screenshot: z.boolean().default(false),
  /** The screenshot's window, image type and extent; null: the defaults (docs/api.md §14). */
  screenshot_options: screenshotOptionsSchema.nullable().default(null),
  /**
   * `always` renders every page; `auto` fetches each page plainly first and renders only those
   * that need it (docs/api.md §23).
   */
  mode: z.enum(RENDER_MODES).default('always'),
  /**
   * Refuse what a page's DOM does not need (style sheets, tracking beacons, third-party media);
   * null: true for a job that keeps records only (docs/api.md §23).
   */
  block_resources: z.boolean().nullable().default(null),
});

export const proxyConfigSchema = z.strictObject({
  enabled: z.boolean().default(false),
  rotation_strategy: z.enum(ROTATION_STRATEGIES).default('round_robin'),
  geo_targeting: z
    .string()
    .regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code')
    .transform((s) => s.toUpperCase())
    .nullable()
    .default(null),
});

/** A link query of a crawl (docs/api.md §11): each match is a URL to follow. */
export const followQuerySchema = z.strictObject({
  type: z.enum(QUERY_TYPES),
  query: z.string().min(1).max(2000),
});

const urlPatterns = z.array(z.string().min(1).max(500)).max(50).default([]);

/** The `crawl` job field (docs/api.md §11): which links a run follows, how deep and how far. */
export const crawlSchema = z.strictObject({
  follow: z.array(followQuerySchema).min(1).max(10),
  max_depth: z.int().min(0).max(50).default(3),
  max_pages: z.int().min(1).max(100_000).default(1000),
  same_origin: z.boolean().default(true),
  include: urlPatterns,
  exclude: urlPatterns,
  respect_robots_txt: z.boolean().default(true),
  sitemap: z.boolean().default(false),
});

/**
 * What a job keeps of each page beyond its records (docs/api.md §17); `summary` is written by the
 * operator's language model (§24).
 */
export const FORMATS = [
  'markdown',
  'html',
  'raw_html',
  'links',
  'metadata',
  'screenshot',
  'summary',
] as const;
/** Formats that need the operator's language model (docs/api.md §24). */
export const MODEL_FORMATS: readonly FormatName[] = ['summary'];
export type FormatName = (typeof FORMATS)[number];

export const formatsSchema = z
  .array(z.enum(FORMATS))
  .max(FORMATS.length)
  .refine((a) => new Set(a).size === a.length, 'values must be unique');

const selectors = z.array(z.string().min(1).max(500)).max(50).default([]);

/** The `content` job field (docs/api.md §17): which parts of a page its document keeps. */
export const contentSchema = z.strictObject({
  only_main_content: z.boolean().default(true),
  include_tags: selectors,
  exclude_tags: selectors,
});

/** The largest `extract.schema`, in bytes of its JSON (docs/api.md §24). */
export const MAX_EXTRACT_SCHEMA_BYTES = 64 * 1024;
/** The longest `extract.prompt`. */
export const MAX_EXTRACT_PROMPT = 10_000;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The `extract` job field (docs/api.md §24): the operator's language model reads each page and
 * answers one object, checked against `schema`; its top-level properties are the page's record.
 * The API also compiles the schema (a JSON Schema of an object).
 */
export const extractSchema = z
  .strictObject({
    schema: z
      .unknown()
      .superRefine((schema, ctx) => {
        const problem = !isPlainObject(schema)
          ? 'must be a JSON Schema object'
          : nestsDeeperThan(schema, MAX_JSON_DEPTH)
            ? `must not nest more than ${MAX_JSON_DEPTH} levels of objects and arrays`
            : Buffer.byteLength(JSON.stringify(schema)) > MAX_EXTRACT_SCHEMA_BYTES
              ? `must be at most ${MAX_EXTRACT_SCHEMA_BYTES / 1024} KiB of JSON`
              : null;
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .transform((schema) => schema as Record<string, unknown>)
      .nullable()
      .default(null),
    prompt: z.string().trim().min(1).max(MAX_EXTRACT_PROMPT).nullable().default(null),
  })
  .refine((e) => e.schema !== null || e.prompt !== null, 'must have a schema, a prompt, or both');

/** The record fields of an extraction: its schema's top-level properties, in their order (none without a schema). */
export const extractFields = (extract: Extract | null): string[] =>
  extract?.schema && isPlainObject(extract.schema.properties) ? Object.keys(extract.schema.properties) : [];

const source = z
  .string()
  .max(2048)
  .refine((s) => /^https?:\/\/[^/?#\s]+/i.test(s), 'must be an absolute http or https URL');

const jobFields = {
  name: trimmed(1, 200),
  source,
  queries: z.array(querySchema).max(50),
  formats: formatsSchema,
  content: contentSchema.nullable(),
  rate_limit: z.number().min(0.001).max(6000),
  scheduling: schedulingSchema.nullable(),
  render_config: renderConfigSchema.nullable(),
  proxy_config: proxyConfigSchema.nullable(),
  crawl: crawlSchema.nullable(),
  change_tracking: changeTrackingSchema.nullable(),
  request: requestSchema.nullable(),
  retention_days: z.int().min(1).max(3650).nullable(),
  refetch: z.enum(REFETCH_MODES),
  extract: extractSchema.nullable(),
};

/**
 * The 400 at `queries` of a job with neither queries, formats nor `extract`, or with queries and
 * `extract` (each page's one record is then the extracted object); null when neither.
 */
export function noQueriesIssue(
  queries: readonly unknown[],
  formats: readonly unknown[],
  extract: unknown = null,
): string | null {
  if (extract !== null && extract !== undefined)
    return queries.length > 0
      ? "must be empty when extract is given: each page's record is the extracted object"
      : null;
  return queries.length === 0 && formats.length === 0
    ? 'must have at least one query, unless formats names at least one or extract is given'
    : null;
}

/** The fields the rule of `queries` (noQueriesIssue) reads. */
const QUERIES_RULE_READS = new Set(['queries', 'formats', 'extract']);

/** POST /jobs body (docs/api.md §3.1). */
export const createJobSchema = z
  .strictObject({
    ...jobFields,
    queries: jobFields.queries.default([]),
    formats: jobFields.formats.default([]),
    content: jobFields.content.default(null),
    rate_limit: jobFields.rate_limit.default(10),
    scheduling: jobFields.scheduling.default(null),
    render_config: jobFields.render_config.default(null),
    proxy_config: jobFields.proxy_config.default(null),
    crawl: jobFields.crawl.default(null),
    change_tracking: jobFields.change_tracking.default(null),
    request: jobFields.request.default(null),
    retention_days: jobFields.retention_days.default(null),
    refetch: jobFields.refetch.default('conditional'),
    extract: jobFields.extract.default(null),
  })
  .check(
    z.superRefine(
      (job, ctx) => {
        const issue = noQueriesIssue(job.queries, job.formats, job.extract);
        if (issue) ctx.addIssue({ code: 'custom', path: ['queries'], message: issue });
      },
      // Also when other fields are wrong (an empty body names every missing field at once), as long
      // as the three it reads are right.
      {
        when: (payload) =>
          isPlainObject(payload.value) &&
          !payload.issues.some((i) => QUERIES_RULE_READS.has(String(i.path?.[0]))),
      },
    ),
  );

/** Fields of the detail that a client may send back on PUT/PATCH; they are ignored. */
const READ_ONLY = [
  'job_id',
  'status',
  'created_at',
  'updated_at',
  'last_run',
  'last_run_id',
  'results_count',
  'next_run_at',
  'mode',
  'origin',
] as const;

/** PUT/PATCH /jobs/{id} body (docs/api.md §3.6): any subset of the create fields. */
export const updateJobSchema = z
  .strictObject({
    ...jobFields,
    ...Object.fromEntries(READ_ONLY.map((k) => [k, z.unknown()])),
  })
  .partial()
  .transform((body) => {
    const out = { ...body } as Record<string, unknown>;
    for (const k of READ_ONLY) delete out[k];
    return out as Partial<CreateJobInput>;
  });

export type Query = z.output<typeof querySchema>;
export type Scheduling = z.output<typeof schedulingSchema>;
export type RenderConfig = z.output<typeof renderConfigSchema>;
export type ProxyConfig = z.output<typeof proxyConfigSchema>;
export type Crawl = z.output<typeof crawlSchema>;
export type Content = z.output<typeof contentSchema>;
export type Extract = z.output<typeof extractSchema>;
export type FollowQuery = z.output<typeof followQuerySchema>;
export type CreateJobInput = z.output<typeof createJobSchema>;
export type UpdateJobInput = z.output<typeof updateJobSchema>;
export type JobStatusName = (typeof JOB_STATUSES)[number];

/** GET /jobs/status query string (docs/api.md §3.2). */
export const listJobsQuerySchema = z.strictObject({
  status: z.enum(JOB_STATUSES).optional(),
  origin: z
    .enum(JOB_ORIGINS)
    .optional()
    .describe(
      'the jobs made by this origin; default api (those of the Firecrawl-compatible API are listed only when asked for)',
    ),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(200).optional(),
});

/** GET /jobs/{id}/runs query string. */
export const listRunsQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(200).optional(),
});

const timestamp = z.iso.datetime().describe('ISO 8601 UTC with milliseconds');

export const jobListItemSchema = z.object({
  job_id: z.string(),
  name: z.string(),
  source: z.string(),
  status: z.enum(JOB_STATUSES),
  created_at: timestamp,
  last_run: timestamp.nullable(),
  results_count: z.int(),
  next_run_at: timestamp.nullable(),
});

export const jobDetailSchema = jobListItemSchema.extend({
  updated_at: timestamp,
  rate_limit: z.number(),
  queries: z.array(querySchema),
  formats: z.array(z.enum(FORMATS)),
  content: contentSchema.nullable(),
  scheduling: schedulingSchema.nullable(),
  render_config: renderConfigSchema.nullable(),
  proxy_config: proxyConfigSchema.nullable(),
  crawl: crawlSchema.nullable(),
  change_tracking: changeTrackingSchema.nullable(),
  request: requestSchema
    .nullable()
    .describe('secret values (header and cookie values, the password) read "********"'),
  retention_days: z
    .int()
    .nullable()
    .describe("runs that ended longer ago are deleted; null: the operator's setting"),
  refetch: z
    .enum(REFETCH_MODES)
    .describe('conditional: a page unchanged since its last successful fetch is copied, not extracted again'),
  extract: z
    .object({ schema: z.record(z.string(), z.unknown()).nullable(), prompt: z.string().nullable() })
    .nullable()
    .describe("the operator's language model reads each page; the object it answers is the page's record"),
  last_run_id: z.string().nullable(),
  mode: z.enum(['test', 'live']),
  origin: z
    .enum(JOB_ORIGINS)
    .describe('firecrawl: made through the Firecrawl-compatible API (docs/api.md §18)'),
});

export const jobListSchema = z.object({
  jobs: z.array(jobListItemSchema),
  count: z.int(),
  next_cursor: z.string().nullable(),
});

export const runAcceptedSchema = z.object({
  job_id: z.string(),
  run_id: z.string(),
  status: z.literal('running'),
});

export const runSchema = z.object({
  run_id: z.string(),
  status: z.enum(['running', 'success', 'failed', 'cancelled']),
  trigger: z.enum(['manual', 'schedule']),
  started_at: timestamp,
  finished_at: timestamp.nullable(),
  duration_ms: z.int().nullable(),
  results_count: z.int(),
  successful_urls: z.int(),
  failed_urls: z.int(),
  skipped_urls: z.int(),
  error: z
    .object({ code: z.string(), message: z.string(), failed_urls: z.int(), successful_urls: z.int() })
    .nullable(),
  base_run_id: z.string().nullable().describe('the run this one was compared with (change tracking)'),
  changes: runChangesSchema.nullable().describe('null without change tracking, or until compared'),
  health: healthSchema.nullable().describe('extraction health of an ended run; null until checked'),
});

export const runListSchema = z.object({
  job_id: z.string(),
  runs: z.array(runSchema),
  count: z.int(),
  next_cursor: z.string().nullable(),
});

export const URL_STATUSES = ['pending', 'success', 'failed', 'skipped'] as const;

/** Why a URL was accepted and not fetched (docs/api.md §12). */
export const SKIP_CODES = ['ROBOTS_DISALLOWED', 'MAX_PAGES'] as const;

/** GET /jobs/{id}/runs/{run_id}/urls query string (docs/api.md §12). */
export const listRunUrlsQuerySchema = z.strictObject({
  status: z.enum(URL_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(200).optional(),
});

export const runUrlSchema = z.object({
  url: z.string(),
  status: z.enum(URL_STATUSES),
  depth: z.int(),
  parent_url: z.string().nullable(),
  http_status: z.int().nullable(),
  records: z.int().nullable(),
  duration_ms: z.int().nullable(),
  fetched_at: timestamp.nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  warning: z
    .object({ code: z.string(), message: z.string() })
    .nullable()
    .describe("a page that succeeded without the language model's output (docs/api.md §24), and why"),
  unchanged: z
    .boolean()
    .describe(
      "its page had not changed since its last successful run (answered 304, or 200 with the same body): its records and document are copies of that run's",
    ),
  screenshot_url: z
    .string()
    .nullable()
    .describe('the PNG of the rendered page (render_config.screenshot), scope jobs:read; null when none'),
  rendered: z
    .boolean()
    .nullable()
    .describe('its page was rendered in Chromium (docs/api.md §23); null when it was not fetched'),
  render_reason: z
    .string()
    .nullable()
    .describe(
      'why it was rendered or not with render_config.mode auto (app_root, noscript, inline_state, little_text, queries_empty, host_learned, static, not_html, render_failed) or always (always); null for a page not rendered by its job',
    ),
});

export const runUrlListSchema = z.object({
  job_id: z.string(),
  run_id: z.string(),
  urls: z.array(runUrlSchema),
  count: z.int(),
  next_cursor: z.string().nullable(),
});

export type JobListItem = z.infer<typeof jobListItemSchema>;
export type JobDetail = z.infer<typeof jobDetailSchema>;
export type RunView = z.infer<typeof runSchema>;
export type RunUrlView = z.infer<typeof runUrlSchema>;
export type UrlStatusName = (typeof URL_STATUSES)[number];
