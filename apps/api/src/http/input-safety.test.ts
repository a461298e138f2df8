import { gzipSync } from 'node:zlib';
import { createLogger } from '@scrapejobs/logging';
import express from 'express';
import request from 'supertest';
import { buildTestApi } from '../../../../test/support/api.ts';
import { client, validJob } from '../../../../test/support/client.ts';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
import { testPrefix } from '../../../../test/support/redis.ts';
import { seedRun } from '../../../../test/support/results.ts';
import { errorHandler } from './error-handler.ts';

// docs/api.md §16: no request input gets a 500.
let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
const prefix = testPrefix();
let token: string;
let alice: ReturnType<typeof client>;
let jobId: string;
let webhookId: string;
/** A well-formed run id that no run has: parameters are checked before the run is looked up. */
const NO_RUN = 'run_00000000000000000000000000';

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  token = (
    await api.keys.create({
      email: 'hostile@example.com',
      mode: 'test',
      scopes: ['jobs:read', 'jobs:write', 'webhooks:read', 'webhooks:write'],
      name: 'h',
    })
  ).token;
  alice = client(api.app, token);
  jobId = (await alice.post('/jobs', validJob())).body.job_id;
  webhookId = (
    await alice.post('/webhooks', {
      url: 'https://93.184.215.14/hook',
      events: ['job.failed'],
      secret: 'whsec-0123456789abcdef',
    })
  ).body.webhook_id;
});

afterAll(async () => {
  await api.close();
  await tdb.drop();
  await prefix.cleanup();
});

/** Sends JSON text as it is: an object literal would turn `__proto__` into a prototype. */
const sendJson = (method: 'post' | 'put' | 'patch', path: string, json: string) =>
  request(api.app)
    [method](path)
    .set('Authorization', `Bearer ${token}`)
    .set('Content-Type', 'application/json')
    .send(json);

const invalid = (details: Record<string, string>) => ({
  error: 'validation_error',
  message: expect.any(String),
  details,
});

describe('fields named like members of Object.prototype', () => {
  const NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty'];
  const withField = (json: string, at: string, name: string) => json.replace(at, `${at}"${name}":1,`);
  const job = JSON.stringify(validJob({ render_config: { enabled: false } }));

  it.each(NAMES)('POST /jobs answers 400 "unknown field" for %s at the top and nested', async (name) => {
    const top = await sendJson('post', '/jobs', withField(job, '{', name));
    expect([top.status, top.body]).toEqual([400, invalid({ [name]: 'unknown field' })]);
    const render = await sendJson('post', '/jobs', withField(job, '"render_config":{', name));
    expect([render.status, render.body]).toEqual([
      400,
      invalid({ [`render_config.${name}`]: 'unknown field' }),
    ]);
    const query = await sendJson('post', '/jobs', withField(job, '"queries":[{', name));
    expect([query.status, query.body]).toEqual([400, invalid({ [`queries[0].${name}`]: 'unknown field' })]);
  });

  it.each(NAMES)('PUT and PATCH /jobs/{id} answer 400 "unknown field" for %s', async (name) => {
    for (const method of ['put', 'patch'] as const) {
      const res = await sendJson(method, `/jobs/${jobId}`, `{"name":"renamed","${name}":1}`);
      expect([method, res.status, res.body]).toEqual([method, 400, invalid({ [name]: 'unknown field' })]);
    }
    expect((await alice.get(`/jobs/${jobId}`)).body.name).toBe('Example');
  });

  it.each(NAMES)('POST /webhooks names %s with the other violations', async (name) => {
    const res = await sendJson('post', '/webhooks', `{"${name}":1}`);
    expect([res.status, res.body]).toEqual([
      400,
      invalid({ [name]: 'unknown field', url: 'is required', events: 'is required', secret: 'is required' }),
    ]);
  });

  it.each(NAMES)('a query-string parameter named %s is an unknown field', async (name) => {
    for (const path of [
      '/jobs/status',
      '/webhooks',
      `/jobs/${jobId}/runs`,
      `/jobs/${jobId}/runs/${NO_RUN}/urls`,
      `/jobs/${jobId}/results`,
    ]) {
      const res = await alice.get(`${path}?${name}=1`);
      expect([path, res.status, res.body]).toEqual([path, 400, invalid({ [name]: 'unknown field' })]);
    }
  });
});

describe('strings no column can store', () => {
  const NUL = 'must not contain NUL characters';
  const LONE = 'must not contain unpaired surrogates';

  it.each([
    ['NUL in name', { name: 'a\0b' }, { name: NUL }],
    ['NUL in source', { source: 'https://example.com/\0' }, { source: NUL }],
    [
      'NUL in a query',
      { queries: [{ name: 'q', type: 'regex', query: 'a\0' }] },
      { 'queries[0].query': NUL },
    ],
    [
      'a lone surrogate in a regex query',
      {
        queries: [
          { name: 'a', type: 'css', query: 'h1' },
          { name: 'q', type: 'regex', query: '\ud800' },
        ],
      },
      { 'queries[1].query': LONE },
    ],
    ['a lone surrogate in name', { name: 'x\udc00' }, { name: LONE }],
    [
      'both at once',
      { name: '\0', scheduling: { timezone: '\ud800' } },
      { name: NUL, 'scheduling.timezone': LONE },
    ],
  ])('POST /jobs answers 400 at the path for %s, and stores nothing', async (_n, over, details) => {
    const before = await tdb.db.job.count();
    const res = await alice.post('/jobs', validJob(over));
    expect([res.status, res.body]).toEqual([400, invalid(details)]);
    expect(await tdb.db.job.count()).toBe(before);
  });

  it('PUT /jobs/{id} answers 400 at the path, and changes nothing', async () => {
    const res = await alice.put(`/jobs/${jobId}`, {
      name: 'ok',
      queries: [{ name: 'q', type: 'css', query: '\0' }],
    });
    expect([res.status, res.body]).toEqual([400, invalid({ 'queries[0].query': NUL })]);
    expect((await alice.get(`/jobs/${jobId}`)).body.name).toBe('Example');
  });

  it('a field name with NUL is reported at its own path', async () => {
    const res = await sendJson('post', '/jobs', '{"na\\u0000me":"x"}');
    expect([res.status, res.body]).toEqual([400, invalid({ 'na\0me': `field name ${NUL}` })]);
  });

  it.each([
    ['url', { url: 'https://93.184.215.14/\0' }],
    ['description', { description: 'orders\0' }],
    ['secret', { secret: 'whsec-0123456789\0abcdef' }],
    ['events[0]', { events: ['job.failed\0'] }],
  ])('POST /webhooks answers 400 at %s for NUL', async (path, over) => {
    const res = await alice.post('/webhooks', {
      url: 'https://93.184.215.14/hook',
      events: ['job.failed'],
      secret: 'whsec-0123456789abcdef',
      ...over,
    });
    expect([res.status, res.body]).toEqual([400, invalid({ [path]: NUL })]);
  });

  it('a query-string value with NUL is a 400 at its parameter, on every endpoint', async () => {
    for (const path of [
      '/jobs/status?cursor=%00',
      `/jobs/${jobId}/runs?cursor=a%00`,
      `/jobs/${jobId}/runs/${NO_RUN}/urls?cursor=a%00`,
      `/jobs/${jobId}/results?run_id=run_%00`,
      `/jobs/${jobId}/download?run_id=%00`,
      `/webhooks?cursor=%00`,
      `/webhooks/${webhookId}/deliveries?cursor=%00`,
    ]) {
      const res = await alice.get(path);
      const param = /\?(\w+)=/.exec(path)![1]!;
      expect([path, res.status, res.body]).toEqual([path, 400, invalid({ [param]: NUL })]);
    }
  });
});

describe('bodies that cannot be read', () => {
  it.each([
    ['not gzip at all', Buffer.from('not gzip at all')],
    ['gzip cut short', gzipSync(JSON.stringify(validJob())).subarray(0, 12)],
  ])('answers 400 at body for a gzip body that is %s', async (_n, bytes) => {
    const res = await request(api.app)
      .post('/jobs')
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send(bytes);
    expect([res.status, res.body]).toEqual([
      400,
      invalid({ body: 'could not be read (invalid compression, or cut short)' }),
    ]);
  });
});

describe('malformed percent-encoding', () => {
  const notFound = { error: 'not_found', message: expect.any(String) };

  it('answers 404 for a malformed id on every route with a path parameter', async () => {
    const routes: ['get' | 'post' | 'put' | 'patch' | 'delete', string][] = [
      ['get', '/jobs/{id}'],
      ['put', '/jobs/{id}'],
      ['patch', '/jobs/{id}'],
      ['delete', '/jobs/{id}'],
      ['post', '/jobs/{id}/run'],
      ['post', '/jobs/{id}/pause'],
      ['post', '/jobs/{id}/resume'],
      ['get', '/jobs/{id}/runs'],
      ['get', '/jobs/{id}/runs/run_00000000000000000000000000'],
      ['get', '/jobs/job_00000000000000000000000000/runs/{id}'],
      ['get', '/jobs/{id}/runs/run_00000000000000000000000000/urls'],
      ['get', '/jobs/job_00000000000000000000000000/runs/{id}/urls'],
      ['get', '/jobs/{id}/results'],
      ['get', '/jobs/{id}/download'],
      ['get', '/webhooks/{id}'],
      ['delete', '/webhooks/{id}'],
      ['get', '/webhooks/{id}/deliveries'],
      ['post', '/webhooks/{id}/test'],
      ['post', '/webhooks/{id}/deliveries/dlv_00000000000000000000000000/resend'],
      ['post', '/webhooks/wh_00000000000000000000000000/deliveries/{id}/resend'],
    ];
    for (const [method, template] of routes)
      for (const id of ['%', 'job_%ZZ', 'wh_%C0', '%E0%A4%A']) {
        const path = template.replace('{id}', id);
        const res = await (method === 'get' || method === 'delete'
          ? alice[method](path)
          : alice[method](path, {}));
        expect([method, path, res.status, res.body]).toEqual([method, path, 404, notFound]);
      }
  });

  it('takes a malformed query-string value literally, as written: a 400 at the parameter where it is invalid', async () => {
    const cursor = await alice.get('/jobs/status?cursor=%ZZ');
    expect([cursor.status, cursor.body]).toEqual([
      400,
      invalid({ cursor: 'is not a cursor returned by this endpoint' }),
    ]);
    const status = await alice.get('/jobs/status?status=%E0%A4%A&limit=%');
    expect([status.status, status.body]).toEqual([
      400,
      invalid({
        status: 'must be one of scheduled, running, success, failed, paused',
        limit: 'must be a number',
      }),
    ]);
    const run = await alice.get(`/jobs/${jobId}/results?run_id=%`);
    expect([run.status, run.body]).toEqual([404, notFound]);
  });
});

describe('values the database refuses', () => {
  // The API's error handler behind routes that reach PostgreSQL with values no check stopped.
  const failing = (query: () => Promise<unknown>) => {
    const app = express();
    app.get('/x', async () => {
      await query();
    });
    app.use(errorHandler(createLogger('test', 'silent')));
    return request(app).get('/x');
  };

  it.each([
    ['22021 through Prisma (NUL in text)', () => tdb.db.user.findFirst({ where: { email: 'a\0b' } })],
    ['22P02 through pg (invalid integer)', () => tdb.db.pool.query("SELECT 'x'::int")],
    [
      '22003 through a Prisma raw query (out of range)',
      () => tdb.db.$queryRawUnsafe('SELECT 2147483648::int4'),
    ],
    ['22P05 through pg (NUL in jsonb)', () => tdb.db.pool.query(`SELECT '"\\u0000"'::jsonb`)],
    [
      '22001 through pg (too long for the column)',
      () =>
        tdb.db.pool.query("CREATE TEMP TABLE IF NOT EXISTS t1 (v varchar(1)); INSERT INTO t1 VALUES ('ab')"),
    ],
  ])('maps SQLSTATE class 22 to 400 at body, without SQL: %s', async (_n, query) => {
    const res = await failing(query);
    expect([res.status, res.body]).toEqual([
      400,
      invalid({
        body: 'contains a value the database cannot store (a character, length or number out of range)',
      }),
    ]);
    expect(res.text).not.toMatch(/SELECT|INSERT|invalid|prisma|UTF8|jsonb|varchar|22\d\d\d/i);
  });

  it('keeps every other database error a 500 without SQL', async () => {
    for (const query of [
      () => tdb.db.pool.query('SELEC 1'),
      () => tdb.db.$queryRawUnsafe('SELECT * FROM no_such_table'),
    ]) {
      const res = await failing(query);
      expect([res.status, res.body]).toEqual([
        500,
        { error: 'internal_error', message: 'An internal error occurred.' },
      ]);
      expect(res.text).not.toMatch(/SELEC|no_such_table/);
    }
  });
});

describe('X-Content-Type-Options: nosniff', () => {
  it('is on every kind of answer: JSON, errors, downloads, operations, docs and console pages', async () => {
    const run = await seedRun(tdb.db, jobId, [{ url: 'https://example.com/1', data: { title: 'x' } }]);
    const limitedPrefix = testPrefix();
    const limited = buildTestApi({ db: tdb.db, prefix: limitedPrefix.prefix, rateLimit: 1 });
    try {
      const answers: [string, request.Response][] = [
        ['200 json', await alice.get('/jobs/status')],
        ['201 json', await alice.post('/jobs', validJob())],
        ['204', await alice.delete(`/jobs/${(await alice.post('/jobs', validJob())).body.job_id}`)],
        ['400', await alice.post('/jobs', {})],
        ['401', await request(api.app).get('/jobs/status')],
        ['404', await request(api.app).get('/nope')],
        ['404 malformed id', await alice.get('/jobs/%')],
        ['405', await alice.delete('/jobs/status')],
        ['413', await sendJson('post', '/jobs', JSON.stringify(validJob({ name: 'x'.repeat(1024 * 1024) })))],
        ['415', await alice.post('/jobs').set('Content-Type', 'text/plain').send('x')],
        ['health', await request(api.app).get('/health')],
        ['ready', await request(api.app).get('/ready')],
        ['metrics', await request(api.app).get('/metrics')],
        ['openapi', await request(api.app).get('/openapi.json')],
        ['docs', await request(api.app).get('/docs')],
        ['docs asset', await request(api.app).get('/docs/swagger-ui.css')],
        ['console', await request(api.app).get('/console/login')],
        ['console asset', await request(api.app).get('/console/assets/console.js')],
      ];
      for (const format of ['json', 'csv', 'xlsx', 'sql'])
        answers.push([format, await alice.get(`/jobs/${jobId}/download?format=${format}&run_id=${run}`)]);
      await request(limited.app).get('/nope');
      answers.push(['429', await request(limited.app).get('/nope')]);
      expect(answers.map(([name, res]) => [name, res.status, res.headers['x-content-type-options']])).toEqual(
        answers.map(([name, res]) => [name, res.status, 'nosniff']),
      );
      expect(answers.map(([, res]) => res.status)).toEqual([
        200, 201, 204, 400, 401, 404, 404, 405, 413, 415, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200,
        200, 200, 429,
      ]);
    } finally {
      await limited.close();
      await limitedPrefix.cleanup();
    }
  });
});
