// Every request and response type of the client, derived from the zod schemas the API itself
// validates and answers with (packages/contracts). Type-only imports: nothing of zod or the
// contracts is loaded at run time.
import type {
  CHANGE_TYPES,
  changeListSchema,
  changeSchema,
  createJobSchema,
  createWebhookSchema,
  DOWNLOAD_CONTENTS,
  DOWNLOAD_FORMATS,
  deliveryListSchema,
  deliverySchema,
  documentListSchema,
  documentSchema,
  downloadQuerySchema,
  ERROR_CODES,
  errorBodySchema,
  FORMATS,
  jobDetailSchema,
  jobListItemSchema,
  jobListSchema,
  listChangesQuerySchema,
  listDeliveriesQuerySchema,
  listDocumentsQuerySchema,
  listJobsQuerySchema,
  listResultsQuerySchema,
  listRunsQuerySchema,
  listRunUrlsQuerySchema,
  listWebhooksQuerySchema,
  pageChangeSchema,
  resultListSchema,
  resultSchema,
  runAcceptedSchema,
  runListSchema,
  runSchema,
  runUrlListSchema,
  runUrlSchema,
  searchRequestSchema,
  searchResponseSchema,
  TEST_EVENT,
  updateJobSchema,
  WEBHOOK_EVENTS,
  webhookListSchema,
  webhookSchema,
} from '@scrapejobs/contracts';
import type { z } from 'zod';

/** A query string: what the endpoint's schema accepts, every parameter optional. */
type QueryOf<S extends z.ZodType> = Partial<z.output<S>>;

// Requests: the body as the API reads it (defaults may be left out).
export type CreateJobRequest = z.input<typeof createJobSchema>;
export type SearchRequest = z.input<typeof searchRequestSchema>;
export type SearchResponse = z.output<typeof searchResponseSchema>;
export type UpdateJobRequest = z.input<typeof updateJobSchema>;
export type CreateWebhookRequest = z.input<typeof createWebhookSchema>;

export type ListJobsQuery = QueryOf<typeof listJobsQuerySchema>;
export type ListRunsQuery = QueryOf<typeof listRunsQuerySchema>;
export type ListRunUrlsQuery = QueryOf<typeof listRunUrlsQuerySchema>;
export type ListChangesQuery = QueryOf<typeof listChangesQuerySchema>;
export type ListResultsQuery = QueryOf<typeof listResultsQuerySchema>;
export type ListWebhooksQuery = QueryOf<typeof listWebhooksQuerySchema>;
export type ListDeliveriesQuery = QueryOf<typeof listDeliveriesQuerySchema>;
/** `url` (only that page's document), `limit` (1–100, default 20), `cursor`. */
export type ListDocumentsQuery = QueryOf<typeof listDocumentsQuerySchema>;
/**
 * `format` (default json), `content` (records, the default, or documents: json or jsonl only),
 * `run_id`, and `changes` (a list here, sent as the API's comma list).
 */
export type DownloadQuery = QueryOf<typeof downloadQuerySchema>;

// Responses: what the API answers, as its route table declares.
export type JobListItem = z.output<typeof jobListItemSchema>;
export type JobDetail = z.output<typeof jobDetailSchema>;
export type JobList = z.output<typeof jobListSchema>;
export type RunAccepted = z.output<typeof runAcceptedSchema>;
export type Run = z.output<typeof runSchema>;
export type RunList = z.output<typeof runListSchema>;
export type RunUrl = z.output<typeof runUrlSchema>;
export type RunUrlList = z.output<typeof runUrlListSchema>;
/** A record added, removed or changed against the base run. */
export type Change = z.output<typeof changeSchema>;
/** A page whose markdown was added, removed or changed (`change_tracking.content`), `kind: 'page'`. */
export type PageChange = z.output<typeof pageChangeSchema>;
/** An item of a run's changes: a record's, or (with `change_tracking.content`) a page's. */
export type ChangeItem = ChangeList['changes'][number];
export type ChangeList = z.output<typeof changeListSchema>;
export type Result = z.output<typeof resultSchema>;
export type ResultList = z.output<typeof resultListSchema>;
/** A page's document: its markdown, html, raw_html, links and metadata, as the job's `formats` asked. */
export type Document = z.output<typeof documentSchema>;
export type DocumentList = z.output<typeof documentListSchema>;
export type DocumentMetadata = NonNullable<Document['metadata']>;
export type Webhook = z.output<typeof webhookSchema>;
export type WebhookList = z.output<typeof webhookListSchema>;
export type Delivery = z.output<typeof deliverySchema>;
export type DeliveryList = z.output<typeof deliveryListSchema>;
export type ErrorBody = z.output<typeof errorBodySchema>;

export type JobStatus = JobDetail['status'];
export type RunStatus = Run['status'];
export type DownloadFormat = (typeof DOWNLOAD_FORMATS)[number];
export type DownloadContent = (typeof DOWNLOAD_CONTENTS)[number];
/** A name of a job's `formats`: what it keeps of each page beyond its records. */
export type JobFormat = (typeof FORMATS)[number];
/** A job's `content` setting: which parts of a page its documents keep (null: the defaults). */
export type ContentSettings = JobDetail['content'];
export type ChangeType = (typeof CHANGE_TYPES)[number];
/** The `error` codes of docs/api.md §9. */
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];
export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number] | typeof TEST_EVENT;

/**
 * The body of every webhook delivery (docs/api.md §6). The contracts package does not export the
 * per-event data schemas, so `data` is left open; `event` tells which one it is.
 */
export interface WebhookEvent {
  id: string;
  event: WebhookEventName;
  timestamp: string;
  data: Record<string, unknown>;
}
