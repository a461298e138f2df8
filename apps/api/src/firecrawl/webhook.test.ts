import { buildTestApi } from '../../../../test/support/api.ts';
import { client } from '../../../../test/support/client.ts';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
import { testPrefix } from '../../../../test/support/redis.ts';

// A crawl's or batch's Firecrawl `webhook` (docs/api.md §18) through the API's routes: checked as
// POST /webhooks checks a URL (§7), stored as a job-scoped webhook that no endpoint list shows.
let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let alice: ReturnType<typeof client>;
const prefix = testPrefix();
// A literal public address: classified without any DNS query, and never connected to here.
const PUBLIC_HOOK = 'http://93.184.215.14/hook';

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  const { token } = await api.keys.create({
    email: 'alice@example.com',
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write', 'webhooks:read', 'webhooks:write'],
    name: 'k',
  });
  alice = client(api.app, token);
});

afterAll(async () => {
  await api.close();
  await tdb.drop();
  await prefix.cleanup();
});

describe('a Firecrawl webhook of a crawl or batch', () => {
  it('is a 400 at webhook (a string) or webhook.url (an object) for a private target, and starts nothing', async () => {
    const jobs = await tdb.db.job.count();
    const asString = await alice.post('/v2/crawl', {
      url: 'https://site.test/',
      webhook: 'http://127.0.0.1:9/',
    });
    expect(asString.status).toBe(400);
    expect(asString.body).toMatchObject({ success: false, details: { webhook: expect.any(String) } });
    const asObject = await alice.post('/v2/batch/scrape', {
      urls: ['https://site.test/a'],
      webhook: { url: 'http://10.1.2.3/hook' },
    });
    expect(asObject.status).toBe(400);
    expect(asObject.body.details).toEqual({ 'webhook.url': expect.any(String) });
    expect(await tdb.db.job.count()).toBe(jobs);
  });

  it('is stored with its job, for the events asked for, and stays out of GET /webhooks', async () => {
    const res = await alice.post('/v2/crawl', {
      url: 'https://site.test/',
      webhook: { url: PUBLIC_HOOK, headers: { 'X-A': '1' }, metadata: { a: 1 }, events: ['started', 'page'] },
    });
    expect(res.status).toBe(200);
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: res.body.id } });
    const rows = await tdb.db.webhook.findMany({ where: { jobId: run.jobId } });
    expect(rows).toEqual([
      expect.objectContaining({
        url: PUBLIC_HOOK,
        style: 'firecrawl',
        eventPrefix: 'crawl',
        events: ['job.started', 'firecrawl.page'],
        headers: { 'X-A': '1' },
        metadata: { a: 1 },
        active: true,
      }),
    ]);
    const batch = await alice.post('/v2/batch/scrape', {
      urls: ['https://site.test/a'],
      webhook: PUBLIC_HOOK,
    });
    const batchRun = await tdb.db.run.findUniqueOrThrow({ where: { id: batch.body.id } });
    const batchHook = await tdb.db.webhook.findFirstOrThrow({ where: { jobId: batchRun.jobId } });
    expect([batchHook.eventPrefix, batchHook.events]).toEqual([
      'batch_scrape',
      ['job.started', 'firecrawl.page', 'job.completed', 'job.failed'],
    ]);
    const listed = await alice.get('/webhooks');
    expect(listed.status).toBe(200);
    expect([listed.body.webhooks, listed.body.count]).toEqual([[], 0]);
  });
});
