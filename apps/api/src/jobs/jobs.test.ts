import { buildTestApi } from '../../../../test/support/api.ts';
import { client, validJob } from '../../../../test/support/client.ts';
import { until } from '../../../../test/support/processes.ts';
import { type Fixture, startFixture } from '../../../../test/support/results.ts';

let f: Fixture;

beforeAll(async () => {
  f = await startFixture();
});

afterAll(async () => {
  await f.close();
});

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function createJob(c = f.alice, over: Record<string, unknown> = {}) {
  const res = await c.post('/jobs', validJob(over));
  expect(res.status).toBe(201);
  return res.body as Record<string, unknown> & { job_id: string };
}

describe('POST /jobs', () => {
  it('creates a scheduled job with defaults filled in and a Location header', async () => {
    const res = await f.alice.post(
      '/jobs',
      validJob({ render_config: { enabled: true }, proxy_config: null }),
    );
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/jobs/${res.body.job_id}`);
    expect(res.body).toEqual({
      job_id: expect.stringMatching(/^job_[0-9A-Z]{26}$/),
      name: 'Example',
      source: 'https://example.com/items',
      status: 'scheduled',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
      last_run: null,
      last_run_id: null,
      results_count: 0,
      next_run_at: null,
      rate_limit: 10,
      queries: [{ name: 'title', type: 'css', query: 'h1', join: false }],
      formats: [],
      content: null,
      scheduling: null,
      render_config: {
        enabled: true,
        wait_strategy: 'load',
        wait_timeout_ms: 30000,
        actions: [],
        screenshot: false,
        screenshot_options: null,
        mode: 'always',
        block_resources: null,
      },
      proxy_config: null,
      crawl: null,
      change_tracking: null,
      request: null,
      retention_days: null,
      refetch: 'conditional',
      extract: null,
      mode: 'test',
      origin: 'api',
    });
  });

  it('trims the name and normalises scheduling (sorted values, minutes default [0], UTC)', async () => {
    const res = await f.alice.post(
      '/jobs',
      validJob({ name: '  spaced  ', scheduling: { hours: [5, 1], days: [] } }),
    );
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('spaced');
    expect(res.body.scheduling).toEqual({ days: [], hours: [1, 5], minutes: [0], timezone: 'UTC' });
  });

  it('accepts a fractional rate limit and every query type', async () => {
    const res = await f.alice.post(
      '/jobs',
      validJob({
        rate_limit: 0.5,
        queries: [
          { name: 'a', type: 'css', query: 'a::attr(href)' },
          { name: 'b', type: 'xpath', query: '//h1/text()', join: true },
          { name: 'c', type: 'regex', query: '/price: (\\d+)/i' },
        ],
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body.rate_limit).toBe(0.5);
    expect(res.body.queries[1]).toEqual({ name: 'b', type: 'xpath', query: '//h1/text()', join: true });
  });

  it('accepts the lowest rate limit, one request in 1,000 minutes', async () => {
    const res = await f.alice.post('/jobs', validJob({ rate_limit: 0.001 }));
    expect(res.status).toBe(201);
    expect(res.body.rate_limit).toBe(0.001);
  });

  const invalid: [string, Record<string, unknown> | unknown, string][] = [
    ['name missing', { source: 'https://x.y', queries: validJob().queries }, 'name'],
    ['name blank after trimming', validJob({ name: '   ' }), 'name'],
    ['name over 200 characters', validJob({ name: 'n'.repeat(201) }), 'name'],
    ['name not a string', validJob({ name: 5 }), 'name'],
    ['source not http(s)', validJob({ source: 'ftp://example.com/' }), 'source'],
    ['source relative', validJob({ source: '/items' }), 'source'],
    ['source over 2048 characters', validJob({ source: `https://e.com/${'a'.repeat(2040)}` }), 'source'],
    ['source glob over 1000 URLs', validJob({ source: 'https://e.com/[1-100]/[1-11]' }), 'source'],
    ['source malformed glob', validJob({ source: 'https://e.com/[1-' }), 'source'],
    ['queries empty', validJob({ queries: [] }), 'queries'],
    [
      'queries over 50',
      validJob({
        queries: Array.from({ length: 51 }, (_, i) => ({ name: `q${i}`, type: 'css', query: 'a' })),
      }),
      'queries',
    ],
    ['queries not an array', validJob({ queries: 'h1' }), 'queries'],
    ['query name empty', validJob({ queries: [{ name: '', type: 'css', query: 'a' }] }), 'queries[0].name'],
    [
      'query name over 64',
      validJob({ queries: [{ name: 'n'.repeat(65), type: 'css', query: 'a' }] }),
      'queries[0].name',
    ],
    [
      'query name starting with a digit',
      validJob({ queries: [{ name: '1st', type: 'css', query: 'a' }] }),
      'queries[0].name',
    ],
    [
      'query name with a space',
      validJob({ queries: [{ name: 'a b', type: 'css', query: 'a' }] }),
      'queries[0].name',
    ],
    [
      'duplicate query names',
      validJob({
        queries: [
          { name: 'a', type: 'css', query: 'a' },
          { name: 'a', type: 'css', query: 'b' },
        ],
      }),
      'queries[1].name',
    ],
    [
      'query type unknown',
      validJob({ queries: [{ name: 'a', type: 'json', query: 'a' }] }),
      'queries[0].type',
    ],
    ['query empty', validJob({ queries: [{ name: 'a', type: 'css', query: '' }] }), 'queries[0].query'],
    [
      'query over 2000 characters',
      validJob({ queries: [{ name: 'a', type: 'css', query: 'a'.repeat(2001) }] }),
      'queries[0].query',
    ],
    [
      'xpath syntax error',
      validJob({ queries: [{ name: 'a', type: 'xpath', query: '//div[' }] }),
      'queries[0].query',
    ],
    [
      'invalid css selector',
      validJob({ queries: [{ name: 'a', type: 'css', query: 'div[' }] }),
      'queries[0].query',
    ],
    [
      'invalid regex',
      validJob({ queries: [{ name: 'a', type: 'regex', query: '(unclosed' }] }),
      'queries[0].query',
    ],
    [
      'join not a boolean',
      validJob({ queries: [{ name: 'a', type: 'css', query: 'a', join: 'yes' }] }),
      'queries[0].join',
    ],
    ['rate_limit zero', validJob({ rate_limit: 0 }), 'rate_limit'],
    ['rate_limit negative', validJob({ rate_limit: -1 }), 'rate_limit'],
    ['rate_limit below 0.001', validJob({ rate_limit: 0.0009 }), 'rate_limit'],
    ['rate_limit the smallest double', validJob({ rate_limit: 5e-324 }), 'rate_limit'],
    ['rate_limit over 6000', validJob({ rate_limit: 6001 }), 'rate_limit'],
    ['rate_limit a string', validJob({ rate_limit: '10' }), 'rate_limit'],
    ['scheduling not an object', validJob({ scheduling: 'daily' }), 'scheduling'],
    ['scheduling day 7', validJob({ scheduling: { days: [7] } }), 'scheduling.days[0]'],
    ['scheduling hour 24', validJob({ scheduling: { hours: [1, 2, 24] } }), 'scheduling.hours[2]'],
    ['scheduling minute 60', validJob({ scheduling: { minutes: [60] } }), 'scheduling.minutes[0]'],
    ['scheduling fractional hour', validJob({ scheduling: { hours: [1.5] } }), 'scheduling.hours[0]'],
    ['scheduling duplicate minutes', validJob({ scheduling: { minutes: [5, 5] } }), 'scheduling.minutes'],
    [
      'scheduling unknown time zone',
      validJob({ scheduling: { timezone: 'Mars/Olympus' } }),
      'scheduling.timezone',
    ],
    [
      'render_config unknown wait strategy',
      validJob({ render_config: { wait_strategy: 'idle' } }),
      'render_config.wait_strategy',
    ],
    [
      'render_config timeout over 120000',
      validJob({ render_config: { wait_timeout_ms: 120001 } }),
      'render_config.wait_timeout_ms',
    ],
    [
      'render_config fractional timeout',
      validJob({ render_config: { wait_timeout_ms: 1.5 } }),
      'render_config.wait_timeout_ms',
    ],
    ['render_config unknown mode', validJob({ render_config: { mode: 'sometimes' } }), 'render_config.mode'],
    [
      'render_config block_resources not boolean',
      validJob({ render_config: { block_resources: 'yes' } }),
      'render_config.block_resources',
    ],
    [
      'render_config enabled not boolean',
      validJob({ render_config: { enabled: 1 } }),
      'render_config.enabled',
    ],
    [
      'proxy_config unknown rotation',
      validJob({ proxy_config: { rotation_strategy: 'lru' } }),
      'proxy_config.rotation_strategy',
    ],
    [
      'proxy_config bad country',
      validJob({ proxy_config: { geo_targeting: 'USA' } }),
      'proxy_config.geo_targeting',
    ],
    [
      'proxy enabled without configured proxies',
      validJob({ proxy_config: { enabled: true } }),
      'proxy_config',
    ],
    ['unknown top-level field', validJob({ colour: 'red' }), 'colour'],
    [
      'unknown query field',
      validJob({ queries: [{ name: 'a', type: 'css', query: 'a', selector: 'b' }] }),
      'queries[0].selector',
    ],
    ['unknown scheduling field', validJob({ scheduling: { weeks: [1] } }), 'scheduling.weeks'],
    ['body an array', [validJob()], 'body'],
  ];

  it.each(invalid)('rejects %s with a 400 at the field path', async (_name, body, path) => {
    const res = await f.alice.post('/jobs', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(typeof res.body.message).toBe('string');
    expect(Object.keys(res.body.details)).toContain(path);
    expect(typeof res.body.details[path]).toBe('string');
  });

  it('reports every violation at once', async () => {
    const res = await f.alice.post('/jobs', {
      name: '',
      source: 'nope',
      queries: [
        { name: 'ok', type: 'nope', query: 'a' },
        { name: 'ok2', type: 'xpath', query: '//[' },
      ],
      rate_limit: 0,
      scheduling: { hours: [1, 2, 99] },
      extra: true,
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({
      name: expect.any(String),
      source: expect.any(String),
      'queries[0].type': 'must be one of xpath, css, regex',
      'queries[1].query': expect.stringMatching(/^invalid xpath/),
      rate_limit: expect.any(String),
      'scheduling.hours[2]': 'must be at most 23',
      extra: 'unknown field',
    });
  });

  it('names every missing field of an empty body at once, queries with name and source', async () => {
    const res = await f.alice.post('/jobs', {});
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({
      name: expect.any(String),
      source: expect.any(String),
      queries: 'must have at least one query, unless formats names at least one or extract is given',
    });
    // A job that names formats needs no query, whatever else is wrong.
    const formats = await f.alice.post('/jobs', { formats: ['markdown'] });
    expect(Object.keys(formats.body.details).sort()).toEqual(['name', 'source']);
  });

  it('accepts proxies only when the operator configured one for the country', async () => {
    const proxied = buildTestApi({
      db: f.tdb.db,
      prefix: f.prefix,
      proxies: [{ url: 'http://127.0.0.1:9', country: 'DE' }],
    });
    try {
      const c = client(
        proxied.app,
        (await f.api.keys.create({ email: 'p@example.com', mode: 'test', scopes: ['jobs:write'], name: 'p' }))
          .token,
      );
      const ok = await c.post('/jobs', validJob({ proxy_config: { enabled: true, geo_targeting: 'de' } }));
      expect(ok.status).toBe(201);
      expect(ok.body.proxy_config).toEqual({
        enabled: true,
        rotation_strategy: 'round_robin',
        geo_targeting: 'DE',
      });
      const bad = await c.post('/jobs', validJob({ proxy_config: { enabled: true, geo_targeting: 'FR' } }));
      expect(bad.status).toBe(400);
      expect(bad.body.details.proxy_config).toMatch(/FR/);
    } finally {
      await proxied.close();
    }
  });
});

describe('GET /jobs/status', () => {
  it('gives a user without jobs an empty page', async () => {
    const c = await f.keyClient('empty@example.com', 'test', ['jobs:read']);
    const res = await c.get('/jobs/status');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ jobs: [], count: 0, next_cursor: null });
  });

  it('lists only the caller jobs in the caller mode, newest first, with cursor paging', async () => {
    const c = await f.keyClient('lister@example.com');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createJob(c, { name: `job ${i}` })).job_id);
    const first = await c.get('/jobs/status?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.count).toBe(2);
    expect(first.body.jobs.map((j: { job_id: string }) => j.job_id)).toEqual([ids[4], ids[3]]);
    expect(Object.keys(first.body.jobs[0]).sort()).toEqual(
      ['created_at', 'job_id', 'last_run', 'name', 'next_run_at', 'results_count', 'source', 'status'].sort(),
    );
    const seen = [...first.body.jobs];
    let cursor = first.body.next_cursor;
    while (cursor) {
      const page = await c.get(`/jobs/status?limit=2&cursor=${cursor}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.jobs);
      cursor = page.body.next_cursor;
    }
    expect(seen.map((j) => j.job_id)).toEqual([...ids].reverse());
    const all = await c.get('/jobs/status');
    expect(all.body).toEqual(expect.objectContaining({ count: 5, next_cursor: null }));
    // A page that ends exactly at the last job has no next page.
    const exact = await c.get('/jobs/status?limit=5');
    expect(exact.body).toEqual(expect.objectContaining({ count: 5, next_cursor: null }));
    const past = await c.get(`/jobs/status?limit=4`);
    const last = await c.get(`/jobs/status?limit=4&cursor=${past.body.next_cursor}`);
    expect(last.body).toEqual({ jobs: [seen[4]], count: 1, next_cursor: null });
  });

  it('filters by status', async () => {
    const c = await f.keyClient('filter@example.com');
    const a = await createJob(c);
    await createJob(c);
    expect((await c.post(`/jobs/${a.job_id}/pause`)).status).toBe(200);
    const paused = await c.get('/jobs/status?status=paused');
    expect(paused.body.jobs.map((j: { job_id: string }) => j.job_id)).toEqual([a.job_id]);
    expect((await c.get('/jobs/status?status=scheduled')).body.count).toBe(1);
  });

  it('gives each job the very fields and values of its detail, in every state', async () => {
    const c = await f.keyClient('fields@example.com');
    const plain = await createJob(c, { name: 'plain' });
    const timed = await createJob(c, {
      name: 'timed',
      scheduling: { hours: [23], minutes: [59], timezone: 'Asia/Kolkata' },
    });
    const ran = await createJob(c, { name: 'ran' });
    expect((await c.post(`/jobs/${ran.job_id}/run`)).status).toBe(202);
    await f.tdb.db.job.update({ where: { id: ran.job_id }, data: { resultsCount: 1234 } });
    const listed = (await c.get('/jobs/status')).body.jobs as Record<string, unknown>[];
    expect(listed.map((j) => j.job_id)).toEqual([ran.job_id, timed.job_id, plain.job_id]);
    for (const item of listed) {
      const detail = (await c.get(`/jobs/${item.job_id}`)).body;
      expect(item).toEqual(Object.fromEntries(Object.keys(item).map((k) => [k, detail[k]])));
    }
    expect(listed[0]).toEqual(expect.objectContaining({ status: 'running', results_count: 1234 }));
    expect(listed[0]!.last_run).toMatch(ISO_MS);
    expect(listed[1]!.next_run_at).toEqual(expect.stringMatching(/T18:29:00\.000Z$/));
  });

  it('filters by status and pages with a cursor together', async () => {
    const c = await f.keyClient('both@example.com');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await createJob(c, { name: `p${i}` })).job_id);
    await createJob(c, { name: 'not paused' });
    for (const id of ids) expect((await c.post(`/jobs/${id}/pause`)).status).toBe(200);
    const first = await c.get('/jobs/status?status=paused&limit=3');
    expect(first.body.jobs.map((j: { job_id: string }) => j.job_id)).toEqual([ids[3], ids[2], ids[1]]);
    const rest = await c.get(`/jobs/status?status=paused&limit=3&cursor=${first.body.next_cursor}`);
    expect(rest.body).toEqual(
      expect.objectContaining({
        count: 1,
        next_cursor: null,
        jobs: [expect.objectContaining({ job_id: ids[0] })],
      }),
    );
  });

  it('keeps other users and the other mode out', async () => {
    const mine = await createJob(f.alice);
    const live = await createJob(f.aliceLive);
    const bobs = (await f.bob.get('/jobs/status?limit=1000')).body.jobs.map(
      (j: { job_id: string }) => j.job_id,
    );
    expect(bobs).not.toContain(mine.job_id);
    const liveIds = (await f.aliceLive.get('/jobs/status?limit=1000')).body.jobs.map(
      (j: { job_id: string }) => j.job_id,
    );
    expect(liveIds).toEqual([live.job_id]);
  });

  it.each([
    ['status=done', 'status'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=abc', 'limit'],
    ['cursor=garbage', 'cursor'],
    ['sort=asc', 'sort'],
  ])('rejects ?%s at %s', async (qs, path) => {
    const res = await f.alice.get(`/jobs/status?${qs}`);
    expect(res.status).toBe(400);
    expect(res.body.details).toHaveProperty([path]);
  });
});

describe('GET /jobs/{id}', () => {
  it('returns the detail of an own job', async () => {
    const job = await createJob();
    const res = await f.alice.get(`/jobs/${job.job_id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(job);
  });

  it.each([
    ['another user', () => f.bob],
    ['the other mode of the same user', () => f.aliceLive],
  ])('is 404 for %s', async (_n, who) => {
    const job = await createJob();
    const res = await who().get(`/jobs/${job.job_id}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
  });

  it.each([
    'job_01ZZZZZZZZZZZZZZZZZZZZZZZZ',
    'nope',
    'job_',
    "job_'; drop table jobs;--",
    'run_01JDQ3ZZZZZZZZZZZZZZZZZZZZ',
  ])('is 404 for unknown or malformed id %s', async (id) => {
    const res = await f.alice.get(`/jobs/${encodeURIComponent(id)}`);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });
});

describe('PUT and PATCH /jobs/{id}', () => {
  it('changes only the given fields and ignores read-only ones sent back', async () => {
    const job = await createJob(f.alice, { scheduling: { hours: [3] }, render_config: { enabled: true } });
    const res = await f.alice.put(`/jobs/${job.job_id}`, {
      ...job,
      name: 'Renamed',
      status: 'failed',
      job_id: 'job_x',
      rate_limit: 60,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...job,
      name: 'Renamed',
      rate_limit: 60,
      updated_at: expect.stringMatching(ISO_MS),
    });
  });

  it('clears scheduling, render_config and proxy_config with null (PATCH too)', async () => {
    const job = await createJob(f.alice, { scheduling: { hours: [3] }, render_config: { enabled: true } });
    const res = await f.alice.patch(`/jobs/${job.job_id}`, { scheduling: null, render_config: null });
    expect(res.status).toBe(200);
    expect(res.body.scheduling).toBeNull();
    expect(res.body.render_config).toBeNull();
    expect(res.body.queries).toEqual(job.queries);
  });

  it('validates like create', async () => {
    const job = await createJob();
    const res = await f.alice.put(`/jobs/${job.job_id}`, {
      queries: [{ name: 'a', type: 'xpath', query: '//[' }],
      name: null,
      typo: 1,
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.details).sort()).toEqual(['name', 'queries[0].query', 'typo']);
    expect((await f.alice.get(`/jobs/${job.job_id}`)).body.name).toBe('Example');
  });

  it('is 404 for another user job and leaves it unchanged', async () => {
    const job = await createJob();
    expect((await f.bob.put(`/jobs/${job.job_id}`, { name: 'x' })).status).toBe(404);
    expect((await f.alice.get(`/jobs/${job.job_id}`)).body.name).toBe('Example');
  });
});

describe('DELETE /jobs/{id}', () => {
  it('deletes the job with its runs, then answers 404', async () => {
    const job = await createJob();
    await f.api.listening;
    const run = await f.alice.post(`/jobs/${job.job_id}/run`);
    const res = await f.alice.delete(`/jobs/${job.job_id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    // Published before the answer; heard by the test's subscriber a moment later.
    await until(async () => f.api.cancelled.includes(run.body.run_id) || null, 5_000);
    expect((await f.alice.get(`/jobs/${job.job_id}`)).status).toBe(404);
    expect((await f.alice.delete(`/jobs/${job.job_id}`)).status).toBe(404);
    expect(await f.tdb.db.run.count({ where: { jobId: job.job_id } })).toBe(0);
  });

  it('is 404 for another user', async () => {
    const job = await createJob();
    expect((await f.bob.delete(`/jobs/${job.job_id}`)).status).toBe(404);
    expect((await f.alice.get(`/jobs/${job.job_id}`)).status).toBe(200);
  });
});

describe('run, pause, resume (docs/api.md §3.8)', () => {
  it('run records a running run and a job.started event, and tells the workers', async () => {
    const job = await createJob();
    await f.api.listening;
    const res = await f.alice.post(`/jobs/${job.job_id}/run`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      job_id: job.job_id,
      run_id: expect.stringMatching(/^run_/),
      status: 'running',
    });
    const detail = (await f.alice.get(`/jobs/${job.job_id}`)).body;
    expect(detail.status).toBe('running');
    expect(detail.last_run_id).toBe(res.body.run_id);
    expect(detail.last_run).toMatch(ISO_MS);
    await until(async () => f.api.started.includes(res.body.run_id));
    const events = await f.tdb.db.event.findMany({ where: { jobId: job.job_id } });
    expect(events.map((e) => [e.kind, e.data])).toEqual([
      [
        'job.started',
        {
          job_id: job.job_id,
          job_name: 'Example',
          run_id: res.body.run_id,
          status: 'running',
          trigger: 'manual',
        },
      ],
    ]);
    const runs = await f.alice.get(`/jobs/${job.job_id}/runs`);
    expect(runs.body).toEqual({
      job_id: job.job_id,
      count: 1,
      next_cursor: null,
      runs: [
        {
          run_id: res.body.run_id,
          status: 'running',
          trigger: 'manual',
          started_at: detail.last_run,
          finished_at: null,
          duration_ms: null,
          results_count: 0,
          successful_urls: 0,
          failed_urls: 0,
          skipped_urls: 0,
          error: null,
          base_run_id: null,
          changes: null,
          health: null,
        },
      ],
    });
  });

  it('two simultaneous runs give exactly one 202 and one 409', async () => {
    for (let round = 0; round < 5; round++) {
      const job = await createJob();
      const statuses = (
        await Promise.all([f.alice.post(`/jobs/${job.job_id}/run`), f.alice.post(`/jobs/${job.job_id}/run`)])
      ).map((r) => r.status);
      expect(statuses.sort()).toEqual([202, 409]);
      expect(await f.tdb.db.run.count({ where: { jobId: job.job_id } })).toBe(1);
    }
  });

  it('run of a running job is 409 conflict', async () => {
    const job = await createJob();
    await f.alice.post(`/jobs/${job.job_id}/run`);
    const res = await f.alice.post(`/jobs/${job.job_id}/run`);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'conflict', message: expect.any(String) });
  });

  it('pause of a running job cancels the run, emits job.paused and asks the worker to stop', async () => {
    const job = await createJob();
    await f.api.listening;
    const run = (await f.alice.post(`/jobs/${job.job_id}/run`)).body;
    const res = await f.alice.post(`/jobs/${job.job_id}/pause`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('paused');
    expect(res.body.next_run_at).toBeNull();
    const stored = await f.tdb.db.run.findUniqueOrThrow({ where: { id: run.run_id } });
    expect(stored.status).toBe('cancelled');
    expect(stored.finishedAt).not.toBeNull();
    await until(async () => f.api.cancelled.includes(run.run_id) || null, 5_000);
    const kinds = (
      await f.tdb.db.event.findMany({ where: { jobId: job.job_id }, orderBy: { id: 'asc' } })
    ).map((e) => e.kind);
    expect(kinds).toEqual(['job.started', 'job.paused']);
  });

  it('pause of an idle job pauses it; pause or run of a paused job is 409; resume makes it scheduled', async () => {
    const job = await createJob();
    expect((await f.alice.post(`/jobs/${job.job_id}/pause`)).status).toBe(200);
    expect((await f.alice.post(`/jobs/${job.job_id}/pause`)).status).toBe(409);
    expect((await f.alice.post(`/jobs/${job.job_id}/run`)).status).toBe(409);
    const resumed = await f.alice.post(`/jobs/${job.job_id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe('scheduled');
    expect((await f.alice.post(`/jobs/${job.job_id}/run`)).status).toBe(202);
  });

  it.each(['scheduled', 'running'])('resume of a %s job is 409', async (state) => {
    const job = await createJob();
    if (state === 'running') await f.alice.post(`/jobs/${job.job_id}/run`);
    expect((await f.alice.post(`/jobs/${job.job_id}/resume`)).status).toBe(409);
  });

  it.each(['success', 'failed'] as const)('a %s job can run again and be paused', async (state) => {
    const job = await createJob();
    await f.tdb.db.job.update({ where: { id: job.job_id }, data: { status: state } });
    expect((await f.alice.post(`/jobs/${job.job_id}/run`)).status).toBe(202);
    const other = await createJob();
    await f.tdb.db.job.update({ where: { id: other.job_id }, data: { status: state } });
    expect((await f.alice.post(`/jobs/${other.job_id}/pause`)).body.status).toBe('paused');
  });

  it.each(['run', 'pause', 'resume'])('%s is 404 for another user and for an unknown id', async (action) => {
    const job = await createJob();
    expect((await f.bob.post(`/jobs/${job.job_id}/${action}`)).status).toBe(404);
    expect((await f.alice.post(`/jobs/job_01ZZZZZZZZZZZZZZZZZZZZZZZZ/${action}`)).status).toBe(404);
    expect((await f.alice.get(`/jobs/${job.job_id}`)).body.status).toBe('scheduled');
  });

  it('accepts an empty JSON body on run', async () => {
    const job = await createJob();
    const res = await f.alice
      .post(`/jobs/${job.job_id}/run`)
      .set('Content-Type', 'application/json')
      .send('{}');
    expect(res.status).toBe(202);
  });
});

describe('GET /jobs/{id}/runs', () => {
  it('pages newest first and is 404 for another user', async () => {
    const job = await createJob();
    const runIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      runIds.push((await f.alice.post(`/jobs/${job.job_id}/run`)).body.run_id);
      await f.tdb.db.job.update({ where: { id: job.job_id }, data: { status: 'success' } });
    }
    const first = await f.alice.get(`/jobs/${job.job_id}/runs?limit=2`);
    expect(first.body.runs.map((r: { run_id: string }) => r.run_id)).toEqual([runIds[2], runIds[1]]);
    const second = await f.alice.get(`/jobs/${job.job_id}/runs?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.runs.map((r: { run_id: string }) => r.run_id)).toEqual([runIds[0]]);
    expect(second.body.next_cursor).toBeNull();
    expect((await f.bob.get(`/jobs/${job.job_id}/runs`)).status).toBe(404);
  });
});
