import type { Request, Router } from 'express';
import type { ConsoleDeps } from '../deps.ts';
import type { Kit } from '../http/kit.ts';
import { documentPage, documentsPage } from '../views/documents.ts';
import { errorPage } from '../views/errors.ts';

/** Documents a page of the list shows (docs/api.md §17: the API's default page). */
const DOCUMENTS_SHOWN = 20;

const text = (req: Request, name: string) =>
  typeof req.query[name] === 'string' ? req.query[name] : undefined;

/** A run's documents (docs/api.md §17), page by page, and each one on its own page. */
export function documentsRoutes(router: Router, kit: Kit, deps: ConsoleDeps): void {
  const { jobs, results } = deps.services;

  router.get('/jobs/:id/runs/:runId/documents', async (req, res) => {
    const owner = kit.owner(req);
    const id = String(req.params.id);
    const runId = String(req.params.runId);
    const [job, run, list] = await Promise.all([
      jobs.get(owner, id),
      jobs.getRun(owner, id, runId),
      results.listDocuments(owner, id, runId, { limit: DOCUMENTS_SHOWN, cursor: text(req, 'cursor') }),
    ]);
    kit.send(res, 200, documentsPage(await kit.page(req), job, run, list));
  });

  router.get('/jobs/:id/runs/:runId/documents/view', async (req, res) => {
    const owner = kit.owner(req);
    const id = String(req.params.id);
    const runId = String(req.params.runId);
    const url = text(req, 'url');
    const [job, run, list] = await Promise.all([
      jobs.get(owner, id),
      jobs.getRun(owner, id, runId),
      url === undefined ? null : results.listDocuments(owner, id, runId, { url, limit: 1 }),
    ]);
    const doc = list?.items[0];
    if (!doc)
      return kit.send(res, 404, errorPage(404, 'This run kept no document of that URL.', kit.peek(req)));
    kit.send(res, 200, documentPage(await kit.page(req), job, run, doc));
  });
}
