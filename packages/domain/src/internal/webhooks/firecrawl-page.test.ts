import { packDocument } from '@scrapejobs/content';
import { newId } from '@scrapejobs/db';
import { createTestDatabase, type TestDatabase } from '../../../../../test/support/database.ts';
import { Frontier } from '../runs/frontier.ts';
import { RunStore, type StoredDocument } from '../runs/store.ts';
import type { DeliveryEntry } from './entries.ts';
import { OutboxFanOut } from './fan-out.ts';
import { jobWebhookRow } from './firecrawl.ts';
import { cappedDocument, MAX_PAGE_DOCUMENT_BYTES } from './firecrawl-page.ts';

// crawl.page deliveries (docs/api.md §18): pages stored by the run store, fanned out with their
// documents by the real fan-out on a real database; the queue is a recording one.
let tdb: TestDatabase;
let store: RunStore;
let frontier: Frontier;
let userId: string;
const queued: DeliveryEntry[] = [];
const queue = {
  async addBulk(jobs: DeliveryEntry[]) {
    queued.push(...jobs);
  },
};

beforeAll(async () => {
  tdb = await createTestDatabase();
  store = new RunStore(tdb.db, 'https://scrape.example.com');
  frontier = new Frontier(tdb.db);
  userId = (await tdb.db.user.create({ data: { id: newId('usr'), email: 'pages@example.com' } })).id;
});
afterAll(() => tdb.drop());

/** A running crawl of `source` with `formats`, with a Firecrawl webhook asking for `page`. */
async function watchedRun(source: string, formats: string[], prefix: 'crawl' | 'batch_scrape' = 'crawl') {
  const jobId = newId('job');
  const runId = newId('run');
  await tdb.db.job.create({
    data: { id: jobId, userId, mode: 'test', name: 'c', source, queries: [], rateLimit: 10, formats },
  });
  const webhook = {
    url: 'https://93.184.215.14/hook',
    headers: {},
    metadata: { tag: 'x' },
    events: ['page' as const],
  };
  const row = jobWebhookRow(
    { userId, mode: 'test' },
    jobId,
    { webhook, prefix, field: 'webhook' },
    new Date(),
  );
  await tdb.db.webhook.create({ data: row });
  const settings = {
    source,
    queries: [],
    rate_limit: 10,
    render_config: null,
    proxy_config: null,
    crawl: null,
    formats,
  };
  await tdb.db.run.create({ data: { id: runId, jobId, trigger: 'manual', settings } });
  await frontier.seed(runId);
  return { jobId, runId, webhookId: row.id };
}

type PageMetadata = Parameters<typeof packDocument>[0]['metadata'];

function documentOf(seq: number, url: string, markdown: string, rawHtml: string): StoredDocument {
  const packed = packDocument({
    markdown,
    raw_html: rawHtml,
    // The fields a page shows; those it does not have left out.
    metadata: { title: `Page ${seq}`, url, source_url: url, status_code: 200 } as PageMetadata,
    truncated: [],
  });
  return { seq, url, statusCode: 200, ...packed };
}

const bodiesOf = async (webhookId: string) =>
  (await tdb.db.delivery.findMany({ where: { webhookId } }))
    .map((d) => ({ kind: d.eventKind, body: JSON.parse(d.body) as Record<string, unknown> }))
    .sort((a, b) => String(a.body.webhookId).localeCompare(String(b.body.webhookId)));

describe('crawl.page deliveries', () => {
  it('sends each page stored successfully once, with its document in the job’s formats', async () => {
    const { runId, webhookId } = await watchedRun('https://site.test/[1-2]', ['markdown', 'metadata']);
    const [a, b] = await frontier.claim(runId, 2, 30_000);
    const outcome = { httpStatus: 200, records: 0, durationMs: 5, fetchedAt: new Date(), failure: null };
    await store.saveBatch(runId, {
      pages: [],
      outcomes: [
        { seq: a!.seq, claims: a!.claims, status: 'success', ...outcome },
        {
          seq: b!.seq,
          claims: b!.claims,
          status: 'failed',
          ...outcome,
          failure: { code: 'HTTP_ERROR', message: '500' },
        },
      ],
      found: [],
      documents: [documentOf(a!.seq, a!.url, '# Page 1', '<html>raw</html>')],
    });
    const fanOut = new OutboxFanOut(tdb.db.pool, queue, 100);
    await fanOut.runOnce();
    await tdb.db.event.updateMany({ data: { dispatchedAt: null } });
    await fanOut.runOnce();
    const [event] = await tdb.db.event.findMany({ where: { kind: 'firecrawl.page' } });
    expect(await bodiesOf(webhookId)).toEqual([
      {
        kind: 'crawl.page',
        body: {
          success: true,
          type: 'crawl.page',
          id: runId,
          webhookId: event!.id,
          data: [
            {
              markdown: '# Page 1',
              metadata: expect.objectContaining({
                title: 'Page 0',
                sourceURL: 'https://site.test/1',
                url: 'https://site.test/1',
                statusCode: 200,
              }),
            },
          ],
          metadata: { tag: 'x' },
        },
      },
    ]);
    // Queued again by the second pass with the same id (the fan-out's exactly-once).
    expect(new Set(queued.map((q) => q.opts.jobId)).size).toBe(1);
  });

  it('names a batch’s page batch_scrape.page and leaves out raw HTML that would make the body too large', async () => {
    const { runId, webhookId } = await watchedRun(
      'https://site.test/p',
      ['markdown', 'raw_html', 'metadata'],
      'batch_scrape',
    );
    const [a] = await frontier.claim(runId, 1, 30_000);
    const big = `<html>${'x'.repeat(MAX_PAGE_DOCUMENT_BYTES)}</html>`;
    await store.saveBatch(runId, {
      pages: [],
      outcomes: [
        {
          seq: a!.seq,
          claims: a!.claims,
          status: 'success',
          httpStatus: 200,
          records: 0,
          durationMs: 5,
          fetchedAt: new Date(),
          failure: null,
        },
      ],
      found: [],
      documents: [documentOf(a!.seq, a!.url, '# P', big)],
    });
    await new OutboxFanOut(tdb.db.pool, queue, 100).runOnce();
    const [delivery] = await bodiesOf(webhookId);
    expect(delivery!.kind).toBe('batch_scrape.page');
    const [doc] = delivery!.body.data as Record<string, unknown>[];
    expect(doc).toEqual({ markdown: '# P', metadata: expect.objectContaining({ title: 'Page 0' }) });
  });
});

describe('cappedDocument', () => {
  it('leaves out raw HTML, then HTML, links and markdown, only as far as needed to fit', () => {
    const doc = {
      markdown: 'm'.repeat(40),
      html: 'h'.repeat(40),
      rawHtml: 'r'.repeat(40),
      links: ['l'],
      metadata: {},
    };
    expect(cappedDocument(doc, 1000)).toBe(doc);
    expect(Object.keys(cappedDocument(doc, 140))).toEqual(['markdown', 'html', 'links', 'metadata']);
    expect(Object.keys(cappedDocument(doc, 90))).toEqual(['markdown', 'links', 'metadata']);
    expect(Object.keys(cappedDocument(doc, 10))).toEqual(['metadata']);
  });
});
