import { z } from 'zod';
import { changesParamSchema } from './changes.ts';

export const DOWNLOAD_FORMATS = ['json', 'csv', 'xlsx', 'sql'] as const;
export type DownloadFormat = (typeof DOWNLOAD_FORMATS)[number];

// An id that is unknown or malformed is a 404 (docs/api.md §1), so run_id is any string here.
const runId = z.string().describe('A run of this job; default: the latest run that has ended');

/** GET /jobs/{id}/results query string (docs/api.md §5). */
export const listResultsQuerySchema = z.strictObject({
  run_id: runId.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(200).optional(),
});

/** GET /jobs/{id}/download query string (docs/api.md §5). */
export const downloadQuerySchema = z.strictObject({
  format: z.enum(DOWNLOAD_FORMATS).default('json'),
  run_id: runId.optional(),
  changes: changesParamSchema.optional(),
});

export const resultSchema = z.object({
  result_id: z.string(),
  run_id: z.string(),
  url: z.string(),
  data: z.record(z.string(), z.string().nullable()).describe('Every query name of the job, in its order'),
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
