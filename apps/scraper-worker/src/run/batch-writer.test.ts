import { newId } from '@scrapejobs/db';
import { Frontier, RunStore } from '@scrapejobs/domain';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
import { recordCount } from '../../../../test/support/records.ts';
import { runningRun } from '../../../../test/support/runs.ts';
import { BatchWriter } from './batch-writer.ts';

let tdb: TestDatabase;
let store: RunStore;
let userId: string;

beforeAll(async () => {
  tdb = await createTestDatabase();
  store = new RunStore(tdb.db, 'https://scrape.example.com/');
  userId = (await tdb.db.user.create({ data: { id: newId('usr'), email: 'batch@example.com' } })).id;
});
afterAll(() => tdb.drop());

const page = (urlIndex: number) => ({
  url: `https://example.com/${urlIndex + 1}`,
  urlIndex,
  scrapedAt: new Date(),
  records: 2,
  json: JSON.stringify([{ title: `t${urlIndex}.0` }, { title: `t${urlIndex}.1` }]),
});

describe('BatchWriter', () => {
  it('stores what waits within the flush interval even when no further URL finishes', async () => {
    const { runId } = await runningRun(tdb.db, userId, 3);
    const frontier = new Frontier(tdb.db);
    await frontier.seed(runId);
    await frontier.claim(runId, 3, 30_000);
    const lost: number[] = [];
    const batch = new BatchWriter(store, runId, (urls) => lost.push(urls));
    const outcome = { claims: 1, httpStatus: 200, records: 2, durationMs: 5, fetchedAt: new Date() };
    batch.add({ ...outcome, seq: 0, status: 'success', failure: null }, page(0));
    batch.add({
      ...outcome,
      seq: 2,
      status: 'failed',
      failure: { code: 'HTTP_ERROR', message: 'https://example.com/3: HTTP 404' },
    });
    expect(batch.due).toBe(false);
    await new Promise((r) => setTimeout(r, 600));
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toEqual(expect.objectContaining({ successfulUrls: 1, failedUrls: 1 }));
    expect(await recordCount(tdb.db, runId)).toBe(2);
    expect(lost).toEqual([]);
  });

  it('tells of outcomes not written because another worker took their URLs over', async () => {
    const { runId } = await runningRun(tdb.db, userId, 2);
    const frontier = new Frontier(tdb.db);
    await frontier.seed(runId);
    const [a, b] = await frontier.claim(runId, 2, 1);
    await new Promise((r) => setTimeout(r, 20));
    await frontier.takeOver(runId, 30_000);
    const lost: number[] = [];
    const batch = new BatchWriter(store, runId, (urls) => lost.push(urls));
    const outcome = { httpStatus: 200, records: 2, durationMs: 5, fetchedAt: new Date(), failure: null };
    for (const { seq, claims } of [a!, b!])
      batch.add({ ...outcome, seq, claims, status: 'success' }, page(seq));
    await batch.flush();
    expect(lost).toEqual([1]);
    expect(await recordCount(tdb.db, runId)).toBe(2);
  });
});
