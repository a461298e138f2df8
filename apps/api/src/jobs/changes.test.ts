import { newId } from '@scrapejobs/db';
import { type ApiFixture, apiFixture } from '../../../../test/support/api.ts';
import { type Client, validJob } from '../../../../test/support/client.ts';

// The job field `change_tracking`, the changes of a run and `changes=` on downloads (docs/api.md
// §13) through the API: stored, validated, and their unhappy paths. The comparison itself runs in
// the workers: packages/domain runs/analysis.test.ts and test/e2e/changes.test.ts.

let f: ApiFixture;
let alice: Client;
let bob: Client;

beforeAll(async () => {
  f = await apiFixture();
  const scopes = ['jobs:read', 'jobs:write', 'webhooks:read', 'webhooks:write'] as const;
  alice = await f.keyClient('alice@example.com', 'test', [...scopes]);
  bob = await f.keyClient('bob@example.com', 'test', [...scopes]);
});

afterAll(async () => {
  await f.close();
});

const QUERIES = [
  { name: 'sku', type: 'css', query: '.sku' },
  { name: 'price', type: 'css', query: '.price' },
];

async function createJob(over: Record<string, unknown> = {}) {
  const res = await alice.post('/jobs', validJob({ queries: QUERIES, ...over }));
  expect(res.status).toBe(201);
  return res.body as Record<string, unknown> & { job_id: string };
}

/** A run of the job that ended, compared or not. */
async function endedRun(jobId: string, compared: boolean) {
  const id = newId('run');
  await f.tdb.db.run.create({
    data: {
      id,
      jobId,
      trigger: 'manual',
      status: 'success',
      finishedAt: new Date(),
      ...(compared && {
        changes: { added: 1, removed: 0, changed: 0, unchanged: 0, duplicate_keys: 0 },
        health: { status: 'ok', reasons: [] },
      }),
    },
  });
  if (compared)
    await f.tdb.db.runChange.create({
      data: {
        runId: id,
        seq: 0,
        type: 'added',
        key: { sku: 'S1' },
        data: { url: 'https://example.com/items', sku: 'S1', price: '1' },
        changedFields: [],
        scrapedAt: new Date(),
      },
    });
  return id;
}

describe('the change_tracking field', () => {
  it('is null when not given, stored with an empty key by default, cleared by null', async () => {
    expect((await createJob()).change_tracking).toBeNull();
    const job = await createJob({ change_tracking: {} });
    expect(job.change_tracking).toEqual({ key: [] });
    const put = await alice.put(`/jobs/${job.job_id}`, { change_tracking: { key: ['url', 'sku'] } });
    expect(put.body.change_tracking).toEqual({ key: ['url', 'sku'] });
    expect((await alice.get(`/jobs/${job.job_id}`)).body.change_tracking).toEqual({ key: ['url', 'sku'] });
    expect(
      (await alice.put(`/jobs/${job.job_id}`, { change_tracking: null })).body.change_tracking,
    ).toBeNull();
  });

  it.each([
    [{ key: ['sku', 'colour'] }, { 'change_tracking.key[1]': expect.stringContaining('"colour"') }],
    [{ key: ['sku', 'price', 'sku'] }, { 'change_tracking.key[2]': 'duplicate name "sku"' }],
    [
      { key: ['url', 'sku', 'price', 'url_2', 'sku_2', 'price_2'] },
      expect.objectContaining({ 'change_tracking.key': expect.stringContaining('5') }),
    ],
    [{ key: 'sku' }, { 'change_tracking.key': expect.any(String) }],
    [{ key: [''] }, { 'change_tracking.key[0]': expect.any(String) }],
    [{ keys: ['sku'] }, { 'change_tracking.keys': 'unknown field' }],
  ])('rejects %j with a 400 at its path', async (tracking, details) => {
    const res = await alice.post('/jobs', validJob({ queries: QUERIES, change_tracking: tracking }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(res.body.details).toEqual(details);
  });

  it('checks an update against the job as it will be: queries dropped, or a key alone', async () => {
    const job = await createJob({ change_tracking: { key: ['price'] } });
    const dropped = await alice.put(`/jobs/${job.job_id}`, { queries: [QUERIES[0]] });
    expect(dropped.status).toBe(400);
    expect(dropped.body.details).toEqual({ 'change_tracking.key[0]': expect.stringContaining('"price"') });
    const alone = await alice.patch(`/jobs/${job.job_id}`, { change_tracking: { key: ['sku', 'size'] } });
    expect(alone.status).toBe(400);
    expect(alone.body.details).toEqual({ 'change_tracking.key[1]': expect.stringContaining('"size"') });
    expect((await alice.get(`/jobs/${job.job_id}`)).body.change_tracking).toEqual({ key: ['price'] });
  });
});

describe('GET /jobs/{id}/runs/{run_id}/changes', () => {
  it('lists a compared run, and answers 404 for a run not compared, an untracked job or another user', async () => {
    const job = await createJob({ change_tracking: { key: ['sku'] } });
    const compared = await endedRun(job.job_id, true);
    const res = await alice.get(`/jobs/${job.job_id}/runs/${compared}/changes?type=added`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      job_id: job.job_id,
      run_id: compared,
      base_run_id: null,
      summary: { added: 1, removed: 0, changed: 0, unchanged: 0, duplicate_keys: 0 },
      changes: [
        {
          type: 'added',
          key: { sku: 'S1' },
          data: { url: 'https://example.com/items', sku: 'S1', price: '1' },
          previous: null,
          changed_fields: [],
        },
      ],
      count: 1,
      next_cursor: null,
    });
    const run = (await alice.get(`/jobs/${job.job_id}/runs/${compared}`)).body;
    expect(run).toEqual(
      expect.objectContaining({
        base_run_id: null,
        changes: { added: 1, removed: 0, changed: 0, unchanged: 0 },
        health: { status: 'ok', reasons: [] },
      }),
    );
    expect(
      (await alice.get(`/jobs/${job.job_id}/runs/${compared}/changes?type=removed`)).body.changes,
    ).toEqual([]);

    const pending = await endedRun(job.job_id, false);
    expect((await alice.get(`/jobs/${job.job_id}/runs/${pending}/changes`)).status).toBe(404);
    expect((await bob.get(`/jobs/${job.job_id}/runs/${compared}/changes`)).status).toBe(404);
    const untracked = await createJob();
    const other = await endedRun(untracked.job_id, true);
    expect((await alice.get(`/jobs/${untracked.job_id}/runs/${other}/changes`)).status).toBe(404);
    expect((await alice.get(`/jobs/${untracked.job_id}/runs/${compared}/changes`)).status).toBe(404);
  });

  it('rejects an unknown type, a bad limit and a foreign cursor at their paths', async () => {
    const job = await createJob({ change_tracking: { key: ['sku'] } });
    const run = await endedRun(job.job_id, true);
    const res = await alice.get(`/jobs/${job.job_id}/runs/${run}/changes?type=unchanged&limit=0&cursor=x`);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.details).sort()).toEqual(['limit', 'type']);
    const cursor = await alice.get(`/jobs/${job.job_id}/runs/${run}/changes?cursor=bm9wZQ`);
    expect(cursor.status).toBe(400);
    expect(cursor.body.details).toEqual({ cursor: expect.any(String) });
  });
});

describe('GET /jobs/{id}/download?changes=', () => {
  it('rejects a word that is not a change type at `changes`', async () => {
    const job = await createJob({ change_tracking: { key: ['sku'] } });
    const res = await alice.get(`/jobs/${job.job_id}/download?changes=added,unchanged`);
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({ changes: expect.stringContaining('"unchanged"') });
  });

  it('answers 404 for an untracked job and for a run not compared yet', async () => {
    const untracked = await createJob();
    expect((await alice.get(`/jobs/${untracked.job_id}/download?changes=added`)).status).toBe(404);
    const job = await createJob({ change_tracking: { key: ['sku'] } });
    const pending = await endedRun(job.job_id, false);
    expect((await alice.get(`/jobs/${job.job_id}/download?changes=added&run_id=${pending}`)).status).toBe(
      404,
    );
  });
});

describe('webhooks', () => {
  it('accept job.changed and job.degraded besides the four events of the specification', async () => {
    const events = [
      'job.completed',
      'job.failed',
      'job.started',
      'job.paused',
      'job.changed',
      'job.degraded',
    ];
    const res = await alice.post('/webhooks', {
      url: 'https://93.184.215.14/hooks/in',
      events,
      secret: 'a-long-enough-secret',
    });
    expect(res.body).toEqual(expect.objectContaining({ events }));
    const seven = await alice.post('/webhooks', {
      url: 'https://93.184.215.14/hooks/in',
      events: [...events, 'job.changed'],
      secret: 'a-long-enough-secret',
    });
    expect(seven.status).toBe(400);
    expect(Object.keys(seven.body.details)).toEqual(['events']);
  });
});
