import { newId } from '@scrapejobs/db';
import { RunStore } from '@scrapejobs/domain';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
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
  rows: [JSON.stringify({ title: `t${urlIndex}.0` }), JSON.stringify({ title: `t${urlIndex}.1` })],
});

describe('BatchWriter', () => {
  it('stores what waits within the flush interval even when no further URL finishes', async () => {
    const { jobId, runId } = await runningRun(tdb.db, userId, 3);
    const batch = new BatchWriter(store, runId, jobId);
    batch.add({ index: 0, failure: null }, page(0));
    batch.add({ index: 2, failure: { code: 'HTTP_ERROR', message: 'https://example.com/3: HTTP 404' } });
    expect(batch.due).toBe(false);
    await new Promise((r) => setTimeout(r, 600));
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toEqual(expect.objectContaining({ successfulUrls: 1, failedUrls: 1, doneUrls: [0, 2] }));
    expect(await tdb.db.result.count({ where: { runId } })).toBe(2);
  });
});
