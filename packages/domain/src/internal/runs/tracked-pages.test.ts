import { packDocument, unpackDocument } from '@scrapejobs/content';
import { newId } from '@scrapejobs/db';
import { createTestDatabase, type TestDatabase } from '../../../../../test/support/database.ts';
import { TrackedPages } from './tracked-pages.ts';

let tdb: TestDatabase;
let pages: TrackedPages;
const URL_A = 'https://shop.example.com/kettle';

beforeAll(async () => {
  tdb = await createTestDatabase();
  pages = new TrackedPages(tdb.db.pool);
});
afterAll(() => tdb.drop());

async function newUser(): Promise<string> {
  const id = newId('usr');
  await tdb.db.user.create({ data: { id, email: `${id}@example.com` } });
  return id;
}

/** A run of a new compatible-API job of the user's, in `mode`. */
async function newRun(userId: string, mode: 'test' | 'live' = 'test'): Promise<string> {
  const jobId = newId('job');
  await tdb.db.job.create({
    data: {
      id: jobId,
      userId,
      mode,
      name: 'tracked',
      source: URL_A,
      queries: [],
      rateLimit: 10,
      origin: 'firecrawl',
      pageTracking: { tag: null, modes: ['git-diff'], schema: null, prompt: null },
    },
  });
  const runId = newId('run');
  await tdb.db.run.create({ data: { id: runId, jobId, trigger: 'manual' } });
  return runId;
}

async function storeDocument(runId: string, seq: number, markdown: string): Promise<void> {
  const packed = packDocument({ markdown, truncated: [] });
  await tdb.db.runDocument.create({
    data: {
      runId,
      seq,
      url: URL_A,
      bytes: packed.bytes,
      markdownHash: Buffer.from(packed.markdownHash!),
      data: Buffer.from(packed.data),
    },
  });
}

const at = (minute: number) => new Date(Date.UTC(2026, 11, 1, 10, minute));
const page = (runId: string, minute: number, tag: string | null = null, seq = 0) => ({
  runId,
  seq,
  tag,
  url: URL_A,
  at: at(minute),
});
const markdownOf = (found: { document: Uint8Array } | null) =>
  found && unpackDocument(found.document).markdown;

describe('TrackedPages.record', () => {
  test("a page's first scrape has no previous one; the next finds it with its time and document", async () => {
    const user = await newUser();
    const first = await newRun(user);
    expect(await pages.record(page(first, 0))).toBeNull();
    await storeDocument(first, 0, 'Price: 25');
    const second = await newRun(user);
    const found = await pages.record(page(second, 5));
    expect(found?.scrapedAt.toISOString()).toBe(at(0).toISOString());
    expect(markdownOf(found)).toBe('Price: 25');
    await storeDocument(second, 0, 'Price: 30');
    expect(markdownOf(await pages.record(page(await newRun(user), 9)))).toBe('Price: 30');
  });

  test('scrapes under another tag, of another account or of the other mode are not previous ones', async () => {
    const user = await newUser();
    const first = await newRun(user);
    await pages.record(page(first, 0, 'prices'));
    await storeDocument(first, 0, 'Price: 25');
    expect(await pages.record(page(await newRun(user), 1, 'stock'))).toBeNull();
    expect(await pages.record(page(await newRun(user), 2, null))).toBeNull();
    expect(await pages.record(page(await newRun(await newUser()), 3, 'prices'))).toBeNull();
    expect(await pages.record(page(await newRun(user, 'live'), 4, 'prices'))).toBeNull();
    expect(markdownOf(await pages.record(page(await newRun(user), 5, 'prices')))).toBe('Price: 25');
  });

  test('a scrape whose document was never stored, or whose run is being deleted, is passed over', async () => {
    const user = await newUser();
    const kept = await newRun(user);
    await pages.record(page(kept, 0));
    await storeDocument(kept, 0, 'kept');
    // Noted, but its document never stored (its worker lost the page).
    await pages.record(page(await newRun(user), 1));
    const deleting = await newRun(user);
    await pages.record(page(deleting, 2));
    await storeDocument(deleting, 0, 'deleting');
    await tdb.db.run.update({ where: { id: deleting }, data: { deleting: true } });
    const found = await pages.record(page(await newRun(user), 3));
    expect(markdownOf(found)).toBe('kept');
    expect(found?.scrapedAt.toISOString()).toBe(at(0).toISOString());
  });

  test('a page processed again in its run keeps one row and does not find itself', async () => {
    const user = await newUser();
    const earlier = await newRun(user);
    await pages.record(page(earlier, 0));
    await storeDocument(earlier, 0, 'earlier');
    const run = await newRun(user);
    await pages.record(page(run, 1, null, 3));
    await storeDocument(run, 3, 'this run');
    expect(markdownOf(await pages.record(page(run, 2, null, 3)))).toBe('earlier');
    expect(await tdb.db.trackedPage.count({ where: { runId: run } })).toBe(1);
  });

  test("a run's rows go with it", async () => {
    const user = await newUser();
    const run = await newRun(user);
    await pages.record(page(run, 0));
    await tdb.db.run.delete({ where: { id: run } });
    expect(await tdb.db.trackedPage.count({ where: { runId: run } })).toBe(0);
  });
});
