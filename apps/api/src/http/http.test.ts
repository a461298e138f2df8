import { once } from 'node:events';
import request from 'supertest';
import { buildTestApi } from '../../../../test/support/api.ts';
import { client, validJob } from '../../../../test/support/client.ts';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
import { testPrefix } from '../../../../test/support/redis.ts';

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
const prefix = testPrefix();
let token: string;

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  token = (
    await api.keys.create({
      email: 'http@example.com',
      mode: 'test',
      scopes: ['jobs:read', 'jobs:write'],
      name: 'h',
    })
  ).token;
});

afterAll(async () => {
  await api.close();
  await tdb.drop();
  await prefix.cleanup();
});

describe('authentication (docs/api.md §2)', () => {
  const unauthorized = { error: 'unauthorized', message: expect.any(String), status: 401 };

  it.each([
    ['no Authorization header', undefined],
    ['a non-Bearer scheme', 'Basic dXNlcjpwYXNz'],
    ['Bearer without a token', 'Bearer '],
    ['a token of invalid format', 'Bearer sk_prod_abcdefghijklmnopqrstuvwxyz'],
    ['a token that is too short', 'Bearer sk_test_abc'],
    ['a well-formed unknown token', `Bearer sk_test_${'A'.repeat(32)}`],
  ])('answers 401 for %s', async (_n, header) => {
    const req = request(api.app).get('/jobs/status');
    const res = await (header ? req.set('Authorization', header) : req);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthorized);
  });

  it('answers 401 for a revoked key and for the old token after regeneration', async () => {
    const revoked = await api.keys.create({
      email: 'http@example.com',
      mode: 'test',
      scopes: ['jobs:read'],
      name: 'r',
    });
    expect((await client(api.app, revoked.token).get('/jobs/status')).status).toBe(200);
    await api.keys.revoke(revoked.key.key_id);
    expect((await client(api.app, revoked.token).get('/jobs/status')).body).toEqual(unauthorized);

    const old = await api.keys.create({
      email: 'http@example.com',
      mode: 'test',
      scopes: ['jobs:read'],
      name: 'g',
    });
    const fresh = await api.keys.regenerate(old.key.key_id);
    expect((await client(api.app, old.token).get('/jobs/status')).status).toBe(401);
    expect((await client(api.app, fresh.token).get('/jobs/status')).status).toBe(200);
    expect(fresh.key).toEqual(expect.objectContaining({ name: 'g', mode: 'test', scopes: ['jobs:read'] }));
  });

  it('records when a key was last used', async () => {
    const k = await api.keys.create({
      email: 'http@example.com',
      mode: 'test',
      scopes: ['jobs:read'],
      name: 'u',
    });
    await client(api.app, k.token).get('/jobs/status');
    await new Promise((r) => setTimeout(r, 100));
    const stored = await tdb.db.apiKey.findUniqueOrThrow({ where: { id: k.key.key_id } });
    expect(stored.lastUsedAt).not.toBeNull();
    expect(stored.tokenHash).not.toContain(k.token.slice(8));
  });
});

describe('scopes', () => {
  const forbidden = { error: 'forbidden', message: expect.stringMatching(/scope/), status: 403 };

  it('answers 403 for a read-only key on every write endpoint, and 200 on reads', async () => {
    const writer = client(api.app, token);
    const job = (await writer.post('/jobs', validJob())).body;
    const reader = client(
      api.app,
      (await api.keys.create({ email: 'http@example.com', mode: 'test', scopes: ['jobs:read'], name: 'ro' }))
        .token,
    );
    expect((await reader.get('/jobs/status')).status).toBe(200);
    expect((await reader.get(`/jobs/${job.job_id}`)).status).toBe(200);
    expect((await reader.get(`/jobs/${job.job_id}/runs`)).status).toBe(200);
    for (const res of [
      await reader.post('/jobs', validJob()),
      await reader.put(`/jobs/${job.job_id}`, { name: 'x' }),
      await reader.patch(`/jobs/${job.job_id}`, { name: 'x' }),
      await reader.delete(`/jobs/${job.job_id}`),
      await reader.post(`/jobs/${job.job_id}/run`),
      await reader.post(`/jobs/${job.job_id}/pause`),
      await reader.post(`/jobs/${job.job_id}/resume`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual(forbidden);
    }
  });

  it('answers 403 for a write-only key on reads', async () => {
    const writer = client(
      api.app,
      (await api.keys.create({ email: 'http@example.com', mode: 'test', scopes: ['jobs:write'], name: 'wo' }))
        .token,
    );
    expect((await writer.get('/jobs/status')).body).toEqual(forbidden);
  });

  it('answers 403 for a webhooks-only key on jobs', async () => {
    const hooks = client(
      api.app,
      (
        await api.keys.create({
          email: 'http@example.com',
          mode: 'test',
          scopes: ['webhooks:read', 'webhooks:write'],
          name: 'wh',
        })
      ).token,
    );
    expect((await hooks.post('/jobs', validJob())).status).toBe(403);
  });
});

describe('protocol errors (docs/api.md §1)', () => {
  it('answers 404 not_found for an unknown route, even without a token', async () => {
    const res = await request(api.app).get('/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
  });

  it.each([
    ['DELETE', '/jobs/status', 'GET, HEAD'],
    ['PATCH', '/jobs', 'POST'],
    ['GET', '/jobs', 'POST'],
    ['GET', '/jobs/job_01ZZZZZZZZZZZZZZZZZZZZZZZZ/run', 'POST'],
    ['POST', '/jobs/job_01ZZZZZZZZZZZZZZZZZZZZZZZZ', 'GET, HEAD, PUT, PATCH, DELETE'],
  ])('answers 405 with Allow for %s %s', async (method, path, allow) => {
    const res = await request(api.app)
      [method.toLowerCase() as 'get'](path)
      .set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ error: 'method_not_allowed', message: expect.any(String) });
    expect(res.headers.allow?.split(', ').sort()).toEqual(allow.split(', ').sort());
  });

  it('answers 415 for a body that is not JSON', async () => {
    const res = await request(api.app)
      .post('/jobs')
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'text/plain')
      .send('name=x');
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: 'unsupported_media_type', message: expect.any(String) });
  });

  it('answers 415 for a form body on run', async () => {
    const res = await request(api.app)
      .post('/jobs/job_01ZZZZZZZZZZZZZZZZZZZZZZZZ/run')
      .set('Authorization', `Bearer ${token}`)
      .type('form')
      .send({ a: 1 });
    expect(res.status).toBe(415);
  });

  it('answers 400 at body for malformed JSON', async () => {
    const res = await request(api.app)
      .post('/jobs')
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/json')
      .send('{"name": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'validation_error',
      message: expect.any(String),
      details: { body: expect.stringMatching(/JSON/) },
    });
  });

  it('answers 400 at body for an empty body on create', async () => {
    const res = await request(api.app).post('/jobs').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({ body: 'is required' });
  });

  it('answers 413 for a body over 1 MiB', async () => {
    const res = await request(api.app)
      .post('/jobs')
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(validJob({ name: 'x'.repeat(1024 * 1024) })));
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'payload_too_large', message: expect.any(String) });
  });

  it('echoes X-Request-Id, or generates one', async () => {
    const echoed = await request(api.app).get('/health').set('X-Request-Id', 'abc-123');
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const generated = await request(api.app).get('/nope');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('API rate limit (docs/api.md §8)', () => {
  it('sets RateLimit headers and answers 429 with retry_after past the limit, per key, shared in Redis', async () => {
    const limited = buildTestApi({ db: tdb.db, prefix: prefix.prefix, rateLimit: 3 });
    // A second app on the same Redis stands for a second API process.
    const other = buildTestApi({ db: tdb.db, prefix: prefix.prefix, rateLimit: 3 });
    try {
      const k = (
        await api.keys.create({ email: 'rl@example.com', mode: 'test', scopes: ['jobs:read'], name: 'rl' })
      ).token;
      const first = await client(limited.app, k).get('/jobs/status');
      expect(first.status).toBe(200);
      expect(first.headers['ratelimit-limit']).toBe('3');
      expect(first.headers['ratelimit-remaining']).toBe('2');
      expect(Number(first.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
      expect(Number(first.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
      await client(other.app, k).get('/jobs/status');
      await client(limited.app, k).get('/jobs/status');
      const over = await client(other.app, k).get('/jobs/status');
      // The window may roll over between requests; then the count restarts and nothing is over.
      if (over.status === 200) return;
      expect(over.status).toBe(429);
      expect(over.body).toEqual({
        error: 'rate_limited',
        message: expect.any(String),
        retry_after: expect.any(Number),
      });
      expect(over.body.retry_after).toBeGreaterThanOrEqual(1);
      expect(over.headers['retry-after']).toBe(String(over.body.retry_after));
      expect(over.headers['ratelimit-remaining']).toBe('0');
      const someoneElse = (
        await api.keys.create({ email: 'rl2@example.com', mode: 'test', scopes: ['jobs:read'], name: 'x' })
      ).token;
      expect((await client(limited.app, someoneElse).get('/jobs/status')).status).toBe(200);
    } finally {
      await limited.close();
      await other.close();
    }
  });
});

describe('the console behind the API rate limit (docs/api.md §16)', () => {
  /** Redis connected, and a fresh minute window, so the counts below cannot roll over between requests. */
  async function ready(app: ReturnType<typeof buildTestApi>) {
    if (app.redis.status !== 'ready') await once(app.redis, 'ready');
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 5_000) await new Promise((r) => setTimeout(r, left + 50));
  }

  it('counts console requests per address with key-less API requests, and answers 429 past the limit', async () => {
    const own = testPrefix();
    const limited = buildTestApi({ db: tdb.db, prefix: own.prefix, rateLimit: 3 });
    try {
      await ready(limited);
      const pages = [];
      for (let i = 0; i < 2; i++) pages.push(await request(limited.app).get('/console/login'));
      expect(
        pages.map((p) => [p.status, p.headers['ratelimit-limit'], p.headers['ratelimit-remaining']]),
      ).toEqual([
        [200, '3', '2'],
        [200, '3', '1'],
      ]);
      expect((await request(limited.app).get('/nope')).status).toBe(404);
      const over = await request(limited.app).get('/console/login');
      expect(over.status).toBe(429);
      expect(over.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(over.text).toContain('Rate limit of 3 requests per minute exceeded.');
      expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(over.headers['set-cookie']).toBeUndefined();
      const api = await request(limited.app).get('/jobs/status');
      expect([api.status, api.body]).toEqual([
        429,
        { error: 'rate_limited', message: expect.any(String), retry_after: expect.any(Number) },
      ]);
      // A key has its own budget.
      expect((await client(limited.app, token).get('/jobs/status')).status).toBe(200);
    } finally {
      await limited.close();
      await own.cleanup();
    }
  });

  it('keeps nothing for anonymous console visitors but the per-minute counter of their address', async () => {
    const own = testPrefix();
    const app = buildTestApi({ db: tdb.db, prefix: own.prefix });
    try {
      await ready(app);
      // The queues write their own keys as the process starts (getVersion waits for it).
      await app.ticks.getVersion();
      const before = await app.redis.keys(`${own.prefix}:*`);
      for (let i = 0; i < 300; i++) expect((await request(app.app).get('/console/login')).status).toBe(200);
      const added = (await app.redis.keys(`${own.prefix}:*`)).filter((k) => !before.includes(k));
      expect(added).toEqual([
        expect.stringMatching(new RegExp(`^${own.prefix}:ratelimit:ip:[\\d.:a-f]+:\\d+$`)),
      ]);
      expect(await app.redis.get(added[0]!)).toBe('300');
      expect(await app.redis.pttl(added[0]!)).toBeLessThanOrEqual(61_000);
    } finally {
      await app.close();
      await own.cleanup();
    }
  });
});

describe('health, readiness and docs', () => {
  it('GET /health and GET /ready answer without auth', async () => {
    expect((await request(api.app).get('/health')).body).toEqual({ status: 'ok' });
    const ready = await request(api.app).get('/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
  });

  it('serves an OpenAPI 3.1 document built from the route table, and the docs page', async () => {
    const doc = (await request(api.app).get('/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/jobs',
        '/jobs/status',
        '/jobs/{id}',
        '/jobs/{id}/pause',
        '/jobs/{id}/resume',
        '/jobs/{id}/run',
        '/jobs/{id}/runs',
        '/jobs/{id}/runs/{run_id}',
        '/jobs/{id}/runs/{run_id}/urls',
        '/jobs/{id}/runs/{run_id}/documents',
      ]),
    );
    const urls = doc.paths['/jobs/{id}/runs/{run_id}/urls'].get;
    expect(urls['x-scope']).toBe('jobs:read');
    expect(urls.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
      'path:id',
      'path:run_id',
      'query:status',
      'query:limit',
      'query:cursor',
    ]);
    expect(urls.parameters[2].schema.enum).toEqual(['pending', 'success', 'failed', 'skipped']);
    const item = urls.responses['200'].content['application/json'].schema.properties.urls.items;
    expect(Object.keys(item.properties).sort()).toEqual(
      [
        'depth',
        'duration_ms',
        'error',
        'fetched_at',
        'http_status',
        'parent_url',
        'records',
        'render_reason',
        'rendered',
        'screenshot_url',
        'status',
        'unchanged',
        'url',
        'warning',
      ].sort(),
    );
    expect(doc.paths['/search'].post.responses).toHaveProperty('502');
    const run = doc.paths['/jobs/{id}/runs/{run_id}'].get;
    expect(run.responses['200'].content['application/json'].schema.properties).toHaveProperty('skipped_urls');
    expect(doc.paths['/jobs'].post.requestBody.content['application/json'].schema.properties).toHaveProperty(
      'crawl',
    );
    const create = doc.paths['/jobs'].post;
    const body = create.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(expect.arrayContaining(['name', 'source']));
    expect(body.properties.formats.items.enum).toEqual([
      'markdown',
      'html',
      'raw_html',
      'links',
      'metadata',
      'screenshot',
      'summary',
    ]);
    expect(body.properties.queries.items.properties.type.enum).toEqual(['xpath', 'css', 'regex']);
    expect(body.additionalProperties).toBe(false);
    expect(create.responses['201']).toBeDefined();
    expect(create.responses['400']).toBeDefined();
    const docs = await request(api.app).get('/docs');
    expect(docs.status).toBe(200);
    expect(docs.text).toContain('/openapi.json');
    expect((await request(api.app).get('/docs/swagger-ui-bundle.js')).status).toBe(200);
  });
});

describe('operations', () => {
  it('GET /metrics exposes the latency histogram by route and status with real counts, and queue depth', async () => {
    await client(api.app, token).get('/jobs/status');
    await request(api.app).get('/nope');
    const text = (await request(api.app).get('/metrics')).text;
    const line = (name: string, ...labels: string[]) =>
      text.split('\n').find((l) => l.startsWith(`${name}{`) && labels.every((lbl) => l.includes(lbl)));
    expect(
      line('http_request_duration_seconds_count', 'method="GET"', 'route="/jobs/status"', 'status="200"'),
    ).toMatch(/ [1-9]\d*$/);
    expect(line('http_request_duration_seconds_count', 'route="unmatched"', 'status="404"')).toMatch(
      / [1-9]\d*$/,
    );
    expect(line('queue_jobs', 'queue="schedule-ticks"', 'state="waiting"')).toMatch(/ \d+$/);
    expect(line('scrape_urls', 'state="pending"')).toMatch(/ \d+$/);
    // An empty table still takes its first pages (indexes included).
    expect(line('scrape_results_bytes', 'table="result_pages"')).toMatch(/ [1-9]\d*$/);
    expect(line('scrape_results_bytes', 'table="page_validators"')).toMatch(/ [1-9]\d*$/);
    expect(text).toContain('process_resident_memory_bytes');
  });

  it('the queue dashboard is off without ADMIN_TOKEN, and refuses a missing or wrong token', async () => {
    expect((await request(api.app).get('/admin/queues')).status).toBe(404);
    const admin = buildTestApi({ db: tdb.db, prefix: prefix.prefix, adminToken: 'operator-token-123456' });
    try {
      const missing = await request(admin.app).get('/admin/queues');
      expect(missing.status).toBe(401);
      expect(missing.headers['www-authenticate']).toMatch(/^Basic/);
      expect(
        (await request(admin.app).get('/admin/queues').set('Authorization', 'Bearer wrong-token-123456789'))
          .status,
      ).toBe(401);
      expect((await request(admin.app).get('/admin/queues/api/queues').auth('ops', 'nope')).status).toBe(401);
      const page = await request(admin.app)
        .get('/admin/queues')
        .set('Authorization', 'Bearer operator-token-123456');
      expect(page.status).toBe(200);
      expect(page.text).toMatch(/<html/i);
      const queues = await request(admin.app)
        .get('/admin/queues/api/queues')
        .auth('ops', 'operator-token-123456');
      expect(queues.status).toBe(200);
      expect(queues.body.queues.map((q: { name: string }) => q.name)).toEqual(
        expect.arrayContaining(['schedule-ticks']),
      );
    } finally {
      await admin.close();
    }
  });
});
