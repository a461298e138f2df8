import {
  documentListSchema,
  downloadQuerySchema,
  listDocumentsQuerySchema,
  listResultsQuerySchema,
  resultListSchema,
} from '@scrapejobs/contracts';
import { type ResultsService, toResultView } from '@scrapejobs/domain';
import { defineRoute, type RouteDef } from '../http/routes.ts';

const tag = 'Results';

export function resultRoutes(results: ResultsService): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/jobs/{id}/results',
      tag,
      scope: 'jobs:read',
      summary: 'List the records of a run (default: the latest run that has ended), in the order stored',
      query: listResultsQuerySchema,
      responses: { 200: { description: 'A page of records.', schema: resultListSchema } },
      handler: async ({ principal, params, query }) => {
        const page = await results.list(principal, params.id!, {
          runId: query.run_id,
          limit: query.limit,
          cursor: query.cursor,
        });
        const items = page.items.map((r) => toResultView(r, page.queryNames, page.extracted));
        return {
          status: 200,
          body: {
            job_id: page.jobId,
            run_id: page.runId,
            results: items,
            count: items.length,
            next_cursor: page.nextCursor,
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/jobs/{id}/download',
      tag,
      scope: 'jobs:read',
      summary:
        "Download every record of a run as a file (json, jsonl, csv, xlsx or sql), or its pages' documents (json or jsonl), streamed",
      query: downloadQuerySchema,
      responses: {
        200: {
          description:
            'The file, as an attachment: `application/json` (an array of flat objects), `application/jsonl` ' +
            '(one object a line), `text/csv` ' +
            '(RFC 4180 with a header row), `application/vnd.openxmlformats-officedocument.spreadsheetml.sheet` ' +
            '(one sheet `results`) or `application/sql` (CREATE TABLE and INSERT statements). Columns: ' +
            "`url`, `scraped_at`, then the query names in the order of the job. With `changes=`, the run's " +
            'changes of those kinds against its base run, with a first column `change` (404 when the job ' +
            'does not track changes or the run has not been compared). With `content=documents`, the ' +
            "run's documents (as GET …/documents shows them) in its URL order, as json or jsonl.",
        },
      },
      handler: async ({ principal, params, query }) => {
        const file = await results.download(principal, params.id!, {
          format: query.format,
          content: query.content,
          runId: query.run_id,
          changes: query.changes,
        });
        return {
          status: 200,
          headers: {
            'Content-Type': file.contentType,
            'Content-Disposition': `attachment; filename="${file.filename}"`,
            'Cache-Control': 'no-store',
          },
          body: file.body,
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/jobs/{id}/runs/{run_id}/documents',
      tag,
      scope: 'jobs:read',
      summary: "List a run's documents (its pages' markdown, html, links, metadata) in the run's URL order",
      query: listDocumentsQuerySchema,
      responses: { 200: { description: 'A page of documents.', schema: documentListSchema } },
      handler: async ({ principal, params, query }) => {
        const page = await results.listDocuments(principal, params.id!, params.run_id!, {
          url: query.url,
          limit: query.limit,
          cursor: query.cursor,
        });
        return {
          status: 200,
          body: {
            job_id: page.jobId,
            run_id: page.runId,
            documents: page.items,
            count: page.items.length,
            next_cursor: page.nextCursor,
          },
        };
      },
    }),
  ];
}
