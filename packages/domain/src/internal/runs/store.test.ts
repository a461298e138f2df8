import { newId } from '@scrapejobs/db';
import { createTestDatabase, type TestDatabase } from '../../../../../test/support/database.ts';
import { runningRun as runningRunOf } from '../../../../../test/support/runs.ts';
import { type PageRows, RunStore } from './store.ts';

let tdb: TestDatabase;
let store: RunStore;
let userId: string;

beforeAll(async () => {
  tdb = await createTestDatabase();
  store = new RunStore(tdb.db, 'https://scrape.example.com/');
  userId = (await tdb.db.user.create({ data: { id: newId('usr'), email: 'store@example.com' } })).id;
});
afterAll(() => tdb.drop());

const runningRun = (totalUrls: number) => runningRunOf(tdb.db, userId, totalUrls);

const page = (urlIndex: number, rows = 2): PageRows => ({
  url: `https://example.com/${urlIndex + 1}`,
  urlIndex,
  scrapedAt: new Date(),
  rows: Array.from({ length: rows }, (_, i) => JSON.stringify({ title: `t${urlIndex}.${i}` })),
});
const ok = (index: number) => ({ index, failure: null });
const failed = (index: number, code = 'HTTP_ERROR') => ({
  index,
  failure: { code, message: `https://example.com/${index + 1}: HTTP 404` },
});

describe('RunStore', () => {
  it('stores a batch once, however often it is saved (two workers that both ran a page)', async () => {
    const { jobId, runId } = await runningRun(3);
    for (let i = 0; i < 2; i++)
      await store.saveBatch(runId, jobId, [page(0), page(1)], [ok(0), ok(1), failed(2)]);
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toEqual(expect.objectContaining({ successfulUrls: 2, failedUrls: 1, doneUrls: [0, 1, 2] }));
    expect(await tdb.db.result.count({ where: { runId } })).toBe(4);
  });

  it('counts a URL once when several workers save it at the same moment', async () => {
    const { jobId, runId } = await runningRun(4);
    const outcomes = [ok(0), ok(1), failed(2), ok(3)];
    await Promise.all(Array.from({ length: 6 }, () => store.saveBatch(runId, jobId, [page(0)], outcomes)));
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toEqual(expect.objectContaining({ successfulUrls: 3, failedUrls: 1 }));
    expect([...run.doneUrls].sort()).toEqual([0, 1, 2, 3]);
  });

  it('keeps the failure of the lowest URL index, whatever order batches come in', async () => {
    const { jobId, runId } = await runningRun(9);
    await store.saveBatch(runId, jobId, [], [failed(6), failed(4, 'TIMEOUT')]);
    await store.saveBatch(runId, jobId, [], [failed(7), ok(0)]);
    await store.saveBatch(runId, jobId, [], [failed(2, 'NETWORK_ERROR')]);
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run.firstFailure).toEqual({
      index: 2,
      code: 'NETWORK_ERROR',
      message: 'https://example.com/3: HTTP 404',
    });
    expect(run.failedUrls).toBe(4);
  });

  it('ends the run from what every batch stored, with the first failure and the event', async () => {
    const { jobId, runId } = await runningRun(3);
    await store.saveBatch(runId, jobId, [page(0)], [ok(0), failed(2)]);
    await store.saveBatch(runId, jobId, [page(1, 3)], [ok(1)]);
    expect(await store.finish(runId, null)).toEqual({ status: 'failed', successfulUrls: 2, failedUrls: 1 });
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toEqual(expect.objectContaining({ status: 'failed', resultsCount: 5 }));
    expect(run.error).toEqual({
      code: 'HTTP_ERROR',
      message: '1 of 3 URLs failed; first: https://example.com/3: HTTP 404',
      failed_urls: 1,
      successful_urls: 2,
    });
    const event = await tdb.db.event.findFirstOrThrow({ where: { jobId } });
    expect(event.kind).toBe('job.failed');
    expect(await store.finish(runId, null)).toBeNull();
  });

  it('counts the URLs never done as failed when the run timed out', async () => {
    const { jobId, runId } = await runningRun(5);
    await store.saveBatch(runId, jobId, [page(0)], [ok(0), ok(1)]);
    const timedOut = { code: 'TIMEOUT', message: 'The run exceeded its time limit of 60000 ms.' };
    expect(await store.finish(runId, timedOut)).toEqual({
      status: 'failed',
      successfulUrls: 2,
      failedUrls: 3,
    });
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run.error).toEqual(
      expect.objectContaining({ code: 'TIMEOUT', failed_urls: 3, successful_urls: 2 }),
    );
  });

  it('keeps and counts a batch that arrives after a pause, but leaves an ended run as it is', async () => {
    const { jobId, runId } = await runningRun(2);
    await tdb.db.run.update({ where: { id: runId }, data: { status: 'cancelled' } });
    await store.saveBatch(runId, jobId, [page(0)], [ok(0)]);
    await store.settleCancelled(runId);
    expect(await tdb.db.run.findUniqueOrThrow({ where: { id: runId } })).toEqual(
      expect.objectContaining({ successfulUrls: 1, doneUrls: [0], resultsCount: 2 }),
    );

    const ended = await runningRun(2);
    await store.saveBatch(ended.runId, ended.jobId, [page(0)], [ok(0), ok(1)]);
    await store.finish(ended.runId, null);
    await store.saveBatch(ended.runId, ended.jobId, [page(1)], [ok(1)]);
    expect(await tdb.db.run.findUniqueOrThrow({ where: { id: ended.runId } })).toEqual(
      expect.objectContaining({ status: 'success', successfulUrls: 2, resultsCount: 2 }),
    );
  });

  it('fails only the page whose values PostgreSQL refuses, and stores the rest of its batch', async () => {
    const { jobId, runId } = await runningRun(3);
    const refused: PageRows = { ...page(1), rows: [JSON.stringify({ title: 'a\u0000b' })] };
    await store.saveBatch(runId, jobId, [page(0), refused, page(2)], [ok(0), ok(1), ok(2)]);
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toEqual(expect.objectContaining({ successfulUrls: 2, failedUrls: 1 }));
    expect([...run.doneUrls].sort()).toEqual([0, 1, 2]);
    expect(run.firstFailure).toEqual({
      index: 1,
      code: 'EXTRACTION_ERROR',
      message: expect.stringMatching(/^https:\/\/example\.com\/2: its records could not be stored: /),
    });
    const stored = await tdb.db.result.findMany({ where: { runId }, orderBy: { urlIndex: 'asc' } });
    expect(stored.map((r) => r.urlIndex)).toEqual([0, 0, 2, 2]);
  });

  it('names the users of runs, leaving out runs that are gone', async () => {
    const { runId } = await runningRun(1);
    expect(await store.ownersOf([runId, newId('run')])).toEqual(new Map([[runId, userId]]));
    expect(await store.ownersOf([])).toEqual(new Map());
  });
});
