import { Readable } from 'node:stream';
import {
  changeListSchema,
  createJobSchema,
  jobDetailSchema,
  jobListSchema,
  listChangesQuerySchema,
  listJobsQuerySchema,
  listRunsQuerySchema,
  listRunUrlsQuerySchema,
  runAcceptedSchema,
  runListSchema,
  runSchema,
  runUrlListSchema,
  updateJobSchema,
} from '@scrapejobs/contracts';
import { type JobsService, screenshotType, toDetail, toRunView } from '@scrapejobs/domain';
import type { z } from 'zod';
import { defineRoute, type RouteDef } from '../http/routes.ts';
import { type JobInputRules, parseCreateJob, parseUpdateJob } from './input.ts';

const tag = 'Jobs';

export function jobRoutes(jobs: JobsService, rules: JobInputRules): RouteDef[] {
  const detail = { 200: { description: 'The job.', schema: jobDetailSchema } };
  const update = (method: 'put' | 'patch') =>
    defineRoute({
      method,
      path: '/jobs/{id}',
      tag,
      scope: 'jobs:write',
      summary: `Update a job (${method === 'put' ? 'PUT and PATCH behave the same' : 'same as PUT'}): any subset of the fields`,
      body: updateJobSchema as z.ZodType<z.output<typeof updateJobSchema>>,
      parseBody: (raw, principal) => parseUpdateJob(raw, rules, principal.userId),
      responses: detail,
      handler: async ({ principal, params, body }) => ({
        status: 200,
        body: toDetail(await jobs.update(principal, params.id!, body)),
      }),
    });

  return [
    defineRoute({
      method: 'get',
      path: '/jobs/status',
      tag,
      scope: 'jobs:read',
      summary: 'List the jobs of the caller, newest first',
      query: listJobsQuerySchema,
      responses: { 200: { description: 'A page of jobs.', schema: jobListSchema } },
      handler: async ({ principal, query }) => {
        const page = await jobs.list(principal, query);
        return {
          status: 200,
          body: { jobs: page.items, count: page.items.length, next_cursor: page.nextCursor },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/jobs',
      tag,
      scope: 'jobs:write',
      summary: 'Create a job',
      body: createJobSchema as z.ZodType<z.output<typeof createJobSchema>>,
      parseBody: (raw, principal) => parseCreateJob(raw, rules, principal.userId),
      responses: { 201: { description: 'The created job.', schema: jobDetailSchema } },
      handler: async ({ principal, body }) => {
        const job = await jobs.create(principal, body);
        return { status: 201, body: toDetail(job), headers: { Location: `/jobs/${job.id}` } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/jobs/{id}',
      tag,
      scope: 'jobs:read',
      summary: 'Get a job',
      responses: detail,
      handler: async ({ principal, params }) => ({
        status: 200,
        body: toDetail(await jobs.get(principal, params.id!)),
      }),
    }),
    update('put'),
    update('patch'),
    defineRoute({
      method: 'delete',
      path: '/jobs/{id}',
      tag,
      scope: 'jobs:write',
      summary: 'Delete a job with its runs and results (a running run is cancelled)',
      responses: { 204: { description: 'Deleted.' } },
      handler: async ({ principal, params }) => {
        await jobs.delete(principal, params.id!);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/jobs/{id}/run',
      tag,
      scope: 'jobs:write',
      summary: 'Run the job now',
      responses: { 202: { description: 'The run was recorded and queued.', schema: runAcceptedSchema } },
      handler: async ({ principal, params }) => {
        const { jobId, runId } = await jobs.run(principal, params.id!);
        return { status: 202, body: { job_id: jobId, run_id: runId, status: 'running' } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/jobs/{id}/pause',
      tag,
      scope: 'jobs:write',
      summary: 'Pause the job (a running run is cancelled, its results kept)',
      responses: detail,
      handler: async ({ principal, params }) => ({
        status: 200,
        body: toDetail(await jobs.pause(principal, params.id!)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/jobs/{id}/resume',
      tag,
      scope: 'jobs:write',
      summary: 'Resume a paused job',
      responses: detail,
      handler: async ({ principal, params }) => ({
        status: 200,
        body: toDetail(await jobs.resume(principal, params.id!)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/jobs/{id}/runs',
      tag,
      scope: 'jobs:read',
      summary: 'List the runs of a job, newest first',
      query: listRunsQuerySchema,
      responses: { 200: { description: 'A page of runs.', schema: runListSchema } },
      handler: async ({ principal, params, query }) => {
        const page = await jobs.listRuns(principal, params.id!, query);
        const runs = page.items.map(toRunView);
        return {
          status: 200,
          body: { job_id: params.id, runs, count: runs.length, next_cursor: page.nextCursor },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/jobs/{id}/runs/{run_id}',
      tag,
      scope: 'jobs:read',
      summary: 'Get one run of a job',
      responses: { 200: { description: 'The run.', schema: runSchema } },
      handler: async ({ principal, params }) => ({
        status: 200,
        body: toRunView(await jobs.getRun(principal, params.id!, params.run_id!)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/jobs/{id}/runs/{run_id}/urls',
      tag,
      scope: 'jobs:read',
      summary: 'List the URLs of a run in the order they were accepted, with what became of each',
      query: listRunUrlsQuerySchema,
      responses: { 200: { description: 'A page of URLs.', schema: runUrlListSchema } },
      handler: async ({ principal, params, query }) => {
        const page = await jobs.listRunUrls(principal, params.id!, params.run_id!, query);
        return {
          status: 200,
          body: {
            job_id: params.id,
            run_id: params.run_id,
            urls: page.items,
            count: page.items.length,
            next_cursor: page.nextCursor,
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/jobs/{id}/runs/{run_id}/screenshots/{n}',
      tag,
      scope: 'jobs:read',
      summary: "A rendered URL's full-page PNG (render_config.screenshot): its item's screenshot_url",
      responses: {
        200: {
          description:
            'The PNG (`image/png`), or a JPEG (`image/jpeg`) when render_config.screenshot_options.quality is set.',
        },
        404: { description: 'No such run, or no screenshot of that URL.' },
      },
      handler: async ({ principal, params }) => {
        const png = await jobs.screenshot(principal, params.id!, params.run_id!, params.n!);
        return {
          status: 200,
          headers: {
            'Content-Type': screenshotType(png),
            'Content-Length': String(png.length),
            'Cache-Control': 'private, max-age=3600',
          },
          body: Readable.from([png]),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/jobs/{id}/runs/{run_id}/changes',
      tag,
      scope: 'jobs:read',
      summary:
        'List what changed in a run against its base run (change tracking): added, changed, then removed items',
      query: listChangesQuerySchema,
      responses: {
        200: { description: 'A page of changes, with the counts.', schema: changeListSchema },
        404: { description: 'The job does not track changes, or the run has not been compared (yet).' },
      },
      handler: async ({ principal, params, query }) => {
        const { run, page } = await jobs.listRunChanges(principal, params.id!, params.run_id!, query);
        return {
          status: 200,
          body: {
            job_id: params.id,
            run_id: run.id,
            base_run_id: run.baseRunId,
            summary: run.changes,
            changes: page.items,
            count: page.items.length,
            next_cursor: page.nextCursor,
          },
        };
      },
    }),
  ];
}
