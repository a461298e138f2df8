import { pipeline } from 'node:stream/promises';
import { DOWNLOAD_FORMATS, type DownloadFormat, URL_STATUSES } from '@scrapejobs/contracts';
import type { Router } from 'express';
import type { ConsoleDeps } from '../deps.ts';
import { attempt, type Kit } from '../http/kit.ts';
import { errorPage } from '../views/errors.ts';
import { emptyJobForm, jobDetailPage, jobFormPage, jobsListPage, STATUSES } from '../views/jobs.ts';
import { runPage } from '../views/runs.ts';
import { formErrors, readJobForm, toCreateBody, withExtraRow } from './job-form.ts';

const PAGE_SIZE = 50;
const PREVIEW_ROWS = 10;
const RUNS_SHOWN = 10;
const URLS_SHOWN = 100;

const ACTIONS = {
  run: { done: 'Run started.' },
  pause: { done: 'Job paused.' },
  resume: { done: 'Job resumed: its schedule is armed again.' },
} as const;

/** Jobs of the signed-in user in the session's mode, through the API's own services. */
export function jobsRoutes(router: Router, kit: Kit, deps: ConsoleDeps): void {
  const { jobs, results } = deps.services;

  router.get('/jobs', async (req, res) => {
    const owner = kit.owner(req);
    const status = STATUSES.find((s) => s === req.query.status);
    const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
    const [list, counts] = await Promise.all([
      jobs.list(owner, { status, limit: PAGE_SIZE, cursor }),
      jobs.countByStatus(owner),
    ]);
    kit.send(
      res,
      200,
      jobsListPage(await kit.page(req), { jobs: list.items, counts, status, nextCursor: list.nextCursor }),
    );
  });

  router.get('/jobs/new', async (req, res) => {
    kit.send(res, 200, jobFormPage(await kit.page(req), emptyJobForm(), {}));
  });

  router.post('/jobs', async (req, res) => {
    const values = readJobForm(req);
    if (req.body.add_row !== undefined)
      return kit.send(res, 200, jobFormPage(await kit.page(req), withExtraRow(values), {}));
    const { body, rows } = toCreateBody(values);
    const parsed = await attempt(async () => deps.parseJob(body, kit.owner(req).userId), [400]);
    if (!parsed.ok)
      return kit.send(
        res,
        400,
        jobFormPage(await kit.page(req), values, formErrors(parsed.failure.details, rows)),
      );
    const job = await jobs.create(kit.owner(req), parsed.value);
    await kit.redirect(req, res, `/console/jobs/${job.id}`, {
      kind: 'ok',
      text: `Job “${job.name}” created.`,
    });
  });

  router.get('/jobs/:id', async (req, res) => {
    const owner = kit.owner(req);
    const id = String(req.params.id);
    const job = await jobs.get(owner, id);
    const [runs, preview] = await Promise.all([
      jobs.listRuns(owner, id, { limit: RUNS_SHOWN }),
      results.list(owner, id, { limit: PREVIEW_ROWS }),
    ]);
    const previewRun =
      runs.items.find((r) => r.id === preview.runId) ??
      (preview.runId ? await jobs.getRun(owner, id, preview.runId) : undefined);
    kit.send(res, 200, jobDetailPage(await kit.page(req), job, runs.items, preview, previewRun));
  });

  router.get('/jobs/:id/runs/:runId', async (req, res) => {
    const owner = kit.owner(req);
    const id = String(req.params.id);
    const runId = String(req.params.runId);
    const status = URL_STATUSES.find((s) => s === req.query.status);
    const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
    const [job, run, urls] = await Promise.all([
      jobs.get(owner, id),
      jobs.getRun(owner, id, runId),
      jobs.listRunUrls(owner, id, runId, { status, limit: URLS_SHOWN, cursor }),
    ]);
    kit.send(res, 200, runPage(await kit.page(req), job, run, { ...urls, status }));
  });

  for (const action of Object.keys(ACTIONS) as (keyof typeof ACTIONS)[]) {
    router.post(`/jobs/:id/${action}`, async (req, res) => {
      const id = String(req.params.id);
      // 404 (another user's job, or the other mode) is thrown on to the error page.
      const outcome = await attempt<unknown>(() => jobs[action](kit.owner(req), id), [409]);
      await kit.redirect(
        req,
        res,
        `/console/jobs/${id}`,
        outcome.ok
          ? { kind: 'ok', text: ACTIONS[action].done }
          : { kind: 'error', text: outcome.failure.message },
      );
    });
  }

  router.get('/jobs/:id/download', async (req, res) => {
    const format = (req.query.format ?? 'json') as DownloadFormat;
    if (!DOWNLOAD_FORMATS.includes(format))
      return kit.send(
        res,
        400,
        errorPage(400, `Unknown format; choose ${DOWNLOAD_FORMATS.join(', ')}.`, kit.peek(req)),
      );
    const runId = typeof req.query.run_id === 'string' ? req.query.run_id : undefined;
    const file = await results.download(kit.owner(req), String(req.params.id), { format, runId });
    // The same headers as GET /jobs/{id}/download.
    res.set({
      'Content-Type': file.contentType,
      'Content-Disposition': `attachment; filename="${file.filename}"`,
    });
    await pipeline(file.body, res).catch((err: Error) => {
      deps.log.warn({ err: err.message, path: req.originalUrl }, 'console download ended early');
      res.destroy();
    });
  });
}
