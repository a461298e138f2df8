import { newId } from '@scrapejobs/db';
import { createTestDatabase, type TestDatabase } from '../../../../../test/support/database.ts';
import { insertResults } from '../../../../../test/support/records.ts';
import { RunAnalysis } from './analysis.ts';

let tdb: TestDatabase;
let analysis: RunAnalysis;
let userId: string;
let clock = Date.parse('2026-11-01T00:00:00.000Z');

beforeAll(async () => {
  tdb = await createTestDatabase();
  analysis = new RunAnalysis(tdb.db, 'https://scrape.example.com/');
  userId = (await tdb.db.user.create({ data: { id: newId('usr'), email: 'analysis@example.com' } })).id;
});
afterAll(() => tdb.drop());

const QUERIES = ['sku', 'price', 'title'].map((name) => ({
  name,
  type: 'css',
  query: `.${name}`,
  join: false,
}));

async function newJob(key: string[] | null, queries = QUERIES) {
  const jobId = newId('job');
  await tdb.db.job.create({
    data: {
      id: jobId,
      userId,
      mode: 'test',
      name: 'watch',
      source: 'https://example.com/[1-2]',
      queries,
      rateLimit: 10,
      status: 'success',
      ...(key && { changeTracking: { key } }),
    },
  });
  return jobId;
}

type Row = Record<string, string | null> & { url: string };

/** A run of the job that has just ended with these records (in result order), due for analysis. */
async function endedRun(jobId: string, rows: Row[], status: 'success' | 'failed' | 'cancelled' = 'success') {
  clock += 60_000;
  const runId = newId('run', clock);
  await tdb.db.run.create({
    data: {
      id: runId,
      jobId,
      trigger: 'manual',
      status,
      startedAt: new Date(clock - 1_000),
      finishedAt: new Date(clock),
      resultsCount: rows.length,
      successfulUrls: 2,
      analysisDue: status !== 'cancelled',
    },
  });
  await insertResults(
    tdb.db,
    runId,
    rows.map(({ url, ...data }) => ({ url, data, scrapedAt: new Date(clock) })),
  );
  return runId;
}

const A = 'https://example.com/1';
const B = 'https://example.com/2';
const item = (sku: string | null, price: string | null, url = A, title: string | null = 'T'): Row => ({
  url,
  sku,
  price,
  title,
});

async function changesOf(runId: string) {
  return tdb.db.runChange.findMany({ where: { runId }, orderBy: { seq: 'asc' } });
}

async function eventsOf(jobId: string) {
  return tdb.db.event.findMany({ where: { jobId }, orderBy: { id: 'asc' } });
}

describe('RunAnalysis: changes', () => {
  it('counts every record of a first run as added, and duplicate keys once each', async () => {
    const jobId = await newJob(['sku']);
    const runId = await endedRun(jobId, [item('1', '10'), item('2', '20'), item('1', '11'), item('1', '12')]);
    const done = await analysis.analyze(runId);
    expect(done).toEqual(
      expect.objectContaining({
        baseRunId: null,
        changes: { added: 2, removed: 0, changed: 0, unchanged: 0, duplicate_keys: 2 },
      }),
    );
    const changes = await changesOf(runId);
    // The first record of a key counts, in result order.
    expect(changes.map((c) => [c.type, c.key, (c.data as Row).price])).toEqual([
      ['added', { sku: '1' }, '10'],
      ['added', { sku: '2' }, '20'],
    ]);
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run.analysisDue).toBe(false);
    expect(run.baseRunId).toBeNull();
    expect((await eventsOf(jobId)).map((e) => [e.kind, e.data])).toEqual([
      [
        'job.changed',
        {
          job_id: jobId,
          job_name: 'watch',
          run_id: runId,
          base_run_id: null,
          added: 2,
          removed: 0,
          changed: 0,
          changes_url: `https://scrape.example.com/jobs/${jobId}/runs/${runId}/changes`,
        },
      ],
    ]);
  });

  it('finds added, removed, changed and unchanged items against the base run, null keys equal', async () => {
    const jobId = await newJob(['sku']);
    const base = await endedRun(jobId, [item('1', '10'), item('2', '20'), item('3', '30'), item(null, '40')]);
    await analysis.analyze(base);
    const runId = await endedRun(jobId, [
      item('2', '21'),
      item('4', '40'),
      item('1', '10'),
      item(null, '40', B),
    ]);
    const done = await analysis.analyze(runId);
    expect(done?.baseRunId).toBe(base);
    expect(done?.changes).toEqual({ added: 1, removed: 1, changed: 2, unchanged: 1, duplicate_keys: 0 });
    const changes = await changesOf(runId);
    expect(changes.map((c) => [c.seq, c.type, c.key, c.changedFields])).toEqual([
      [0, 'changed', { sku: '2' }, ['price']],
      [1, 'added', { sku: '4' }, []],
      // `url` is a field like any other when it is not in the key.
      [2, 'changed', { sku: null }, ['url']],
      [3, 'removed', { sku: '3' }, []],
    ]);
    const removed = changes[3]!;
    expect(removed.data).toBeNull();
    expect(removed.previous).toEqual({ url: A, sku: '3', price: '30', title: 'T' });
    expect(changes[0]!.previous).toEqual({ url: A, sku: '2', price: '20', title: 'T' });
    expect(changes[0]!.data).toEqual({ url: A, sku: '2', price: '21', title: 'T' });
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run.baseRunId).toBe(base);
    expect(run.changes).toEqual({ added: 1, removed: 1, changed: 2, unchanged: 1, duplicate_keys: 0 });
  });

  it('identifies an item by its whole record without a key, and by several names with one', async () => {
    const whole = await newJob([]);
    await analysis.analyze(await endedRun(whole, [item('1', '10'), item('2', '20')]));
    const second = await endedRun(whole, [item('1', '10'), item('2', '21')]);
    expect((await analysis.analyze(second))?.changes).toEqual({
      added: 1,
      removed: 1,
      changed: 0,
      unchanged: 1,
      duplicate_keys: 0,
    });
    expect((await changesOf(second)).map((c) => [c.type, c.key])).toEqual([
      ['added', { url: A, sku: '2', price: '21', title: 'T' }],
      ['removed', { url: A, sku: '2', price: '20', title: 'T' }],
    ]);

    const pair = await newJob(['url', 'sku']);
    await analysis.analyze(await endedRun(pair, [item('1', '10', A), item('1', '10', B)]));
    const next = await endedRun(pair, [item('1', '11', A), item('1', '10', B)]);
    expect((await analysis.analyze(next))?.changes).toEqual(
      expect.objectContaining({ added: 0, removed: 0, changed: 1, unchanged: 1 }),
    );
    expect((await changesOf(next))[0]!.key).toEqual({ url: A, sku: '1' });
  });

  it('never takes a cancelled run as the base, and sends no job.changed when nothing changed', async () => {
    const jobId = await newJob(['sku']);
    const base = await endedRun(jobId, [item('1', '10')]);
    await analysis.analyze(base);
    await endedRun(jobId, [item('9', '90')], 'cancelled');
    const runId = await endedRun(jobId, [item('1', '10')], 'failed');
    const done = await analysis.analyze(runId);
    expect(done?.baseRunId).toBe(base);
    expect(done?.changes).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 1, duplicate_keys: 0 });
    expect(await changesOf(runId)).toEqual([]);
    const kinds = (await eventsOf(jobId)).map((e) => (e.data as { run_id: string }).run_id);
    expect(kinds).toEqual([base]);
  });

  it('analyses a run exactly once when several processes try at once', async () => {
    const jobId = await newJob(['sku']);
    await analysis.analyze(await endedRun(jobId, [item('1', '10')]));
    const runId = await endedRun(
      jobId,
      Array.from({ length: 2_000 }, (_, i) => item(String(i), String(i % 7))),
    );
    const others = [new RunAnalysis(tdb.db, 'https://x/'), new RunAnalysis(tdb.db, 'https://x/'), analysis];
    const outcomes = await Promise.all(others.map((a) => a.analyze(runId)));
    expect(outcomes.filter((o) => o !== null)).toHaveLength(1);
    expect(await tdb.db.runChange.count({ where: { runId } })).toBe(2_000);
    expect((await eventsOf(jobId)).filter((e) => e.kind === 'job.changed')).toHaveLength(2);
    expect(await analysis.analyze(runId)).toBeNull();
  });

  it('leaves a run due, with nothing written, when its analysis fails half way', async () => {
    const jobId = await newJob(['sku']);
    const runId = await endedRun(jobId, [item('1', '10'), item('2', '20')]);
    // A row in the way of the second change makes the statement fail after the first.
    await tdb.db.runChange.create({
      data: { runId, seq: 1, type: 'added', key: {}, changedFields: [], scrapedAt: new Date() },
    });
    await expect(analysis.analyze(runId)).rejects.toThrow(/duplicate key/);
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toEqual(expect.objectContaining({ analysisDue: true, changes: null, health: null }));
    expect(await eventsOf(jobId)).toEqual([]);
    expect(await analysis.due(1000)).toContain(runId);
    await tdb.db.runChange.deleteMany({ where: { runId } });
    expect((await analysis.analyze(runId))?.changes?.added).toBe(2);
    expect(await analysis.due(1000)).not.toContain(runId);
  });

  it('gives a due run up unanalysed, unless another process has it now', async () => {
    const runId = await endedRun(await newJob(['sku']), [item('1', '10')]);
    const other = await tdb.db.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM runs WHERE id = $1 FOR UPDATE', [runId]);
      expect(await analysis.abandon(runId)).toBe(false);
      await other.query('COMMIT');
    } finally {
      other.release();
    }
    expect(await analysis.abandon(runId)).toBe(true);
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toEqual(expect.objectContaining({ analysisDue: false, changes: null, health: null }));
    expect(await analysis.abandon(runId)).toBe(false);
    expect(await analysis.analyze(runId)).toBeNull();
  });
});

describe('RunAnalysis: health', () => {
  it('is ok for a healthy job, with no changes and no event without tracking', async () => {
    const jobId = await newJob(null);
    for (let i = 0; i < 4; i++) {
      const done = await analysis.analyze(await endedRun(jobId, [item('1', '10'), item('2', '20')]));
      expect(done).toEqual(expect.objectContaining({ health: { status: 'ok', reasons: [] }, changes: null }));
    }
    expect(await eventsOf(jobId)).toEqual([]);
  });

  it('flags a query that matched nothing on a first run, and one that stopped matching', async () => {
    const jobId = await newJob(null);
    const first = await endedRun(jobId, [item('1', null), item('2', null)]);
    expect((await analysis.analyze(first))?.health.reasons).toEqual([
      expect.objectContaining({ code: 'EMPTY_QUERY', query: 'price' }),
    ]);
    // price never matched: not a new break. title matched before and now matches nothing.
    const second = await endedRun(jobId, [item('1', null, A, null)]);
    const done = await analysis.analyze(second);
    expect(done?.health).toEqual({
      status: 'degraded',
      reasons: [expect.objectContaining({ code: 'EMPTY_QUERY', query: 'title' })],
    });
    const degraded = (await eventsOf(jobId)).filter((e) => e.kind === 'job.degraded');
    expect(degraded.map((e) => e.data)).toEqual([
      { job_id: jobId, job_name: 'watch', run_id: first, reasons: expect.any(Array) },
      { job_id: jobId, job_name: 'watch', run_id: second, reasons: done?.health.reasons },
    ]);
  });

  it('flags a run with under half the median records of the last successful runs, given three', async () => {
    const jobId = await newJob(null);
    const rows = (n: number) => Array.from({ length: n }, (_, i) => item(String(i), '1'));
    for (const n of [10, 10]) await analysis.analyze(await endedRun(jobId, rows(n)));
    // Two successful runs before: not enough history.
    expect((await analysis.analyze(await endedRun(jobId, rows(2))))?.health.status).toBe('ok');
    // Successful runs before: 10, 10, 2 (median 10); a failed run does not count.
    await analysis.analyze(await endedRun(jobId, rows(1), 'failed'));
    const low = await analysis.analyze(await endedRun(jobId, rows(4)));
    expect(low?.health.reasons).toEqual([
      expect.objectContaining({ code: 'RECORDS_DROP', query: null, message: expect.stringContaining('10') }),
    ]);
    expect((await analysis.analyze(await endedRun(jobId, rows(5))))?.health.status).toBe('ok');
    // However many runs failed since: the last five successful ones are 5, 4, 2, 10, 10 (median 5).
    for (let i = 0; i < 60; i++) await endedRun(jobId, [], 'failed');
    const after = await analysis.analyze(await endedRun(jobId, rows(2)));
    expect(after?.health.reasons).toEqual([
      expect.objectContaining({
        code: 'RECORDS_DROP',
        message: expect.stringContaining('median (5) of the last 5'),
      }),
    ]);
  });
});
