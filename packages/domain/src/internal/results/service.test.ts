import { newId } from '@scrapejobs/db';
import { MAX_RECORDS_LIMIT } from '@scrapejobs/extraction';
import { createTestDatabase, type TestDatabase } from '../../../../../test/support/database.ts';
import { insertPage } from '../../../../../test/support/records.ts';
import type { Owner } from '../principal.ts';
import { ResultsService } from './service.ts';

let tdb: TestDatabase;
let results: ResultsService;
let owner: Owner;
let jobId: string;
let runId: string;
/** Every record of the run in the order it was stored: a full page, then a page of three. */
let stored: string[];

// An ended run of two pages stored as a worker stores them: one of as many records as a page may
// give, then one of three.
beforeAll(async () => {
  tdb = await createTestDatabase();
  results = new ResultsService(tdb.db);
  const user = await tdb.db.user.create({ data: { id: newId('usr'), email: 'results@example.com' } });
  owner = { userId: user.id, mode: 'test' };
  jobId = newId('job');
  runId = newId('run');
  const queries = [{ name: 'n', type: 'css', query: 'li', join: false }];
  await tdb.db.job.create({
    data: {
      id: jobId,
      userId: user.id,
      mode: 'test',
      name: 'full',
      source: 'https://example.com/',
      queries,
      rateLimit: 10,
    },
  });
  await tdb.db.run.create({
    data: { id: runId, jobId, trigger: 'manual', status: 'success', finishedAt: new Date(0) },
  });
  const pages = [MAX_RECORDS_LIMIT, 3].map((count, p) =>
    Array.from({ length: count }, (_, i) => ({ n: `${p}.${i}` })),
  );
  for (const [p, records] of pages.entries())
    await insertPage(tdb.db, runId, { url: `https://example.com/${p}`, urlIndex: p, records });
  stored = pages.flat().map((record) => record.n);
});
afterAll(() => tdb.drop());

const cursorOf = (seq: bigint, row: number) => Buffer.from(`${runId}:${seq}:${row}`).toString('base64url');

describe('ResultsService.list', () => {
  it('gives each record of a page as full as a page may be once, in order, each with its own id', async () => {
    const values: string[] = [];
    const ids = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await results.list(owner, jobId, { runId, limit: 1000, cursor });
      for (const item of page.items) {
        values.push(item.data.n as string);
        ids.add(item.id);
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(values).toEqual(stored);
    expect(ids.size).toBe(stored.length);
  });

  it('refuses a cursor past the last record a page can hold', async () => {
    const [first] = await tdb.db.resultPage.findMany({ where: { runId }, orderBy: { seq: 'asc' }, take: 1 });
    const list = (row: number) =>
      results.list(owner, jobId, { runId, limit: 1, cursor: cursorOf(first!.seq, row) });
    expect((await list(MAX_RECORDS_LIMIT)).items.map((item) => item.data.n)).toEqual(['1.0']);
    await expect(list(MAX_RECORDS_LIMIT + 1)).rejects.toEqual(
      expect.objectContaining({
        status: 400,
        extra: { details: { cursor: 'is not a cursor returned by this endpoint' } },
      }),
    );
  });
});

describe('the view results', () => {
  // The change analysis reads a run's records through it, in `seq` order.
  it("numbers a full page's records before the next page's, each with its own seq and id", async () => {
    const rows = await tdb.db.$queryRaw<{ seq: bigint; id: string; n: string }[]>`
      SELECT seq, id, data->>'n' AS n FROM results WHERE run_id = ${runId} ORDER BY seq`;
    expect(rows.map((row) => row.n)).toEqual(stored);
    expect(new Set(rows.map((row) => row.seq)).size).toBe(stored.length);
    expect(new Set(rows.map((row) => row.id)).size).toBe(stored.length);
  });
});
