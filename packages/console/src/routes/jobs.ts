import { pipeline } from 'node:stream/promises';
import { CHANGE_TYPES, downloadQuerySchema, issuesToDetails, URL_STATUSES } from '@scrapejobs/contracts';
import { type Run, screenshotType } from '@scrapejobs/domain';
import type { Router } from 'express';
import type { ConsoleDeps, Owner } from '../deps.ts';
import { attempt, type Kit } from '../http/kit.ts';
import { errorPage } from '../views/errors.ts';
import { HISTORY_RUNS } from '../views/health.ts';
import { emptyJobForm, jobDetailPage, jobFormPage, jobsListPage, STATUSES } from '../views/jobs.ts';
import { runPage } from '../views/runs.ts';
import { formErrors, readJobForm, toCreateBody, withExtraRow } from './job-form.ts';

const PAGE_SIZE = 50;
const PREVIEW_ROWS = 10;
const RUNS_SHOWN = 10;
const URLS_SHOWN = 100;
const CHANGES_SHOWN = 50;
// Runs read per page, and pages at most, looking for the health chart's ended runs.
const HISTORY_PAGE = 50;
const HISTORY_PAGES = 4;

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
    const { body, rows, problems } = toCreateBody(values);
    // The service checks what needs the whole job too (change-tracking key names): a 400 as well.
    const created = await attempt(async () => {
      const input = await deps.parseJob(body, kit.owner(req).userId);
      return jobs.create(kit.owner(req), input);
    }, [400]);
    if (!created.ok)
      return kit.send(
        res,
        400,
        jobFormPage(await kit.page(req), values, {
          ...formErrors(created.failure.details, rows),
          ...problems,
        }),
      );
    await kit.redirect(req, res, `/console/jobs/${created.value.id}`, {
      kind: 'ok',
      text: `Job “${created.value.name}” created.`,
    });
  });

  /** The job's latest runs (newest first) and its last ended ones (oldest first), for the health chart. */
  async function runHistory(owner: Owner, id: string): Promise<{ latest: Run[]; ended: Run[] }> {
    let latest: Run[] = [];
    const ended: Run[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < HISTORY_PAGES; i++) {
      const page = await jobs.listRuns(owner, id, { limit: HISTORY_PAGE, cursor });
      if (i === 0) latest = page.items.slice(0, RUNS_SHOWN);
      ended.push(...page.items.filter((r) => r.status === 'success' || r.status === 'failed'));
      if (ended.length >= HISTORY_RUNS || !page.nextCursor) break;
      cursor = page.nextCursor;
    }
    return { latest, ended: ended.slice(0, HISTORY_RUNS).reverse() };
  }

  router.get('/jobs/:id', async (req, res) => {
    const owner = kit.owner(req);
    const id = String(req.params.id);
    const job = await jobs.get(owner, id);
    const [runs, preview] = await Promise.all([
      runHistory(owner, id),
      results.list(owner, id, { limit: PREVIEW_ROWS }),
    ]);
    const previewRun =
      runs.latest.find((r) => r.id === preview.runId) ??
      (preview.runId ? await jobs.getRun(owner, id, preview.runId) : undefined);
    kit.send(res, 200, jobDetailPage(await kit.page(req), job, runs, preview, previewRun));
  });

  router.get('/jobs/:id/runs/:runId', async (req, res) => {
    const owner = kit.owner(req);
    const id = String(req.params.id);
    const runId = String(req.params.runId);
    const text = (name: string) => (typeof req.query[name] === 'string' ? req.query[name] : undefined);
    const state = {
      status: URL_STATUSES.find((s) => s === req.query.status),
      cursor: text('cursor'),
      change: CHANGE_TYPES.find((t) => t === req.query.change),
      change_cursor: text('change_cursor'),
    };
    const [job, run, urls] = await Promise.all([
      jobs.get(owner, id),
      jobs.getRun(owner, id, runId),
      jobs.listRunUrls(owner, id, runId, { status: state.status, limit: URLS_SHOWN, cursor: state.cursor }),
    ]);
    // Without tracking, or before the run is compared, the page says so instead of a table.
    const changes =
      job.changeTracking && run.changes
        ? (
            await jobs.listRunChanges(owner, id, runId, {
              type: state.change,
              limit: CHANGES_SHOWN,
              cursor: state.change_cursor,
            })
          ).page
        : null;
    kit.send(res, 200, runPage(await kit.page(req), job, run, urls, changes, state));
  });

  // The PNG of a rendered URL (docs/api.md §14); the run page's thumbnails link here.
  router.get('/jobs/:id/runs/:runId/screenshots/:n', async (req, res) => {
    const { id, runId, n } = req.params;
    const png = await jobs.screenshot(kit.owner(req), String(id), String(runId), String(n));
    res.set({
      'Content-Type': screenshotType(png),
      'Content-Length': String(png.length),
      'Cache-Control': 'private',
    });
    res.end(png);
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

  // The API's query string (format, content, run_id, changes), checked by the API's schema.
  router.get('/jobs/:id/download', async (req, res) => {
    const query = downloadQuerySchema.safeParse(req.query);
    if (!query.success) {
      const problems = Object.entries(issuesToDetails(query.error.issues)).map(([k, m]) => `${k} ${m}`);
      return kit.send(
        res,
        400,
        errorPage(400, `The download cannot be made: ${problems.join('; ')}.`, kit.peek(req)),
      );
    }
    const { format, content, run_id: runId, changes } = query.data;
    const file = await results.download(kit.owner(req), String(req.params.id), {
      format,
      content,
      runId,
      changes,
    });
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
