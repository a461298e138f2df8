// Every endpoint the API serves, with the client method that calls it and the contract schemas of
// its body, query string and answer. Compiling this file checks the client's types against those
// schemas (a method whose type differs from its schema is a compile error); contract.test.ts
// checks the schemas against the OpenAPI document the API serves. Together: a schema that
// changes without the client following fails the type-check and the test.
import {
  changeListSchema,
  createJobSchema,
  createWebhookSchema,
  deliveryListSchema,
  deliverySchema,
  documentListSchema,
  downloadQuerySchema,
  jobDetailSchema,
  jobListSchema,
  listChangesQuerySchema,
  listDeliveriesQuerySchema,
  listDocumentsQuerySchema,
  listJobsQuerySchema,
  listResultsQuerySchema,
  listRunsQuerySchema,
  listRunUrlsQuerySchema,
  listWebhooksQuerySchema,
  resultListSchema,
  runAcceptedSchema,
  runListSchema,
  runSchema,
  runUrlListSchema,
  searchRequestSchema,
  searchResponseSchema,
  updateJobSchema,
  webhookListSchema,
  webhookSchema,
} from '@scrapejobs/contracts';
import type { z } from 'zod';
import type { ScrapeJobs } from '../index.ts';

/** True only when A and B are the same type (not merely assignable either way). */
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

// biome-ignore lint/suspicious/noExplicitAny: any function of the client, whatever its parameters
type Method = (...args: any[]) => Promise<unknown>;
type Answer<F extends Method> = Awaited<ReturnType<F>>;
/** Compiles to no argument when the types are equal, else demands one the caller cannot give. */
type Same<A, B, Why extends string> = Equal<A, B> extends true ? [] : [Why];

export interface Endpoint {
  status: number;
  /** The JSON answer's schema; none for 204 and for files. */
  response?: z.ZodType;
  body?: z.ZodType;
  query?: z.ZodType;
}

/** A JSON answer, which the client method must resolve to exactly. */
export function responds<S extends z.ZodType, F extends Method>(
  status: number,
  schema: S,
  _method: () => F,
  ..._check: Same<Answer<F>, z.output<S>, 'the client method does not resolve to this schema'>
): Endpoint {
  return { status, response: schema };
}

/** No JSON answer (204, a file): the client method resolves to `R`. */
export function answers<R, F extends Method>(
  status: number,
  _method: () => F,
  ..._check: Same<Answer<F>, R, 'the client method resolves to something else'>
): Endpoint {
  return { status };
}

/** The body the client method takes as its argument `index` must be the schema's input. */
export function body<S extends z.ZodType, F extends Method, I extends number>(
  schema: S,
  _method: () => F,
  _index: I,
  ..._check: Same<Parameters<F>[I], z.input<S>, 'the client method takes another body'>
): z.ZodType {
  return schema;
}

/** The query the client method takes as its argument `index`: the schema's output, every field optional. */
export function query<S extends z.ZodType, F extends Method, I extends number>(
  schema: S,
  _method: () => F,
  _index: I,
  ..._check: Same<
    NonNullable<Parameters<F>[I]>,
    Partial<z.output<S>>,
    'the client method takes another query'
  >
): z.ZodType {
  return schema;
}

/** Only the types of its methods are read: the thunks below are never called. */
const client = undefined as unknown as ScrapeJobs;

export const ENDPOINTS: Record<string, Endpoint> = {
  'POST /search': {
    ...responds(200, searchResponseSchema, () => client.search),
    body: body(searchRequestSchema, () => client.search, 0),
  },
  'POST /jobs': {
    ...responds(201, jobDetailSchema, () => client.jobs.create),
    body: body(createJobSchema, () => client.jobs.create, 0),
  },
  'GET /jobs/status': {
    ...responds(200, jobListSchema, () => client.jobs.list),
    query: query(listJobsQuerySchema, () => client.jobs.list, 0),
  },
  'GET /jobs/{id}': responds(200, jobDetailSchema, () => client.jobs.get),
  'PUT /jobs/{id}': {
    ...responds(200, jobDetailSchema, () => client.jobs.update),
    body: body(updateJobSchema, () => client.jobs.update, 1),
  },
  'PATCH /jobs/{id}': {
    ...responds(200, jobDetailSchema, () => client.jobs.update),
    body: body(updateJobSchema, () => client.jobs.update, 1),
  },
  'DELETE /jobs/{id}': answers<void, ScrapeJobs['jobs']['delete']>(204, () => client.jobs.delete),
  'POST /jobs/{id}/run': responds(202, runAcceptedSchema, () => client.jobs.run),
  'POST /jobs/{id}/pause': responds(200, jobDetailSchema, () => client.jobs.pause),
  'POST /jobs/{id}/resume': responds(200, jobDetailSchema, () => client.jobs.resume),
  'GET /jobs/{id}/runs': {
    ...responds(200, runListSchema, () => client.runs.list),
    query: query(listRunsQuerySchema, () => client.runs.list, 1),
  },
  'GET /jobs/{id}/runs/{run_id}': responds(200, runSchema, () => client.runs.get),
  'GET /jobs/{id}/runs/{run_id}/urls': {
    ...responds(200, runUrlListSchema, () => client.runs.urls),
    query: query(listRunUrlsQuerySchema, () => client.runs.urls, 2),
  },
  'GET /jobs/{id}/runs/{run_id}/changes': {
    ...responds(200, changeListSchema, () => client.runs.changes),
    query: query(listChangesQuerySchema, () => client.runs.changes, 2),
  },
  'GET /jobs/{id}/runs/{run_id}/documents': {
    ...responds(200, documentListSchema, () => client.runs.documents),
    query: query(listDocumentsQuerySchema, () => client.runs.documents, 2),
  },
  'GET /jobs/{id}/runs/{run_id}/screenshots/{n}': answers<Buffer, ScrapeJobs['runs']['screenshot']>(
    200,
    () => client.runs.screenshot,
  ),
  'GET /jobs/{id}/results': {
    ...responds(200, resultListSchema, () => client.results.list),
    query: query(listResultsQuerySchema, () => client.results.list, 1),
  },
  'GET /jobs/{id}/download': {
    status: 200,
    query: query(downloadQuerySchema, () => client.results.open, 1),
  },
  'POST /webhooks': {
    ...responds(201, webhookSchema, () => client.webhooks.create),
    body: body(createWebhookSchema, () => client.webhooks.create, 0),
  },
  'GET /webhooks': {
    ...responds(200, webhookListSchema, () => client.webhooks.list),
    query: query(listWebhooksQuerySchema, () => client.webhooks.list, 0),
  },
  'GET /webhooks/{id}': responds(200, webhookSchema, () => client.webhooks.get),
  'DELETE /webhooks/{id}': answers<void, ScrapeJobs['webhooks']['delete']>(204, () => client.webhooks.delete),
  'GET /webhooks/{id}/deliveries': {
    ...responds(200, deliveryListSchema, () => client.webhooks.deliveries),
    query: query(listDeliveriesQuerySchema, () => client.webhooks.deliveries, 1),
  },
  'POST /webhooks/{id}/deliveries/{delivery_id}/resend': responds(
    202,
    deliverySchema,
    () => client.webhooks.resend,
  ),
  'POST /webhooks/{id}/test': responds(202, deliverySchema, () => client.webhooks.test),
};
