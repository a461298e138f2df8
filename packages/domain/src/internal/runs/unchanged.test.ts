import { createHash } from 'node:crypto';
import { packDocument } from '@scrapejobs/content';
import { urlKey } from '@scrapejobs/crawl';
import { newId } from '@scrapejobs/db';
import { createTestDatabase, type TestDatabase } from '../../../../../test/support/database.ts';
import { storedRecords } from '../../../../../test/support/records.ts';
import { RunAnalysis } from './analysis.ts';
import { type ClaimedUrl, Frontier } from './frontier.ts';
import { RetentionSweep } from './retention.ts';
import { fetchSettingsHash, type RunSettings, runSettings } from './settings.ts';
import { type Batch, RunStore, type UrlOutcome } from './store.ts';
import { type FetchValidators, planUnchanged } from './unchanged.ts';
import { readRunUrls } from './urls.ts';

let tdb: TestDatabase;
let store: RunStore;
let frontier: Frontier;
let userId: string;
const LEASE_MS = 30_000;

beforeAll(async () => {
  tdb = await createTestDatabase();
  store = new RunStore(tdb.db, 'https://scrape.example.com/');
  frontier = new Frontier(tdb.db);
  userId = (await tdb.db.user.create({ data: { id: newId('usr'), email: 'unchanged@example.com' } })).id;
});
afterAll(() => tdb.drop());

const QUERIES = [{ name: 'title', type: 'css', query: 'h1', join: false }];
const crawl = (maxDepth: number) => ({
  follow: [{ type: 'css', query: 'a::attr(href)' }],
  max_depth: maxDepth,
  max_pages: 100,
  same_origin: true,
  include: [],
  exclude: [],
  respect_robots_txt: true,
  sitemap: false,
});

interface JobOptions {
  crawl?: object | null;
  refetch?: 'conditional' | 'always';
  formats?: string[];
  changeTracking?: object | null;
}

async function newJob(source: string, options: JobOptions = {}): Promise<string> {
  const jobId = newId('job');
  await tdb.db.job.create({
    data: {
      id: jobId,
      userId,
      mode: 'test',
      name: 'unchanged',
      source,
      queries: QUERIES,
      rateLimit: 10,
      crawl: options.crawl ?? undefined,
      formats: options.formats ?? [],
      refetch: options.refetch ?? 'conditional',
      ...(options.changeTracking && { changeTracking: options.changeTracking }),
      status: 'running',
      updatedAt: new Date(Date.now() - 60_000),
    },
  });
  return jobId;
}

/** A run of the job started as POST run starts it (its settings those of the job), seeded. */
async function startRun(jobId: string): Promise<{ runId: string; settings: RunSettings }> {
  const job = await tdb.db.job.findUniqueOrThrow({ where: { id: jobId } });
  const runId = newId('run');
  const settings = {
    source: job.source,
    queries: job.queries,
    rate_limit: job.rateLimit,
    render_config: null,
    proxy_config: null,
    crawl: job.crawl,
    request: null,
    formats: job.formats,
    content: null,
    track_content: (job.changeTracking as { content?: boolean } | null)?.content ?? false,
    urls: null,
    refetch: job.refetch,
  };
  await tdb.db.run.create({ data: { id: runId, jobId, trigger: 'manual', settings } });
  await tdb.db.job.update({ where: { id: jobId }, data: { lastRunId: runId } });
  await frontier.seed(runId);
  return { runId, settings: runSettings(settings) };
}

/** Ends a run as a worker would once every URL of it is stored. */
const endRun = async (runId: string) => expect(await store.finish(runId, null)).not.toBeNull();

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What a worker hands over for a page it fetched and extracted. */
interface Fetched {
  titles?: string[];
  body?: string;
  links?: string[] | null;
  markdown?: string;
  screenshot?: Buffer;
  etag?: string | null;
}

function fetchedBatch(url: ClaimedUrl, settings: RunSettings, page: Fetched = {}): Batch {
  const titles = page.titles ?? [`title of ${url.url}`];
  const validators: FetchValidators = {
    etag: page.etag === undefined ? `"${url.seq}"` : page.etag,
    lastModified: 'Wed, 21 Oct 2026 07:28:00 GMT',
    bodyHash: sha256(page.body ?? url.url),
    settingsHash: fetchSettingsHash(settings),
    linksFollowed: page.links !== null && page.links !== undefined,
  };
  const packed =
    page.markdown === undefined ? null : packDocument({ markdown: page.markdown, truncated: [] });
  return {
    outcomes: [
      {
        seq: url.seq,
        claims: url.claims,
        status: 'success',
        httpStatus: 200,
        records: titles.length,
        durationMs: 10,
        fetchedAt: new Date(),
        failure: null,
        validators,
      },
    ],
    pages: [
      {
        url: url.url,
        urlIndex: url.seq,
        scrapedAt: new Date(),
        records: titles.length,
        json: JSON.stringify(titles.map((title) => ({ title }))),
      },
    ],
    found: (page.links ?? []).map((link) => ({
      kind: 'page',
      url: link,
      key: urlKey('page', link),
      depth: url.depth + 1,
      parentSeq: url.seq,
    })),
    screenshots: page.screenshot ? [{ seq: url.seq, png: page.screenshot }] : [],
    documents: packed
      ? [
          {
            seq: url.seq,
            url: url.url,
            statusCode: 200,
            bytes: packed.bytes,
            markdownHash: packed.markdownHash,
            data: packed.data,
          },
        ]
      : [],
  };
}

const unchanged = (url: ClaimedUrl, httpStatus = 304): UrlOutcome => ({
  seq: url.seq,
  claims: url.claims,
  status: 'success',
  httpStatus,
  records: null,
  durationMs: 3,
  fetchedAt: new Date(),
  failure: null,
  unchanged: true,
});

const only = (outcomes: UrlOutcome[]): Batch => ({ outcomes, pages: [], found: [] });

/** Several batches as one, as a worker's batch writer gathers them. */
const merged = (...batches: Batch[]): Batch => ({
  outcomes: batches.flatMap((b) => b.outcomes),
  pages: batches.flatMap((b) => b.pages),
  found: batches.flatMap((b) => b.found),
  screenshots: batches.flatMap((b) => b.screenshots ?? []),
  documents: batches.flatMap((b) => b.documents ?? []),
});

const validatorsOf = (jobId: string) =>
  tdb.db.pageValidators.findMany({ where: { jobId }, orderBy: { sourceSeq: 'asc' } });
/** The stored links of the job's pages, null where unknown (the ORM reads a null list as empty). */
const linksOf = async (jobId: string) =>
  (
    await tdb.db.$queryRaw<{ links: string[] | null }[]>`
      SELECT links FROM page_validators WHERE job_id = ${jobId} ORDER BY source_seq`
  ).map((row) => row.links);
const runOf = (runId: string) => tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
const urlsOf = (runId: string) => tdb.db.runUrl.findMany({ where: { runId }, orderBy: { seq: 'asc' } });
const claimAll = (runId: string) => frontier.claim(runId, 100, LEASE_MS);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('fetchSettingsHash', () => {
  const base = runSettings({
    source: 'https://example.com/',
    queries: QUERIES,
    rate_limit: 10,
    render_config: null,
    proxy_config: null,
    crawl: crawl(2),
  });

  it('is the same for the same settings whatever the order of their keys', () => {
    const reversed = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(reversed)
        : value !== null && typeof value === 'object'
          ? Object.fromEntries(
              Object.entries(value)
                .reverse()
                .map(([k, v]) => [k, reversed(v)]),
            )
          : value;
    const reordered = reversed(base) as RunSettings;
    expect(Object.keys(reordered.crawl!)[0]).toBe('sitemap');
    expect(fetchSettingsHash(reordered)).toBe(fetchSettingsHash(base));
    expect(fetchSettingsHash(base)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('changes with what shapes records, documents and links, and only with that', () => {
    const hash = fetchSettingsHash(base);
    const other = (change: Partial<RunSettings>) => fetchSettingsHash({ ...base, ...change });
    expect(other({ queries: [{ ...QUERIES[0]!, type: 'css', query: 'h2' }] })).not.toBe(hash);
    expect(other({ formats: ['markdown'] })).not.toBe(hash);
    expect(other({ content: { only_main_content: false, include_tags: [], exclude_tags: [] } })).not.toBe(
      hash,
    );
    expect(other({ crawl: { ...base.crawl!, exclude: ['/private/*'] } })).not.toBe(hash);
    expect(other({ crawl: null })).not.toBe(hash);
    // How far or how fast a crawl goes shapes no page.
    expect(other({ crawl: { ...base.crawl!, max_depth: 9, max_pages: 5 } })).toBe(hash);
    expect(other({ rateLimit: 1, source: 'https://example.com/other', refetch: 'always' })).toBe(hash);
  });
});

describe('validators of pages fetched (docs/api.md §20)', () => {
  it("keeps a page's validators, hashes, copy source and links, and gives them to the next run's claims", async () => {
    const jobId = await newJob('https://example.com/a', { crawl: crawl(2) });
    const first = await startRun(jobId);
    const [a] = await claimAll(first.runId);
    expect(a!.previous).toBeNull();
    const links = ['https://example.com/b', 'https://example.com/c'];
    expect(await store.saveBatch(first.runId, fetchedBatch(a!, first.settings, { links, body: 'A' }))).toBe(
      0,
    );
    const [row] = await validatorsOf(jobId);
    expect(row).toEqual({
      jobId,
      urlKey: new Uint8Array(urlKey('page', 'https://example.com/a')),
      etag: '"0"',
      lastModified: 'Wed, 21 Oct 2026 07:28:00 GMT',
      bodyHash: new Uint8Array(Buffer.from(sha256('A'), 'hex')),
      settingsHash: new Uint8Array(Buffer.from(fetchSettingsHash(first.settings), 'hex')),
      sourceRunId: first.runId,
      sourceSeq: 0,
      links,
    });
    await tdb.db.run.update({
      where: { id: first.runId },
      data: { status: 'success', finishedAt: new Date() },
    });

    const second = await startRun(jobId);
    const [claimed] = await frontier.claim(second.runId, 1, 1);
    const previous = {
      etag: '"0"',
      lastModified: 'Wed, 21 Oct 2026 07:28:00 GMT',
      bodyHash: sha256('A'),
      settingsHash: fetchSettingsHash(second.settings),
    };
    expect(claimed!.previous).toEqual(previous);
    await sleep(20);
    expect((await frontier.takeOver(second.runId, LEASE_MS))!.previous).toEqual(previous);
  });

  it('gives no previous fetch to a run of a job with refetch always, and keeps none from it', async () => {
    const jobId = await newJob('https://example.com/a', { refetch: 'always' });
    const first = await startRun(jobId);
    const [a] = await claimAll(first.runId);
    await store.saveBatch(first.runId, fetchedBatch(a!, first.settings));
    expect(await validatorsOf(jobId)).toEqual([]);
    // Validators kept while the job was conditional are not used by a run of it set to always.
    await tdb.db.pageValidators.create({
      data: {
        jobId,
        urlKey: new Uint8Array(urlKey('page', a!.url)),
        bodyHash: new Uint8Array(32),
        settingsHash: new Uint8Array(32),
        sourceRunId: first.runId,
        sourceSeq: 0,
      },
    });
    await endRun(first.runId);
    const second = await startRun(jobId);
    expect((await claimAll(second.runId))[0]!.previous).toBeNull();
  });

  it('keeps no validators from a run of a job changed since the run started', async () => {
    const jobId = await newJob('https://example.com/a');
    const { runId, settings } = await startRun(jobId);
    const [a] = await claimAll(runId);
    await tdb.db.job.update({ where: { id: jobId }, data: { updatedAt: new Date(Date.now() + 1_000) } });
    await store.saveBatch(runId, fetchedBatch(a!, settings));
    expect((await urlsOf(runId))[0]!.status).toBe('success');
    expect(await validatorsOf(jobId)).toEqual([]);
  });

  it('deletes the validators with their job', async () => {
    const jobId = await newJob('https://example.com/a');
    const { runId, settings } = await startRun(jobId);
    const [a] = await claimAll(runId);
    await store.saveBatch(runId, fetchedBatch(a!, settings));
    expect(await validatorsOf(jobId)).toHaveLength(1);
    await tdb.db.job.delete({ where: { id: jobId } });
    expect(await validatorsOf(jobId)).toEqual([]);
  });
});

describe('unchanged pages (docs/api.md §20)', () => {
  it('stores an unchanged page as a copy of its records, document and screenshot, counted in the run', async () => {
    const jobId = await newJob('https://example.com/[1-2]', { formats: ['markdown', 'screenshot'] });
    const first = await startRun(jobId);
    const [a, b] = await claimAll(first.runId);
    const png = Buffer.from('png of a');
    await store.saveBatch(
      first.runId,
      merged(
        fetchedBatch(a!, first.settings, { titles: ['a1', 'a2', 'a3'], markdown: '# A', screenshot: png }),
        fetchedBatch(b!, first.settings, { titles: ['b1'], markdown: '# B' }),
      ),
    );
    await endRun(first.runId);

    const second = await startRun(jobId);
    const [a2, b2] = await claimAll(second.runId);
    expect(a2!.previous).not.toBeNull();
    expect(await store.saveBatch(second.runId, only([unchanged(a2!), unchanged(b2!, 200)]))).toBe(0);
    expect(await runOf(second.runId)).toEqual(
      expect.objectContaining({ successfulUrls: 2, resultsCount: 4, activeUrls: 0, pendingUrls: 0 }),
    );
    const urls = await urlsOf(second.runId);
    expect(urls.map((u) => [u.status, u.unchanged, u.httpStatus, u.records])).toEqual([
      ['success', true, 304, 3],
      ['success', true, 200, 1],
    ]);
    const before = await storedRecords(tdb.db, first.runId);
    const after = await storedRecords(tdb.db, second.runId);
    expect(after.map((r) => [r.url, r.urlIndex, r.rowIndex, r.data])).toEqual(
      before.map((r) => [r.url, r.urlIndex, r.rowIndex, r.data]),
    );
    expect(after.every((r) => !before.some((p) => p.id === r.id))).toBe(true);
    expect(Math.min(...after.map((r) => r.scrapedAt.getTime()))).toBeGreaterThan(
      Math.max(...before.map((r) => r.scrapedAt.getTime())),
    );
    const documents = (runId: string) =>
      tdb.db.runDocument.findMany({ where: { runId }, orderBy: { seq: 'asc' } });
    expect((await documents(second.runId)).map(({ runId, ...d }) => d)).toEqual(
      (await documents(first.runId)).map(({ runId, ...d }) => d),
    );
    const shot = await tdb.db.runScreenshot.findUniqueOrThrow({
      where: { runId_seq: { runId: second.runId, seq: 0 } },
    });
    expect(Buffer.from(shot.png)).toEqual(png);
    expect((await validatorsOf(jobId)).map((v) => [v.sourceRunId, v.sourceSeq])).toEqual([
      [second.runId, 0],
      [second.runId, 1],
    ]);
    const items = await readRunUrls(tdb.db, second.runId, { limit: 10 }, (seq) => `shot/${seq}`);
    expect(items.items.map((u) => [u.http_status, u.unchanged, u.records, u.screenshot_url])).toEqual([
      [304, true, 3, 'shot/0'],
      [200, true, 1, null],
    ]);
    await endRun(second.runId);
    expect((await runOf(second.runId)).resultsCount).toBe(4);

    // The next run copies from the run before it: the first may go.
    await tdb.db.run.delete({ where: { id: first.runId } });
    const third = await startRun(jobId);
    const [a3] = await claimAll(third.runId);
    expect(a3!.previous).not.toBeNull();
    await store.saveBatch(third.runId, only([unchanged(a3!)]));
    expect((await storedRecords(tdb.db, third.runId)).map((r) => r.data)).toEqual([
      { title: 'a1' },
      { title: 'a2' },
      { title: 'a3' },
    ]);
  });

  it('takes the validators of a 200 with the same body over from the fetch that gave it', async () => {
    const jobId = await newJob('https://example.com/a');
    const first = await startRun(jobId);
    const [a] = await claimAll(first.runId);
    await store.saveBatch(first.runId, fetchedBatch(a!, first.settings, { etag: null }));
    await endRun(first.runId);
    const second = await startRun(jobId);
    const [a2] = await claimAll(second.runId);
    const { validators } = fetchedBatch(a2!, second.settings, { etag: '"new"' }).outcomes[0]!;
    await store.saveBatch(second.runId, only([{ ...unchanged(a2!, 200), validators: validators! }]));
    const [row] = await validatorsOf(jobId);
    expect(row).toEqual(expect.objectContaining({ etag: '"new"', sourceRunId: second.runId }));
    // Its links stay unknown: it was not followed for links.
    expect(await linksOf(jobId)).toEqual([null]);
  });

  it('accepts the links of an unchanged page in a crawl again, through the dedupe of found links', async () => {
    const site = (path: string) => `https://example.com/${path}`;
    const jobId = await newJob(site('[1-2]'), { crawl: crawl(3) });
    const first = await startRun(jobId);
    const [a, b] = await claimAll(first.runId);
    await store.saveBatch(
      first.runId,
      merged(
        fetchedBatch(a!, first.settings, { links: [site('2'), site('3'), site('4')] }),
        fetchedBatch(b!, first.settings, { links: [site('4'), site('5')] }),
      ),
    );
    await tdb.db.run.update({
      where: { id: first.runId },
      data: { status: 'success', finishedAt: new Date() },
    });

    const second = await startRun(jobId);
    const [a2, b2] = await claimAll(second.runId);
    // The same batch holds page 1 unchanged and page 2 fetched again, which now links to 4 and 6.
    const fetchedB = fetchedBatch(b2!, second.settings, { links: [site('4'), site('6')] });
    expect(await store.saveBatch(second.runId, merged(only([unchanged(a2!)]), fetchedB))).toBe(0);
    const urls = await urlsOf(second.runId);
    expect(urls.map((u) => [u.url, u.status, u.depth, u.parentSeq])).toEqual([
      [site('1'), 'success', 0, null],
      [site('2'), 'success', 0, null],
      [site('4'), 'pending', 1, 1],
      [site('6'), 'pending', 1, 1],
      [site('3'), 'pending', 1, 0],
    ]);
    expect(await runOf(second.runId)).toEqual(expect.objectContaining({ totalUrls: 5, pendingUrls: 3 }));
    // Page 1 still has its links for the run after, page 2 its new ones.
    expect((await validatorsOf(jobId)).map((v) => v.links)).toEqual([
      [site('2'), site('3'), site('4')],
      [site('4'), site('6')],
    ]);
  });

  it('gives an unchanged page back for a full fetch when the run needs links its last fetch did not keep', async () => {
    const jobId = await newJob('https://example.com/a', { crawl: crawl(2) });
    const first = await startRun(jobId);
    const [a] = await claimAll(first.runId);
    await store.saveBatch(first.runId, fetchedBatch(a!, first.settings, { links: null }));
    expect(await linksOf(jobId)).toEqual([null]);
    await endRun(first.runId);

    const second = await startRun(jobId);
    const [a2] = await claimAll(second.runId);
    expect(await store.saveBatch(second.runId, only([unchanged(a2!)]))).toBe(0);
    expect((await urlsOf(second.runId))[0]).toEqual(
      expect.objectContaining({ status: 'pending', unchanged: false }),
    );
    expect(await runOf(second.runId)).toEqual(
      expect.objectContaining({ startedUrls: 0, pendingUrls: 1, activeUrls: 0, successfulUrls: 0 }),
    );
    expect(await validatorsOf(jobId)).toEqual([]);
    const [again] = await claimAll(second.runId);
    expect(again).toEqual(expect.objectContaining({ seq: 0, claims: a2!.claims + 1, previous: null }));
  });

  it('gives an unchanged page back when retention is deleting the run its copy would come from', async () => {
    const jobId = await newJob('https://example.com/a', { formats: ['markdown'] });
    const first = await startRun(jobId);
    const [a] = await claimAll(first.runId);
    await store.saveBatch(first.runId, fetchedBatch(a!, first.settings, { markdown: '# A' }));
    await endRun(first.runId);

    const second = await startRun(jobId);
    const [a2] = await claimAll(second.runId);
    expect(a2!.previous).not.toBeNull();
    // The sweep marks the run first, then deletes its rows in batches.
    await tdb.db.run.update({ where: { id: first.runId }, data: { deleting: true } });
    expect(await store.saveBatch(second.runId, only([unchanged(a2!)]))).toBe(0);
    expect((await urlsOf(second.runId))[0]!.status).toBe('pending');
    expect(await storedRecords(tdb.db, second.runId)).toEqual([]);
    expect(await tdb.db.runDocument.count({ where: { runId: second.runId } })).toBe(0);
    expect(await runOf(second.runId)).toEqual(
      expect.objectContaining({ startedUrls: 0, pendingUrls: 1, activeUrls: 0, resultsCount: 0 }),
    );
    const [again] = await claimAll(second.runId);
    expect(again!.previous).toBeNull();
    await store.saveBatch(second.runId, fetchedBatch(again!, second.settings, { markdown: '# A' }));
    expect(await runOf(second.runId)).toEqual(
      expect.objectContaining({ successfulUrls: 1, resultsCount: 1 }),
    );
    expect((await validatorsOf(jobId)).map((v) => v.sourceRunId)).toEqual([second.runId]);
  });

  it('writes nothing for an unchanged page whose claim was lost, copies included, and copies once', async () => {
    const jobId = await newJob('https://example.com/a', { formats: ['markdown', 'screenshot'] });
    const first = await startRun(jobId);
    const [a] = await claimAll(first.runId);
    const batch = fetchedBatch(a!, first.settings, { markdown: '# A', screenshot: Buffer.from('png') });
    await store.saveBatch(first.runId, batch);
    await endRun(first.runId);

    const second = await startRun(jobId);
    const [lost] = await frontier.claim(second.runId, 1, 1);
    await sleep(20);
    const taken = await frontier.takeOver(second.runId, LEASE_MS);
    const counts = async () => ({
      records: (await storedRecords(tdb.db, second.runId)).length,
      documents: await tdb.db.runDocument.count({ where: { runId: second.runId } }),
      screenshots: await tdb.db.runScreenshot.count({ where: { runId: second.runId } }),
    });
    expect(await store.saveBatch(second.runId, only([unchanged(lost!)]))).toBe(1);
    expect(await counts()).toEqual({ records: 0, documents: 0, screenshots: 0 });
    expect((await urlsOf(second.runId))[0]).toEqual(
      expect.objectContaining({ status: 'active', unchanged: false }),
    );
    expect((await validatorsOf(jobId))[0]!.sourceRunId).toBe(first.runId);

    expect(await store.saveBatch(second.runId, only([unchanged(taken!)]))).toBe(0);
    expect(await store.saveBatch(second.runId, only([unchanged(taken!)]))).toBe(1);
    expect(await counts()).toEqual({ records: 1, documents: 1, screenshots: 1 });
    expect(await runOf(second.runId)).toEqual(
      expect.objectContaining({ successfulUrls: 1, resultsCount: 1 }),
    );
  });
});

describe('copy sources under retention and analysis', () => {
  it('keeps a run being copied from out of retention until the copy commits, and lets its analysis go on', async () => {
    const jobId = await newJob('https://example.com/a');
    const first = await startRun(jobId);
    const [a] = await claimAll(first.runId);
    await store.saveBatch(first.runId, fetchedBatch(a!, first.settings));
    await endRun(first.runId);
    // Ended long ago, and not the job's latest ended run: past its retention.
    const days = (n: number) => new Date(Date.now() - n * 86_400_000);
    await tdb.db.run.update({ where: { id: first.runId }, data: { finishedAt: days(10) } });
    const later = await startRun(jobId);
    await tdb.db.run.update({
      where: { id: later.runId },
      data: { status: 'success', finishedAt: days(9) },
    });
    await tdb.db.job.update({ where: { id: jobId }, data: { retentionDays: 1 } });

    const second = await startRun(jobId);
    const [a2] = await claimAll(second.runId);
    const sweep = new RetentionSweep(tdb.db, { defaultDays: 0 });
    const client = await tdb.db.pool.connect();
    try {
      await client.query('BEGIN');
      // What a batch holds from planning its copies until it commits.
      const plan = await planUnchanged(client, second.runId, [a2!]);
      expect(plan.copies.map((c) => c.sourceRunId)).toEqual([first.runId]);
      const analysis = new RunAnalysis(tdb.db, 'https://scrape.example.com/');
      expect(await analysis.analyze(first.runId)).not.toBeNull();
      await tdb.db.run.updateMany({ where: { jobId }, data: { analysisDue: false } });
      await sweep.sweep();
      expect((await runOf(first.runId)).deleting).toBe(false);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    await sweep.sweep();
    expect(await tdb.db.run.findUnique({ where: { id: first.runId } })).toBeNull();
  });
});

describe('change tracking of unchanged pages', () => {
  it('compares copied records and pages with their base as it compares extracted ones', async () => {
    const analysis = new RunAnalysis(tdb.db, 'https://scrape.example.com/');
    const options = { formats: ['markdown'], changeTracking: { key: ['title'], content: true } };
    const pageA = { titles: ['a1', 'a2'], markdown: '# A\n\nsame', body: 'A' };
    /** A job's two runs: page 1 the same both times, page 2 changed; page 1 copied when `copy`. */
    async function twoRuns(copy: boolean): Promise<string> {
      const jobId = await newJob('https://example.com/[1-2]', options);
      const first = await startRun(jobId);
      const [a, b] = await claimAll(first.runId);
      await store.saveBatch(
        first.runId,
        merged(
          fetchedBatch(a!, first.settings, pageA),
          fetchedBatch(b!, first.settings, { titles: ['b1'], markdown: '# B\n\nold' }),
        ),
      );
      await endRun(first.runId);
      await analysis.analyze(first.runId);
      const second = await startRun(jobId);
      const [a2, b2] = await claimAll(second.runId);
      await store.saveBatch(
        second.runId,
        merged(
          copy ? only([unchanged(a2!)]) : fetchedBatch(a2!, second.settings, pageA),
          fetchedBatch(b2!, second.settings, { titles: ['b2'], markdown: '# B\n\nnew' }),
        ),
      );
      await endRun(second.runId);
      return second.runId;
    }
    const copied = await twoRuns(true);
    const extracted = await twoRuns(false);
    const [withCopies, withoutCopies] = [await analysis.analyze(copied), await analysis.analyze(extracted)];
    expect(withCopies!.changes).toEqual(withoutCopies!.changes);
    expect(withCopies!.changes).toEqual(
      expect.objectContaining({
        added: 1,
        removed: 1,
        unchanged: 2,
        pages: { added: 0, removed: 0, changed: 1, unchanged: 1 },
      }),
    );
    expect(withCopies!.health).toEqual(withoutCopies!.health);
    const changes = async (runId: string) =>
      (await tdb.db.runChange.findMany({ where: { runId }, orderBy: { seq: 'asc' } })).map(
        ({ runId: _, scrapedAt, ...change }) => change,
      );
    expect(await changes(copied)).toEqual(await changes(extracted));
  });
});
