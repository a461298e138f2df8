import { buildTestApi } from '../support/api.ts';
import { client, validJob } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

// Unchanged pages (docs/api.md §20) end to end: the real API and a real scraper worker against a
// local site whose pages send ETags, Last-Modified, or no validators, and change between runs.

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let c: ReturnType<typeof client>;
let worker: Proc;
let site: Awaited<ReturnType<typeof startSite>>;
const prefix = testPrefix();

/** The site's pages: their items, which tests change between runs. */
const pages = new Map<string, string[]>();
/** Each request: its path, the validators it sent, the status it got. */
const requests: { path: string; ifNoneMatch?: string; ifModifiedSince?: string; status: number }[] = [];
const LAST_MODIFIED = 'Wed, 21 Oct 2026 07:28:00 GMT';

const html = (path: string, items: string[]) =>
  `<!doctype html><h1>${path}</h1><ul>${items
    .map((item) => `<li class="item"><span class="name">${item}</span></li>`)
    .join(
      '',
    )}</ul>${items.map((item) => `<a href="${path.replace(/\/[^/]*$/, '')}/${item}">${item}</a>`).join('')}`;

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  const { token } = await api.keys.create({
    email: 'unchanged@example.com',
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write'],
    name: 'u',
  });
  c = client(api.app, token);
  site = await startSite((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    const items = pages.get(path);
    if (!items) return false;
    const body = html(path, items);
    const etag = `"${Buffer.from(body).toString('base64url').slice(-16)}"`;
    const seen = {
      path,
      ...(req.headers['if-none-match'] && { ifNoneMatch: req.headers['if-none-match'] }),
      ...(req.headers['if-modified-since'] && { ifModifiedSince: req.headers['if-modified-since'] }),
    };
    const kind = path.split('/')[1];
    if (kind === 'etag') res.setHeader('ETag', etag);
    if (kind === 'dated') res.setHeader('Last-Modified', LAST_MODIFIED);
    const notModified =
      (kind === 'etag' && req.headers['if-none-match'] === etag) ||
      (kind === 'dated' && req.headers['if-modified-since'] === LAST_MODIFIED);
    requests.push({ ...seen, status: notModified ? 304 : 200 });
    if (notModified) {
      res.writeHead(304).end();
      return true;
    }
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(body);
    return true;
  });
  worker = startApp('scraper-worker', scraperWorkerEnv(tdb.url, prefix.prefix));
  await worker.waitForLog((l) => l.msg === 'scraper worker started');
});

afterAll(async () => {
  await worker.kill('SIGTERM');
  await api.close();
  await site.close();
  await tdb.drop();
  await prefix.cleanup();
});

const QUERIES = [{ name: 'name', type: 'css', query: 'li.item .name' }];

async function createJob(over: Record<string, unknown>) {
  const res = await c.post('/jobs', validJob({ queries: QUERIES, rate_limit: 6000, ...over }));
  expect(res.status).toBe(201);
  return res.body.job_id as string;
}

async function startRun(jobId: string): Promise<string> {
  const started = await c.post(`/jobs/${jobId}/run`);
  expect(started.status).toBe(202);
  return started.body.run_id as string;
}

/** Runs the job to its end; returns the run, its URL items by path and its records. */
const runToEnd = async (jobId: string) => runEnded(jobId, await startRun(jobId));

/** Waits for the run's end; returns the run, its URL items by path and its records. */
async function runEnded(jobId: string, runId: string) {
  const run = await until(async () => {
    const res = await c.get(`/jobs/${jobId}/runs/${runId}`);
    return res.body.status === 'running' ? null : res.body;
  }, 30_000);
  const urls = (await c.get(`/jobs/${jobId}/runs/${runId}/urls?limit=1000`)).body.urls as {
    url: string;
    status: string;
    http_status: number | null;
    records: number | null;
    unchanged: boolean;
  }[];
  const results = (await c.get(`/jobs/${jobId}/results?run_id=${runId}&limit=1000`)).body;
  const byPath = Object.fromEntries(
    urls.map((u) => [new URL(u.url).pathname, [u.status, u.http_status, u.unchanged, u.records]]),
  );
  return { run, byPath, results };
}

const since = (count: number) => requests.slice(count);
const names = (results: { results?: { data?: { name?: string } }[] }) =>
  JSON.stringify(results)
    .match(/item-\w+/g)
    ?.sort() ?? [];

describe('unchanged pages (docs/api.md §20)', () => {
  it('asks with the ETag or Last-Modified of the last fetch: a 304 copies records, results and counts', async () => {
    pages.set('/etag/a', ['item-a1', 'item-a2']);
    pages.set('/etag/b', ['item-b1']);
    pages.set('/dated/c', ['item-c1', 'item-c2', 'item-c3']);
    const jobId = await createJob({ source: `${site.url}/{etag/a,etag/b,dated/c}` });
    const first = await runToEnd(jobId);
    expect(first.run).toEqual(expect.objectContaining({ status: 'success', results_count: 6 }));
    expect(first.byPath).toEqual({
      '/etag/a': ['success', 200, false, 2],
      '/etag/b': ['success', 200, false, 1],
      '/dated/c': ['success', 200, false, 3],
    });

    const before = requests.length;
    const second = await runToEnd(jobId);
    expect(second.run).toEqual(expect.objectContaining({ status: 'success', results_count: 6 }));
    expect(second.byPath).toEqual({
      '/etag/a': ['success', 304, true, 2],
      '/etag/b': ['success', 304, true, 1],
      '/dated/c': ['success', 304, true, 3],
    });
    expect(
      since(before)
        .map((r) => [r.path, r.status, Boolean(r.ifNoneMatch || r.ifModifiedSince)])
        .sort(),
    ).toEqual([
      ['/dated/c', 304, true],
      ['/etag/a', 304, true],
      ['/etag/b', 304, true],
    ]);
    expect(names(second.results)).toEqual(names(first.results));
    expect(names(second.results)).toHaveLength(6);
  });

  it('without validators, a 200 with the same body is copied; a changed page is extracted again', async () => {
    pages.set('/plain/a', ['item-p1']);
    pages.set('/plain/b', ['item-p2']);
    const jobId = await createJob({ source: `${site.url}/plain/{a,b}` });
    await runToEnd(jobId);
    pages.set('/plain/b', ['item-p2', 'item-p3']);
    const before = requests.length;
    const second = await runToEnd(jobId);
    expect(second.byPath).toEqual({
      '/plain/a': ['success', 200, true, 1],
      '/plain/b': ['success', 200, false, 2],
    });
    expect(since(before).every((r) => !r.ifNoneMatch && !r.ifModifiedSince)).toBe(true);
    expect(names(second.results)).toEqual(['item-p1', 'item-p2', 'item-p3']);
  });

  it('fetches and extracts everything with refetch: always, and after the queries change', async () => {
    pages.set('/etag/always', ['item-x1']);
    const always = await createJob({ source: `${site.url}/etag/always`, refetch: 'always' });
    await runToEnd(always);
    const before = requests.length;
    const again = await runToEnd(always);
    expect(again.byPath).toEqual({ '/etag/always': ['success', 200, false, 1] });
    expect(since(before)).toEqual([{ path: '/etag/always', status: 200 }]);

    pages.set('/etag/changed', ['item-y1']);
    const jobId = await createJob({ source: `${site.url}/etag/changed` });
    await runToEnd(jobId);
    const updated = await c.put(`/jobs/${jobId}`, {
      queries: [...QUERIES, { name: 'title', type: 'css', query: 'h1' }],
    });
    expect(updated.status).toBe(200);
    const afterUpdate = requests.length;
    const third = await runToEnd(jobId);
    expect(third.byPath).toEqual({ '/etag/changed': ['success', 200, false, 1] });
    expect(since(afterUpdate)).toEqual([{ path: '/etag/changed', status: 200 }]);
    expect(JSON.stringify(third.results)).toContain('/etag/changed');
  });

  it('a crawl whose pages all answer 304 reaches the same URLs through the links of their last run', async () => {
    pages.set('/etag/crawl/start', ['one', 'two']);
    pages.set('/etag/crawl/one', ['three']);
    pages.set('/etag/crawl/two', []);
    pages.set('/etag/crawl/three', []);
    const jobId = await createJob({
      source: `${site.url}/etag/crawl/start`,
      crawl: { follow: [{ type: 'css', query: 'a::attr(href)' }], max_depth: 3, max_pages: 100 },
    });
    const first = await runToEnd(jobId);
    expect(Object.keys(first.byPath).sort()).toEqual([
      '/etag/crawl/one',
      '/etag/crawl/start',
      '/etag/crawl/three',
      '/etag/crawl/two',
    ]);
    const second = await runToEnd(jobId);
    expect(second.run.status).toBe('success');
    expect(second.byPath).toEqual(
      Object.fromEntries(
        Object.entries(first.byPath).map(([path, [status, , , records]]) => [
          path,
          [status, 304, true, records],
        ]),
      ),
    );
  });
});

describe('a worker SIGKILLed while it copies unchanged pages (docs/api.md §20)', () => {
  it('leaves nothing half-copied, and the worker that takes the URLs over copies every page once', async () => {
    const paths = Array.from({ length: 12 }, (_, i) => `/etag/kill/${i}`);
    paths.forEach((path, i) => {
      pages.set(path, [`item-k${i}a`, `item-k${i}b`]);
    });
    const jobId = await createJob({ source: `${site.url}/etag/kill/[0-11]` });
    const first = await runToEnd(jobId);
    expect(first.run).toEqual(expect.objectContaining({ status: 'success', results_count: 24 }));
    // Short leases: the URLs of the worker killed below are taken over soon.
    await worker.kill('SIGTERM');
    const startWorker = async () => {
      worker = startApp('scraper-worker', scraperWorkerEnv(tdb.url, prefix.prefix, { RUN_LOCK_MS: '2000' }));
      await worker.waitForLog((l) => l.msg === 'scraper worker started');
    };
    await startWorker();

    // This test shares the job's validators: a batch of copies plans them (a share lock too) and
    // copies its pages' records and documents, then waits here to point the validators at its run.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = () => {};
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const lock = tdb.db.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT 1 FROM page_validators WHERE job_id = ${jobId} FOR SHARE`;
        locked();
        await held;
      },
      { timeout: 60_000 },
    );
    await lockTaken;
    const runId = await startRun(jobId);
    const copying = () => tdb.db.$queryRaw<{ pid: number; state: string; wait_event_type: string | null }[]>`
      SELECT pid, state, wait_event_type FROM pg_stat_activity
       WHERE query LIKE '%UPDATE page_validators v%' AND query NOT LIKE '%pg_stat_activity%'`;
    await until(async () => (await copying()).some((b) => b.wait_event_type === 'Lock'));
    await worker.kill('SIGKILL');
    release();
    await lock;
    // The dead worker's transaction goes on until it waits for its client, which is gone: rolled back.
    await until(async () => (await copying()).length === 0);
    expect(await tdb.db.resultPage.count({ where: { runId } })).toBe(0);
    expect(await tdb.db.runDocument.count({ where: { runId } })).toBe(0);
    expect(await tdb.db.pageValidators.count({ where: { jobId, sourceRunId: runId } })).toBe(0);

    await startWorker();
    const second = await runEnded(jobId, runId);
    expect(second.run).toEqual(expect.objectContaining({ status: 'success', results_count: 24 }));
    expect(second.byPath).toEqual(Object.fromEntries(paths.map((path) => [path, ['success', 304, true, 2]])));
    expect(names(second.results)).toEqual(names(first.results));
    expect(names(second.results)).toHaveLength(24);
    expect(await tdb.db.resultPage.count({ where: { runId } })).toBe(12);
    expect(await tdb.db.pageValidators.count({ where: { jobId, sourceRunId: runId } })).toBe(12);
  });
});
