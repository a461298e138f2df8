import type { Response } from 'supertest';
import { buildTestApi } from '../support/api.ts';
import { client, validJob } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { loadIntoPostgres, loadIntoSqlite, readCsv, readXlsx } from '../support/readers.ts';
import { testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

// Change tracking and extraction health (docs/api.md §13) end to end: the real API, a real
// scraper worker, a local shop whose items change between runs.

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let c: ReturnType<typeof client>;
let worker: Proc;
let site: Awaited<ReturnType<typeof startSite>>;
const prefix = testPrefix();

interface Item {
  sku: string;
  price: string;
  title: string;
}
/** The shop's items by page; tests change them between runs. */
let shop: Record<string, Item[]> = {};
/** The class the price is shown with: a new markup breaks the job's price query. */
let priceClass = 'price';

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  const { token } = await api.keys.create({
    email: 'watcher@example.com',
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write'],
    name: 'w',
  });
  c = client(api.app, token);
  site = await startSite((req, res) => {
    const items = shop[new URL(req.url ?? '/', 'http://site').pathname];
    if (!items) return false;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(
      `<!doctype html><ul>${items
        .map(
          (i) =>
            `<li class="item"><span class="sku">${i.sku}</span><b class="${priceClass}">${i.price}</b><i class="title">${i.title}</i></li>`,
        )
        .join('')}</ul>`,
    );
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

const QUERIES = [
  { name: 'sku', type: 'css', query: 'li.item .sku' },
  { name: 'price', type: 'css', query: 'li.item .price' },
  { name: 'title', type: 'css', query: 'li.item .title' },
];

const items = (...skus: number[]) =>
  skus.map((n) => ({ sku: `S${n}`, price: `${n}.00`, title: `Item ${n}` }));

async function createJob(over: Record<string, unknown> = {}) {
  const res = await c.post(
    '/jobs',
    validJob({ source: `${site.url}/shop/{a,b}`, queries: QUERIES, rate_limit: 6000, ...over }),
  );
  expect(res.status).toBe(201);
  return res.body.job_id as string;
}

/** Runs the job and waits until the run has ended and been analysed; returns the run. */
async function runAnalysed(jobId: string) {
  const started = await c.post(`/jobs/${jobId}/run`);
  expect(started.status).toBe(202);
  const runId = started.body.run_id as string;
  return until(async () => {
    const run = await c.get(`/jobs/${jobId}/runs/${runId}`);
    return run.body.health ? run.body : null;
  }, 30_000);
}

const binary = (res: Response, cb: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};

const download = (jobId: string, query: string) =>
  c.get(`/jobs/${jobId}/download?${query}`).buffer(true).parse(binary);

const eventsOf = async (jobId: string) =>
  (await tdb.db.event.findMany({ where: { jobId }, orderBy: { id: 'asc' } })).map((e) => ({
    kind: e.kind,
    data: e.data as Record<string, unknown>,
  }));

describe('change tracking', () => {
  it('compares each run with the one before: listed, paged, counted on the run, sent and downloaded', async () => {
    shop = { '/shop/a': items(1, 2, 3), '/shop/b': items(4, 5) };
    const jobId = await createJob({ change_tracking: { key: ['sku'] } });

    const first = await runAnalysed(jobId);
    expect(first).toEqual(
      expect.objectContaining({
        status: 'success',
        base_run_id: null,
        changes: { added: 5, removed: 0, changed: 0, unchanged: 0 },
        health: { status: 'ok', reasons: [] },
      }),
    );

    // S2's price changes, S3 goes, S6 comes (on one page: the order of pages stored may vary).
    shop = {
      '/shop/a': [...items(1), { sku: 'S2', price: '2.50', title: 'Item 2' }, ...items(6)],
      '/shop/b': items(4, 5),
    };
    const second = await runAnalysed(jobId);
    expect(second.base_run_id).toBe(first.run_id);
    expect(second.changes).toEqual({ added: 1, removed: 1, changed: 1, unchanged: 3 });

    const listed = await c.get(`/jobs/${jobId}/runs/${second.run_id}/changes`);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      job_id: jobId,
      run_id: second.run_id,
      base_run_id: first.run_id,
      summary: { added: 1, removed: 1, changed: 1, unchanged: 3, duplicate_keys: 0 },
      changes: [
        {
          type: 'changed',
          key: { sku: 'S2' },
          data: { url: `${site.url}/shop/a`, sku: 'S2', price: '2.50', title: 'Item 2' },
          previous: { url: `${site.url}/shop/a`, sku: 'S2', price: '2.00', title: 'Item 2' },
          changed_fields: ['price'],
        },
        {
          type: 'added',
          key: { sku: 'S6' },
          data: { url: `${site.url}/shop/a`, sku: 'S6', price: '6.00', title: 'Item 6' },
          previous: null,
          changed_fields: [],
        },
        {
          type: 'removed',
          key: { sku: 'S3' },
          data: null,
          previous: { url: `${site.url}/shop/a`, sku: 'S3', price: '3.00', title: 'Item 3' },
          changed_fields: [],
        },
      ],
      count: 3,
      next_cursor: null,
    });
    const removed = await c.get(`/jobs/${jobId}/runs/${second.run_id}/changes?type=removed`);
    expect(removed.body.changes.map((x: { key: unknown }) => x.key)).toEqual([{ sku: 'S3' }]);
    // One at a time, by the cursor.
    const keys: unknown[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page = await c.get(
        `/jobs/${jobId}/runs/${second.run_id}/changes?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.body.count).toBeLessThanOrEqual(1);
      keys.push(...page.body.changes.map((x: { key: unknown }) => x.key));
      cursor = page.body.next_cursor;
    }
    expect(keys).toEqual([{ sku: 'S2' }, { sku: 'S6' }, { sku: 'S3' }]);

    // job.changed follows each run's job.completed, with the run's counts.
    const events = (await eventsOf(jobId)).filter((e) => e.kind !== 'job.started');
    expect(events.map((e) => [e.kind, e.data.run_id])).toEqual([
      ['job.completed', first.run_id],
      ['job.changed', first.run_id],
      ['job.completed', second.run_id],
      ['job.changed', second.run_id],
    ]);
    expect(events[3]!.data).toEqual({
      job_id: jobId,
      job_name: 'Example',
      run_id: second.run_id,
      base_run_id: first.run_id,
      added: 1,
      removed: 1,
      changed: 1,
      changes_url: `https://scrape.example.com/jobs/${jobId}/runs/${second.run_id}/changes`,
    });

    // The download of changes, in each format, read back by an independent reader.
    const columns = ['change', 'url', 'scraped_at', 'sku', 'price', 'title'];
    const rowsOf = (table: { rows: (string | null)[][] }) =>
      table.rows.map(([change, url, , sku, price, title]) => [change, url, sku, price, title]);
    const expected = [
      ['changed', `${site.url}/shop/a`, 'S2', '2.50', 'Item 2'],
      ['removed', `${site.url}/shop/a`, 'S3', '3.00', 'Item 3'],
    ];
    const query = `run_id=${second.run_id}&changes=changed,removed`;
    const json = await download(jobId, `format=json&${query}`);
    expect(json.status).toBe(200);
    const records = JSON.parse((json.body as Buffer).toString()) as Record<string, string>[];
    expect(records.map((r) => Object.keys(r))).toEqual([columns, columns]);
    expect(records.map((r) => [r.change, r.url, r.sku, r.price, r.title])).toEqual(expected);
    const csv = readCsv((await download(jobId, `format=csv&${query}`)).body.toString());
    expect(csv.columns).toEqual(columns);
    expect(rowsOf(csv)).toEqual(expected);
    const xlsx = readXlsx((await download(jobId, `format=xlsx&${query}`)).body as Buffer);
    expect(xlsx.columns).toEqual(columns);
    expect(rowsOf(xlsx)).toEqual(expected);
    const sql = (await download(jobId, `format=sql&${query}`)).body.toString();
    expect(rowsOf(await loadIntoPostgres(sql))).toEqual(expected);
    expect(rowsOf(loadIntoSqlite(sql))).toEqual(expected);
    const added = JSON.parse(
      (await download(jobId, `run_id=${second.run_id}&changes=added`)).body.toString(),
    );
    expect(added.map((r: Record<string, string>) => [r.change, r.sku])).toEqual([['added', 'S6']]);

    // Nothing changed: the run is compared, and no job.changed is sent.
    const third = await runAnalysed(jobId);
    expect(third.changes).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 5 });
    expect((await eventsOf(jobId)).filter((e) => e.data.run_id === third.run_id).map((e) => e.kind)).toEqual([
      'job.started',
      'job.completed',
    ]);
  });

  it('marks a run degraded when a query stops matching, with job.degraded after its end event', async () => {
    shop = { '/shop/a': items(1, 2), '/shop/b': items(3) };
    priceClass = 'price';
    const jobId = await createJob();
    const healthy = await runAnalysed(jobId);
    expect(healthy).toEqual(
      expect.objectContaining({ health: { status: 'ok', reasons: [] }, changes: null, base_run_id: null }),
    );
    priceClass = 'amount';
    try {
      const broken = await runAnalysed(jobId);
      expect(broken.status).toBe('success');
      expect(broken.health).toEqual({
        status: 'degraded',
        reasons: [{ code: 'EMPTY_QUERY', query: 'price', message: expect.stringContaining('price') }],
      });
      const events = (await eventsOf(jobId)).filter((e) => e.data.run_id === broken.run_id);
      expect(events.map((e) => e.kind)).toEqual(['job.started', 'job.completed', 'job.degraded']);
      expect(events[2]!.data).toEqual({
        job_id: jobId,
        job_name: 'Example',
        run_id: broken.run_id,
        reasons: broken.health.reasons,
      });
      // A job without change tracking has no changes to list.
      const none = await c.get(`/jobs/${jobId}/runs/${broken.run_id}/changes`);
      expect(none.status).toBe(404);
      expect((await download(jobId, 'changes=added')).status).toBe(404);
    } finally {
      priceClass = 'price';
    }
  });
});
