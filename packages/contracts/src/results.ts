import { z } from 'zod';
import { changesParamSchema } from './changes.ts';

export const DOWNLOAD_FORMATS = ['json', 'jsonl', 'csv', 'xlsx', 'sql'] as const;
export type DownloadFormat = (typeof DOWNLOAD_FORMATS)[number];

/** What a download holds: the run's records, or its pages' documents (docs/api.md §17). */
export const DOWNLOAD_CONTENTS = ['records', 'documents'] as const;
export type DownloadContent = (typeof DOWNLOAD_CONTENTS)[number];

/** The formats a download of documents may have. */
export const DOCUMENT_DOWNLOAD_FORMATS: readonly DownloadFormat[] = ['json', 'jsonl'];

// An id that is unknown or malformed is a 404 (docs/api.md §1), so run_id is any string here.
const runId = z.string().describe('A run of this job; default: the latest run that has ended');

/** GET /jobs/{id}/results query string (docs/api.md §5). */
export const listResultsQuerySchema = z.strictObject({
  run_id: runId.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(200).optional(),
});

/** GET /jobs/{id}/download query string (docs/api.md §5). */
export const downloadQuerySchema = z
  .strictObject({
    format: z.enum(DOWNLOAD_FORMATS).default('json'),
    content: z
      .enum(DOWNLOAD_CONTENTS)
      .default('records')
      .describe("the run's records, or its pages' documents (json or jsonl only)"),
    run_id: runId.optional(),
    changes: changesParamSchema.optional(),
  })
  .superRefine((query, ctx) => {
    if (query.content !== 'documents') return;
    if (!DOCUMENT_DOWNLOAD_FORMATS.includes(query.format))
      ctx.addIssue({
        code: 'custom',
        path: ['format'],
        message: `must be ${DOCUMENT_DOWNLOAD_FORMATS.join(' or ')} with content=documents`,
      });
    if (query.changes)
      ctx.addIssue({
        code: 'custom',
        path: ['changes'],
        message: 'is for records only, not with content=documents',
      });
  });

export const resultSchema = z.object({
  result_id: z.string(),
  run_id: z.string(),
  url: z.string(),
  data: z
    .record(z.string(), z.unknown())
    .describe(
      "Every query name of the job, in its order, with a string or null; a job with extract: the extracted object's top-level properties, any JSON value",
    ),
  scraped_at: z.iso.datetime().describe('ISO 8601 UTC with milliseconds'),
});

export const resultListSchema = z.object({
  job_id: z.string(),
  run_id: z.string().nullable().describe('null when the job has no ended run yet'),
  results: z.array(resultSchema),
  count: z.int(),
  next_cursor: z.string().nullable(),
});

export type ResultView = z.infer<typeof resultSchema>;
export type ResultList = z.infer<typeof resultListSchema>;

/** GET /jobs/{id}/runs/{run_id}/documents query string (docs/api.md §17). */
export const listDocumentsQuerySchema = z.strictObject({
  url: z.string().max(2048).optional().describe('only the document of this URL (as asked, before redirects)'),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(200).optional(),
});

const metadataSchema = z
  .object({
    title: z.string().nullable(),
    description: z.string().nullable(),
    language: z.string().nullable(),
    canonical_url: z.string().nullable(),
    keywords: z.string().nullable(),
    robots: z.string().nullable(),
    favicon: z.string().nullable(),
    og: z.record(z.string(), z.string()),
    twitter: z.record(z.string(), z.string()),
    published_time: z.string().nullable(),
    modified_time: z.string().nullable(),
    json_ld: z.array(z.unknown()),
    status_code: z.int().nullable(),
    content_type: z.string().nullable(),
    source_url: z.string(),
    url: z.string(),
  })
  .catchall(z.unknown())
  .describe("a PDF's adds its own fields: author, pages, …");

export const documentSchema = z.object({
  url: z.string().describe('the URL as asked (metadata.url is where it ended after redirects)'),
  status_code: z.int().nullable(),
  markdown: z.string().optional(),
  html: z.string().optional(),
  raw_html: z.string().optional(),
  links: z.array(z.string()).optional(),
  metadata: metadataSchema.optional(),
  summary: z
    .string()
    .optional()
    .describe("a few sentences of the page by the operator's language model (§24)"),
  json: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('the object the language model extracted (a job with extract that keeps documents)'),
  warning: z.string().optional().describe("why the language model's output is missing or cut"),
  javascript_returns: z
    .array(z.object({ type: z.string(), value: z.unknown() }))
    .optional()
    .describe("the values of the render's execute_javascript steps, in order (docs/api.md §14)"),
  change_tracking: z
    .object({
      previous_scrape_at: z.iso.datetime().nullable(),
      change_status: z.enum(['new', 'same', 'changed', 'removed']),
      visibility: z.enum(['visible', 'hidden']),
      diff: z
        .object({ text: z.string(), json: z.object({ files: z.array(z.unknown()) }) })
        .optional()
        .describe('git-diff mode: the unified diff of the markdown, and the same diff in parts'),
      json: z
        .record(z.string(), z.object({ previous: z.unknown(), current: z.unknown() }))
        .optional()
        .describe('json mode: the extracted fields that differ'),
    })
    .optional()
    .describe(
      "how the page compares with the account's previous scrape of it (a Firecrawl job with the changeTracking format, §24)",
    ),
  truncated: z.array(z.string()).describe('the values cut at their limit'),
});

export const documentListSchema = z.object({
  job_id: z.string(),
  run_id: z.string(),
  documents: z.array(documentSchema),
  count: z.int(),
  next_cursor: z.string().nullable(),
});

export type DocumentView = z.infer<typeof documentSchema>;
export type DocumentList = z.infer<typeof documentListSchema>;
