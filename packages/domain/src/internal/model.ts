import {
  type ChangeTracking,
  type Content,
  type Crawl,
  changeTrackingSchema,
  contentSchema,
  crawlSchema,
  type Extract,
  extractFields,
  type FormatName,
  formatsSchema,
  healthSchema,
  type ProxyConfig,
  proxyConfigSchema,
  type Query,
  querySchema,
  type RenderConfig,
  type RunHealth,
  type RunView,
  renderConfigSchema,
  runChangesSchema,
  runSchema,
  type Scheduling,
  schedulingSchema,
} from '@scrapejobs/contracts';
import type { JobModel, RunModel } from '@scrapejobs/db';
import { z } from 'zod';
import { type StoredRequest, storedRequestSchema } from './jobs/request.ts';
import { type PageTracking, pageTrackingSchema } from './runs/tracked-pages.ts';

/** Why a URL or a run failed: a code of docs/api.md §6 and a message. */
export interface RunFailure {
  code: string;
  message: string;
}

/** A job with its JSON columns in the API's own types. */
export type Job = Omit<
  JobModel,
  | 'queries'
  | 'formats'
  | 'content'
  | 'scheduling'
  | 'renderConfig'
  | 'proxyConfig'
  | 'crawl'
  | 'changeTracking'
  | 'request'
  | 'urls'
  | 'extract'
  | 'pageTracking'
  // The compatible API's own bookkeeping (jobs/compat.ts), not part of a job's view.
  | 'firecrawlKind'
  | 'firecrawlOptions'
  // The compatible API's own options, read by it alone (CompatService).
  | 'firecrawl'
  | 'firecrawlCacheKey'
> & {
  queries: Query[];
  formats: FormatName[];
  content: Content | null;
  scheduling: Scheduling | null;
  renderConfig: RenderConfig | null;
  proxyConfig: ProxyConfig | null;
  crawl: Crawl | null;
  changeTracking: ChangeTracking | null;
  /** Secrets sealed; shown masked (jobs/request.ts). */
  request: StoredRequest | null;
  /** A batch's URLs, seeded instead of the expanded source (docs/api.md §18). */
  urls: string[] | null;
  extract: StoredExtract | null;
  /** Firecrawl's changeTracking format of a compatible-API job (docs/api.md §24). */
  pageTracking: PageTracking | null;
};

/** A job's `extract` as stored: with its record fields, the schema's top-level properties in their order. */
export const storedExtractSchema = z.object({
  schema: z.record(z.string(), z.unknown()).nullable(),
  prompt: z.string().nullable(),
  fields: z.array(z.string()),
});
export type StoredExtract = z.infer<typeof storedExtractSchema>;

/** An `extract` as given, ready to store. */
export const storeExtract = (extract: Extract | null): StoredExtract | null =>
  extract && { schema: extract.schema, prompt: extract.prompt, fields: extractFields(extract) };

/** The names of a job's record fields: its query names, then its extract fields. */
export const fieldNames = (job: { queries: readonly Query[]; extract: StoredExtract | null }): string[] => [
  ...job.queries.map((q) => q.name),
  ...(job.extract?.fields ?? []),
];

/** A run with its JSON columns in the API's own types. */
export type Run = Omit<RunModel, 'error' | 'firstFailure' | 'changes' | 'health'> & {
  error: RunView['error'];
  /** Counts against the base run, with duplicate keys. */
  changes: (RunView['changes'] & { duplicate_keys: number; pages?: NonNullable<RunView['changes']> }) | null;
  health: RunHealth | null;
  /** The failed URL with the lowest index so far. */
  firstFailure: (RunFailure & { index: number }) | null;
};

const jobColumns = z.object({
  queries: z.array(querySchema),
  formats: formatsSchema,
  content: contentSchema.nullable(),
  scheduling: schedulingSchema.nullable(),
  renderConfig: renderConfigSchema.nullable(),
  proxyConfig: proxyConfigSchema.nullable(),
  crawl: crawlSchema.nullable(),
  changeTracking: changeTrackingSchema.nullable(),
  request: storedRequestSchema.nullable(),
  urls: z.array(z.string()).nullable(),
  extract: storedExtractSchema.nullable(),
  pageTracking: pageTrackingSchema.nullable().default(null),
});

const runColumns = z.object({
  error: runSchema.shape.error,
  firstFailure: z.object({ index: z.int(), code: z.string(), message: z.string() }).nullable(),
  changes: runChangesSchema
    .extend({ duplicate_keys: z.int(), pages: runChangesSchema.optional() })
    .nullable(),
  health: healthSchema.nullable(),
});

/** A job row as the domain uses it: its JSON columns parsed once, where it is read. */
export const toJob = (row: JobModel): Job => ({ ...row, ...jobColumns.parse(row) });

/** A run row as the domain uses it: its JSON columns parsed once, where it is read. */
export const toRun = (row: RunModel): Run => ({ ...row, ...runColumns.parse(row) });
