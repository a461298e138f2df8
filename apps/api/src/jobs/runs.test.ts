import { createHash } from 'node:crypto';
import request from 'supertest';
import { validJob } from '../../../../test/support/client.ts';
import { type Fixture, startFixture } from '../../../../test/support/results.ts';

// One run, and its URLs one by one (docs/api.md §12). URL states are written straight into
// run_urls, as the scraper workers leave them.

let f: Fixture;

beforeAll(async () => {
  f = await startFixture();
});

afterAll(async () => {
  await f.close();
});

/** A job of `c` with one run started through the API. */
async function jobWithRun(c = f.alice) {
  const job = (await c.post('/jobs', validJob())).body as { job_id: string };
  const run = (await c.post(`/jobs/${job.job_id}/run`)).body as { run_id: string };
  expect(run.run_id).toMatch(/^run_/);
  return { jobId: job.job_id, runId: run.run_id };
}

interface UrlRow {
  seq: number;
  url: string;
  kind?: 'page' | 'robots' | 'sitemap';
  status?: 'pending' | 'active' | 'success' | 'failed' | 'skipped';
  depth?: number;
  parentSeq?: number | null;
  httpStatus?: number | null;
  records?: number | null;
  durationMs?: number | null;
  fetchedAt?: Date | null;
  errorCode?: string | null;
  errorMessage?: string | null;
  unchanged?: boolean;
}

async function insertUrls(runId: string, rows: UrlRow[]) {
  await f.tdb.db.runUrl.createMany({
    data: rows.map((r) => ({
      runId,
      ...r,
      urlKey: createHash('sha256')
        .update(`${r.kind ?? 'page'} ${r.url}`)
        .digest()
        .subarray(0, 16),
    })),
  });
}

const FETCHED = new Date('2026-11-21T10:00:01.250Z');

describe('GET /jobs/{id}/runs/{run_id}', () => {
  it('answers the run as the run list shows it, skipped_urls included', async () => {
    const { jobId, runId } = await jobWithRun();
    await f.tdb.db.run.update({
      where: { id: runId },
      data: { successfulUrls: 7, failedUrls: 2, skippedUrls: 4, resultsCount: 21 },
    });
    const res = await f.alice.get(`/jobs/${jobId}/runs/${runId}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      run_id: runId,
      status: 'running',
      trigger: 'manual',
      started_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      finished_at: null,
      duration_ms: null,
      results_count: 21,
      successful_urls: 7,
      failed_urls: 2,
      skipped_urls: 4,
      error: null,
      base_run_id: null,
      changes: null,
      health: null,
    });
    expect((await f.alice.get(`/jobs/${jobId}/runs`)).body.runs).toEqual([res.body]);
  });

  it('is 404 for a run of another user, of the other mode, or of another job of the same user', async () => {
    const { jobId, runId } = await jobWithRun();
    const other = await jobWithRun();
    const liveJob = (await f.aliceLive.post('/jobs', validJob())).body.job_id as string;
    for (const [c, path, what] of [
      [f.bob, `/jobs/${jobId}/runs/${runId}`, 'Job'],
      [f.aliceLive, `/jobs/${jobId}/runs/${runId}`, 'Job'],
      [f.aliceLive, `/jobs/${liveJob}/runs/${runId}`, 'Run'],
      [f.alice, `/jobs/${other.jobId}/runs/${runId}`, 'Run'],
      [f.alice, `/jobs/${jobId}/runs/${other.runId}`, 'Run'],
    ] as const) {
      const res = await c.get(path);
      expect([path, res.status, res.body]).toEqual([
        path,
        404,
        { error: 'not_found', message: `${what} not found.` },
      ]);
    }
  });

  it.each([
    'run_01ZZZZZZZZZZZZZZZZZZZZZZZZ',
    'nope',
    'run_',
    'job_01JDQ3ZZZZZZZZZZZZZZZZZZZZ',
    "run_'; drop table runs;--",
    'run_%ZZ',
  ])('is 404 for the unknown or malformed run id %s', async (id) => {
    const { jobId } = await jobWithRun();
    const path = `/jobs/${jobId}/runs/${id.includes('%') ? id : encodeURIComponent(id)}`;
    const res = await f.alice.get(path);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
    expect((await f.alice.get(`${path}/urls`)).status).toBe(404);
  });

  it('is 404 under a malformed job id', async () => {
    const { runId } = await jobWithRun();
    for (const id of ['nope', 'job_%ZZ', runId]) {
      expect((await f.alice.get(`/jobs/${id}/runs/${runId}`)).status).toBe(404);
      expect((await f.alice.get(`/jobs/${id}/runs/${runId}/urls`)).status).toBe(404);
    }
  });

  it('needs a key (401) with the jobs:read scope (403), for the run and for its URLs', async () => {
    const { jobId, runId } = await jobWithRun();
    const writer = await f.keyClient('alice@example.com', 'test', ['jobs:write']);
    const reader = await f.keyClient('alice@example.com', 'test', ['jobs:read']);
    for (const path of [`/jobs/${jobId}/runs/${runId}`, `/jobs/${jobId}/runs/${runId}/urls`]) {
      const anonymous = await request(f.api.app).get(path);
      expect([anonymous.status, anonymous.body.error]).toEqual([401, 'unauthorized']);
      const forbidden = await writer.get(path);
      expect(forbidden.body).toEqual({ error: 'forbidden', message: expect.any(String), status: 403 });
      expect((await reader.get(path)).status).toBe(200);
    }
  });

  it('answers 405 with Allow for another method', async () => {
    const { jobId, runId } = await jobWithRun();
    for (const path of [`/jobs/${jobId}/runs/${runId}`, `/jobs/${jobId}/runs/${runId}/urls`]) {
      const res = await f.alice.delete(path);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
    }
  });
});

describe('GET /jobs/{id}/runs/{run_id}/urls', () => {
  /** A crawl's frontier: a robots.txt and a sitemap read, and pages in every state. */
  async function crawledRun() {
    const { jobId, runId } = await jobWithRun();
    await insertUrls(runId, [
      { seq: 0, kind: 'robots', url: 'https://example.com/robots.txt', status: 'success', httpStatus: 200 },
      {
        seq: 1,
        url: 'https://example.com/items',
        status: 'success',
        httpStatus: 304,
        unchanged: true,
        records: 3,
        durationMs: 120,
        fetchedAt: FETCHED,
      },
      { seq: 2, kind: 'sitemap', url: 'https://example.com/sitemap.xml', status: 'success', parentSeq: 0 },
      {
        seq: 3,
        url: 'https://example.com/items?page=2',
        status: 'failed',
        depth: 1,
        parentSeq: 1,
        httpStatus: 503,
        durationMs: 80,
        fetchedAt: FETCHED,
        errorCode: 'HTTP_ERROR',
        errorMessage: 'HTTP 503 Service Unavailable',
      },
      {
        seq: 4,
        url: 'https://example.com/private/a',
        status: 'skipped',
        parentSeq: 2,
        errorCode: 'ROBOTS_DISALLOWED',
        errorMessage: 'robots.txt disallows this URL',
      },
      { seq: 5, url: 'https://example.com/items?page=3', status: 'active', depth: 1, parentSeq: 1 },
      { seq: 6, url: 'https://example.com/item/<b>"1"</b>', status: 'pending', depth: 2, parentSeq: 3 },
      {
        seq: 7,
        url: 'https://example.com/items?page=4',
        status: 'skipped',
        depth: 1,
        parentSeq: 1,
        errorCode: 'MAX_PAGES',
        errorMessage: 'the run reached max_pages (5)',
      },
    ]);
    return { jobId, runId, base: `/jobs/${jobId}/runs/${runId}/urls` };
  }

  const none = {
    http_status: null,
    records: null,
    duration_ms: null,
    fetched_at: null,
    error: null,
    unchanged: false,
    screenshot_url: null,
    warning: null,
    rendered: null,
    render_reason: null,
  };
  const ITEMS = {
    1: {
      url: 'https://example.com/items',
      status: 'success',
      depth: 0,
      parent_url: null,
      http_status: 304,
      records: 3,
      duration_ms: 120,
      fetched_at: '2026-11-21T10:00:01.250Z',
      error: null,
      unchanged: true,
      screenshot_url: null,
      warning: null,
      rendered: null,
      render_reason: null,
    },
    3: {
      url: 'https://example.com/items?page=2',
      status: 'failed',
      depth: 1,
      parent_url: 'https://example.com/items',
      http_status: 503,
      records: null,
      duration_ms: 80,
      fetched_at: '2026-11-21T10:00:01.250Z',
      error: { code: 'HTTP_ERROR', message: 'HTTP 503 Service Unavailable' },
      unchanged: false,
      screenshot_url: null,
      warning: null,
      rendered: null,
      render_reason: null,
    },
    4: {
      ...none,
      url: 'https://example.com/private/a',
      status: 'skipped',
      depth: 0,
      parent_url: 'https://example.com/sitemap.xml',
      error: { code: 'ROBOTS_DISALLOWED', message: 'robots.txt disallows this URL' },
      screenshot_url: null,
    },
    5: {
      ...none,
      url: 'https://example.com/items?page=3',
      status: 'pending',
      depth: 1,
      parent_url: 'https://example.com/items',
    },
    6: {
      ...none,
      url: 'https://example.com/item/<b>"1"</b>',
      status: 'pending',
      depth: 2,
      parent_url: 'https://example.com/items?page=2',
    },
    7: {
      ...none,
      url: 'https://example.com/items?page=4',
      status: 'skipped',
      depth: 1,
      parent_url: 'https://example.com/items',
      error: { code: 'MAX_PAGES', message: 'the run reached max_pages (5)' },
      screenshot_url: null,
    },
  } as const;

  it('lists the pages of the run in the order accepted, with parent URL, outcome and error', async () => {
    const { jobId, runId, base } = await crawledRun();
    const res = await f.alice.get(base);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      job_id: jobId,
      run_id: runId,
      urls: [ITEMS[1], ITEMS[3], ITEMS[4], ITEMS[5], ITEMS[6], ITEMS[7]],
      count: 6,
      next_cursor: null,
    });
  });

  it.each([
    ['pending', [5, 6]],
    ['success', [1]],
    ['failed', [3]],
    ['skipped', [4, 7]],
  ] as const)('filters by status %s (pending includes URLs being fetched)', async (status, seqs) => {
    const { base } = await crawledRun();
    const res = await f.alice.get(`${base}?status=${status}`);
    expect(res.status).toBe(200);
    expect(res.body.urls).toEqual(seqs.map((s) => ITEMS[s]));
    expect(res.body.count).toBe(seqs.length);
    expect(res.body.next_cursor).toBeNull();
  });

  it('answers an empty page for a run without URLs yet', async () => {
    const { jobId, runId } = await jobWithRun();
    const res = await f.alice.get(`/jobs/${jobId}/runs/${runId}/urls?status=failed`);
    expect(res.body).toEqual({ job_id: jobId, run_id: runId, urls: [], count: 0, next_cursor: null });
  });

  describe('paging', () => {
    const STATES = ['success', 'pending', 'failed', 'active', 'skipped'] as const;
    let base: string;

    beforeAll(async () => {
      const run = await jobWithRun();
      base = `/jobs/${run.jobId}/runs/${run.runId}/urls`;
      // 53 pages in turn through every state, with a sitemap among them that is never listed.
      const rows: UrlRow[] = Array.from({ length: 54 }, (_, seq) =>
        seq === 20
          ? { seq, kind: 'sitemap', url: 'https://example.com/sitemap.xml' }
          : { seq, url: `https://example.com/p/${seq}`, status: STATES[seq % STATES.length]! },
      );
      await insertUrls(run.runId, rows);
    });

    /** Every page of `query`, following next_cursor, with the page sizes seen. */
    async function walk(query: string) {
      const urls: string[] = [];
      const sizes: number[] = [];
      let cursor: string | null = null;
      do {
        const res = await f.alice.get(`${base}?${query}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        expect(res.body.count).toBe(res.body.urls.length);
        urls.push(...res.body.urls.map((u: { url: string }) => u.url));
        sizes.push(res.body.count);
        cursor = res.body.next_cursor;
      } while (cursor);
      return { urls, sizes };
    }

    const expected = (states: readonly string[]) =>
      Array.from({ length: 54 }, (_, seq) => seq)
        .filter((seq) => seq !== 20 && states.includes(STATES[seq % STATES.length]!))
        .map((seq) => `https://example.com/p/${seq}`);

    it('pages through every URL in order, the last page without a next cursor', async () => {
      const all = await walk('limit=10');
      expect(all.urls).toEqual(expected(STATES));
      expect(all.sizes).toEqual([10, 10, 10, 10, 10, 3]);
      // The same pages again: the order is stable.
      expect((await walk('limit=10')).urls).toEqual(all.urls);
      expect((await walk('limit=1000')).sizes).toEqual([53]);
    });

    it('ends exactly at the last URL without an empty page after it', async () => {
      expect((await walk('limit=53')).sizes).toEqual([53]);
      const pending = expected(['pending', 'active']);
      expect((await walk(`status=pending&limit=${pending.length}`)).sizes).toEqual([pending.length]);
    });

    it('pages through a status filter, pending and fetching URLs merged in order', async () => {
      const pending = await walk('status=pending&limit=4');
      expect(pending.urls).toEqual(expected(['pending', 'active']));
      expect(pending.sizes.slice(0, -1).every((n) => n === 4)).toBe(true);
      expect((await walk('status=failed&limit=3')).urls).toEqual(expected(['failed']));
    });
  });

  it.each([
    ['cursor=garbage', 'cursor'],
    [`cursor=${Buffer.from('job_01JDQ3ZZZZZZZZZZZZZZZZZZZZ').toString('base64url')}`, 'cursor'],
    [`cursor=${Buffer.from('-1').toString('base64url')}`, 'cursor'],
    [`cursor=${Buffer.from('1.5').toString('base64url')}`, 'cursor'],
    [`cursor=${Buffer.from('99999999999').toString('base64url')}`, 'cursor'],
    ['cursor=%ZZ', 'cursor'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=abc', 'limit'],
    ['status=active', 'status'],
    ['status=done', 'status'],
    ['sort=desc', 'sort'],
  ])('rejects ?%s with a 400 at %s', async (qs, path) => {
    const { base } = await crawledRun();
    const res = await f.alice.get(`${base}?${qs}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(Object.keys(res.body.details)).toEqual([path]);
  });

  it('is 404 for another user, the other mode, and a run of another job', async () => {
    const { jobId, runId, base } = await crawledRun();
    const other = await jobWithRun();
    expect((await f.bob.get(base)).status).toBe(404);
    expect((await f.aliceLive.get(base)).status).toBe(404);
    expect((await f.alice.get(`/jobs/${other.jobId}/runs/${runId}/urls`)).status).toBe(404);
    expect((await f.alice.get(`/jobs/${jobId}/runs/${other.runId}/urls`)).status).toBe(404);
  });
});
