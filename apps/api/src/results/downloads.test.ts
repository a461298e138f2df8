import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { newId } from '@scrapejobs/db';
import { Accounts } from '@scrapejobs/domain';
import type { Response } from 'supertest';
import { loadIntoPostgres, loadIntoSqlite, readCsv, readXlsx } from '../../../../test/support/readers.ts';
import {
  createJob,
  type Fixture,
  insertPage,
  type SeedRecord,
  seedRun,
  startFixture,
} from '../../../../test/support/results.ts';

let f: Fixture;
let job: string;
let run: string;

const names = ['title', 'price', 'note'];
// Values that break naive writers; a NUL cannot be stored at all (jsonb and text reject it), so
// formats.test.ts covers it on the encoders.
const tricky = [
  'He said "hi", then left',
  "it's O'Brien's",
  'line one\nline two\r\nline three',
  '=HYPERLINK("http://evil.test")',
  '+1',
  '-2',
  '@cmd',
  '\tindented',
  '  spaced  ',
  'emoji 😀 and ünïcödé',
  'back\\slash :var \\q',
  '\n\\q\n.quit\nSELECT 1;',
  '',
];
const stored: SeedRecord[] = tricky.map((value, i) => ({
  url: `https://site.test/p/${i}?a=1,b=2`,
  data: {
    title: value,
    price: i % 3 === 0 ? null : String(i * 10),
    note: i === 4 ? undefined : `n${i}`,
  } as Record<string, string | null>,
  scrapedAt: new Date(Date.UTC(2026, 10, 21, 10, 0, 0, i)),
}));
const iso = (i: number) => new Date(Date.UTC(2026, 10, 21, 10, 0, 0, i)).toISOString();
/** The stored records as rows of the download columns: url, scraped_at, title, price, note. */
const expectedRows = stored.map((r, i) => [r.url, iso(i), ...names.map((n) => r.data[n] ?? null)]);

beforeAll(async () => {
  f = await startFixture();
  job = await createJob(f.alice, names);
  run = await seedRun(f.tdb.db, job, stored);
});

afterAll(async () => {
  await f.close();
});

const binary = (res: Response, cb: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};

async function download(format: string | null, jobId = job, c = f.alice) {
  const q = format === null ? '' : `?format=${format}`;
  return c.get(`/jobs/${jobId}/download${q}`).buffer(true).parse(binary);
}

describe('GET /jobs/{id}/download', () => {
  it('gives json by default: an array of flat objects, url and scraped_at first', async () => {
    const res = await download(null);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json\b/);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${job}-${run}.json"`);
    const body = JSON.parse((res.body as Buffer).toString());
    expect(body).toEqual(
      expectedRows.map(([url, scraped_at, title, price, note]) => ({ url, scraped_at, title, price, note })),
    );
    expect(Object.keys(body[0])).toEqual(['url', 'scraped_at', ...names]);
  });

  it('gives RFC 4180 csv that csv-parse reads back, formula cells guarded with a quote', async () => {
    const res = await download('csv');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${job}-${run}.csv"`);
    const text = (res.body as Buffer).toString();
    expect(text.startsWith('url,scraped_at,title,price,note\r\n')).toBe(true);
    const guard = (v: string | null) => (v === null ? '' : /^[=+\-@\t\r]/.test(v) ? `'${v}` : v);
    expect(readCsv(text)).toEqual({
      columns: ['url', 'scraped_at', ...names],
      rows: expectedRows.map((r) => r.map(guard)),
    });
  });

  it('guards formulas after leading white space and in full-width form, read back intact after the quote', async () => {
    const values = [
      ' =1+1',
      '\u00a0@SUM(A1)',
      '\ufeff+1',
      '\n-1',
      '\uff1d1+1',
      '\uff0b1',
      '\uff0d1',
      '\uff20x',
    ];
    const guarded = await createJob(f.alice, ['v']);
    const guardedRun = await seedRun(
      f.tdb.db,
      guarded,
      values.map((v, i) => ({ url: `https://site.test/${i}`, data: { v } })),
    );
    const res = await f.alice
      .get(`/jobs/${guarded}/download?format=csv&run_id=${guardedRun}`)
      .buffer(true)
      .parse(binary);
    expect(res.status).toBe(200);
    const { rows } = readCsv((res.body as Buffer).toString());
    expect(rows.map((r) => r[2])).toEqual(values.map((v) => `'${v}`));
  });

  it('gives an xlsx workbook with one sheet "results" that SheetJS reads back as text', async () => {
    const res = await download('xlsx');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    );
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${job}-${run}.xlsx"`);
    const book = readXlsx(res.body as Buffer);
    expect(book.sheets).toEqual(['results']);
    expect(book.columns).toEqual(['url', 'scraped_at', ...names]);
    // An empty string and a missing value are both an empty cell.
    expect(book.rows).toEqual(expectedRows.map((r) => r.map((v) => (v === '' ? null : v))));
  });

  it('gives sql that psql loads into PostgreSQL and sqlite3 into SQLite, values intact', async () => {
    const res = await download('sql');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/sql\b/);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${job}-${run}.sql"`);
    const text = (res.body as Buffer).toString();
    expect(text).toContain(
      'CREATE TABLE IF NOT EXISTS "scrape_results" ("url" text, "scraped_at" text, "title" text, "price" text, "note" text);',
    );
    const table = { columns: ['url', 'scraped_at', ...names], rows: expectedRows };
    expect(await loadIntoPostgres(text)).toEqual(table);
    expect(loadIntoSqlite(text)).toEqual(table);
  });

  it('downloads the run given by run_id', async () => {
    const other = await seedRun(f.tdb.db, job, [{ url: 'https://site.test/old', data: { title: 'old' } }], {
      startedAt: new Date(Date.now() - 60_000),
    });
    const res = await f.alice
      .get(`/jobs/${job}/download?format=json&run_id=${other}`)
      .buffer(true)
      .parse(binary);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${job}-${other}.json"`);
    expect(JSON.parse((res.body as Buffer).toString())).toEqual([
      { url: 'https://site.test/old', scraped_at: expect.any(String), title: 'old', price: null, note: null },
    ]);
  });

  it("gives the records of pages of many records page by page, each page's in row order", async () => {
    const other = await seedRun(f.tdb.db, job, [], { startedAt: new Date(Date.now() - 30_000) });
    const sizes = [600, 1, 250];
    for (const [urlIndex, size] of sizes.entries())
      await insertPage(f.tdb.db, other, {
        url: `https://site.test/many/${urlIndex}`,
        urlIndex,
        records: Array.from({ length: size }, (_, row) => ({ title: `${urlIndex}.${row}` })),
      });
    const res = await f.alice
      .get(`/jobs/${job}/download?format=csv&run_id=${other}`)
      .buffer(true)
      .parse(binary);
    const { rows } = readCsv((res.body as Buffer).toString());
    expect(rows.map((r) => [r[0], r[2]])).toEqual(
      sizes.flatMap((size, page) =>
        Array.from({ length: size }, (_, row) => [`https://site.test/many/${page}`, `${page}.${row}`]),
      ),
    );
  });

  it('answers 400 at format for another format', async () => {
    for (const format of ['pdf', 'CSV', '']) {
      const res = await f.alice.get(`/jobs/${job}/download?format=${format}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'validation_error',
        message: expect.any(String),
        details: { format: 'must be one of json, jsonl, csv, xlsx, sql' },
      });
    }
  });

  it("answers 404 for another user's job, the other mode, and a run of another job", async () => {
    for (const c of [f.bob, f.aliceLive]) {
      const res = await c.get(`/jobs/${job}/download?format=csv`);
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not_found');
    }
    const otherJob = await createJob(f.alice, ['title']);
    const otherRun = await seedRun(f.tdb.db, otherJob, []);
    for (const runId of [otherRun, newId('run'), 'x']) {
      const res = await f.alice.get(`/jobs/${job}/download?run_id=${runId}`);
      expect(res.status).toBe(404);
    }
  });

  it('gives an empty file with its header for a job that never ran', async () => {
    const fresh = await createJob(f.alice, ['title', 'price']);
    const json = await download('json', fresh);
    expect(json.headers['content-disposition']).toBe(`attachment; filename="${fresh}-none.json"`);
    expect((json.body as Buffer).toString()).toBe('[]');
    const csv = await download('csv', fresh);
    expect((csv.body as Buffer).toString()).toBe('url,scraped_at,title,price\r\n');
    const xlsx = readXlsx((await download('xlsx', fresh)).body as Buffer);
    expect(xlsx).toEqual({ sheets: ['results'], columns: ['url', 'scraped_at', 'title', 'price'], rows: [] });
    const sql = ((await download('sql', fresh)).body as Buffer).toString();
    expect(sql).not.toContain('INSERT');
    expect(loadIntoSqlite(sql)).toEqual({ columns: ['url', 'scraped_at', 'title', 'price'], rows: [] });
  });

  it('is listed in the OpenAPI document with its query parameters', async () => {
    const res = await f.alice.get('/openapi.json');
    const op = res.body.paths['/jobs/{id}/download'].get;
    expect(op['x-scope']).toBe('jobs:read');
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual([
      'id',
      'format',
      'content',
      'run_id',
      'changes',
    ]);
    expect(res.body.paths['/jobs/{id}/results'].get.parameters.map((p: { name: string }) => p.name)).toEqual([
      'id',
      'run_id',
      'limit',
      'cursor',
    ]);
  });
});

describe('streaming', () => {
  let big: string;
  let server: http.Server;
  let token: string;

  beforeAll(async () => {
    // About 100 MB of csv: far more than the socket buffers of both ends (up to ~36 MB here), so
    // a client that stops reading really holds the server back.
    big = await createJob(f.alice, ['a', 'b']);
    const bigRun = await seedRun(f.tdb.db, big, []);
    await f.tdb.db.pool.query(
      `INSERT INTO result_pages (run_id, url_index, url, scraped_at, records, id_base, data)
       SELECT $1, g, 'https://site.test/' || g, now(), 1, lpad(g::text, 23, '0'),
              jsonb_build_array(jsonb_build_object('a', repeat('x', 1600), 'b', g::text))
       FROM generate_series(1, 60000) g`,
      [bigRun],
    );
    server = f.api.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    token = (
      await f.api.keys.create({ email: 'alice@example.com', mode: 'test', scopes: ['jobs:read'], name: 's' })
    ).token;
  });

  // Requests a test leaves open when it fails, so the next test starts with a free pool.
  const afterThis: (() => void)[] = [];
  afterEach(() => {
    for (const end of afterThis.splice(0)) end();
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  /** Starts a download and stops reading after the first chunk, like a slow client. */
  async function pausedDownload(format = 'csv', method = 'GET') {
    const req = http.request({
      method,
      host: '127.0.0.1',
      port: (server.address() as AddressInfo).port,
      path: `/jobs/${big}/download?format=${format}`,
      headers: { Authorization: `Bearer ${token}` },
    });
    req.end();
    const res = await new Promise<http.IncomingMessage>((resolve) => req.once('response', resolve));
    if (res.statusCode === 200 && method === 'GET') {
      await new Promise((r) => res.once('data', r));
      res.pause();
    }
    return { req, res };
  }

  const fetching = async () =>
    (
      await f.tdb.db.pool.query<{ pid: number; state: string; since: Date }>(
        `SELECT pid, state, state_change AS since FROM pg_stat_activity
         WHERE datname = current_database() AND query LIKE 'FETCH % FROM download'`,
      )
    ).rows;

  async function until(check: () => Promise<boolean>, ms = 5_000) {
    for (const end = Date.now() + ms; Date.now() < end && !(await check()); )
      await new Promise((r) => setTimeout(r, 30));
    return check();
  }

  /** The download's session has been idle, cursor open, for a while: the server stopped fetching. */
  const heldBack = () =>
    until(async () => {
      const [s] = await fetching();
      return s?.state === 'idle in transaction' && Date.now() - s.since.getTime() > 300;
    }, 10_000);

  const released = () => f.tdb.db.pool.idleCount === f.tdb.db.pool.totalCount;

  it('reads from a cursor as the client reads, and frees the connection when the client goes away', async () => {
    const { req, res } = await pausedDownload('csv');
    try {
      expect(res.statusCode).toBe(200);
      // The client stopped reading: the server stops fetching and waits, its cursor open.
      expect(await heldBack()).toBe(true);
    } finally {
      req.destroy();
    }
    expect(await until(async () => (await fetching()).length === 0 && released())).toBe(true);
  });

  it('cuts the response, never completing the file, when the database fails mid-stream', async () => {
    const { req, res } = await pausedDownload('json');
    afterThis.push(() => req.destroy());
    expect(await until(async () => (await fetching()).length === 1)).toBe(true);
    const [session] = await fetching();
    const ended = new Promise<string>((resolve) => {
      res.on('aborted', () => resolve('aborted'));
      res.on('error', () => resolve('error'));
      res.on('end', () => resolve(res.complete ? 'complete' : 'aborted'));
    });
    await f.tdb.db.pool.query('SELECT pg_terminate_backend($1)', [session!.pid]);
    res.resume();
    expect(await ended).not.toBe('complete');
    expect(await until(async () => released())).toBe(true);
    // The API keeps serving.
    expect((await f.alice.get(`/jobs/${big}/results?limit=1`)).status).toBe(200);
  });

  it('answers HEAD with the headers only, without holding a connection', async () => {
    const { res } = await pausedDownload('csv', 'HEAD');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toMatch(/\.csv"$/);
    res.resume();
    expect(await until(async () => (await fetching()).length === 0 && released())).toBe(true);
  });

  /** A signed-in console session of alice, through the console's own sign-in form. */
  async function consoleCookie(): Promise<string> {
    await new Accounts(f.tdb.db).create('alice@example.com', 'a long enough password');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const form = await fetch(`${base}/console/login`);
    const nonce = form.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const signedIn = await fetch(`${base}/console/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { Cookie: nonce, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        email: 'alice@example.com',
        password: 'a long enough password',
        _csrf: csrf,
      }),
    });
    expect(signedIn.status).toBe(303);
    return signedIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .join('; ');
  }

  /** A console download that stops reading after its first chunk. */
  async function pausedConsoleDownload(cookie: string) {
    const req = http.request({
      host: '127.0.0.1',
      port: (server.address() as AddressInfo).port,
      path: `/console/jobs/${big}/download?format=csv`,
      headers: { Cookie: cookie },
    });
    req.end();
    const res = await new Promise<http.IncomingMessage>((resolve) => req.once('response', resolve));
    if (res.statusCode === 200) {
      await new Promise((r) => res.once('data', r));
      res.pause();
    }
    return { req, res };
  }

  it('counts API and console downloads against one limit, so together they never take more of the pool', async () => {
    const cookie = await consoleCookie();
    const open = [await pausedDownload(), await pausedConsoleDownload(cookie)];
    afterThis.push(...open.map((d) => () => d.req.destroy()));
    expect(open.map((d) => d.res.statusCode)).toEqual([200, 200]);
    expect((await f.alice.get(`/jobs/${big}/download?format=csv`)).status).toBe(503);
    const third = await pausedConsoleDownload(cookie);
    afterThis.push(() => third.req.destroy());
    expect(third.res.statusCode).toBe(503);
    expect(await fetching()).toHaveLength(2);
  });

  it('answers 503 past the concurrent download limit (half the pool), and frees the slots', async () => {
    const open = [await pausedDownload(), await pausedDownload()];
    afterThis.push(...open.map((d) => () => d.req.destroy()));
    const refused = await f.alice.get(`/jobs/${big}/download?format=csv`);
    expect(refused.status).toBe(503);
    expect(refused.body.error).toBe('service_unavailable');
    expect(refused.headers['retry-after']).toBe('5');
    for (const d of open) d.req.destroy();
    expect(await until(async () => (await fetching()).length === 0)).toBe(true);
    const again = await download('json', job);
    expect(again.status).toBe(200);
  });
});
