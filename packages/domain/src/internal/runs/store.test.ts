import { urlKey } from '@scrapejobs/crawl';
import { newId } from '@scrapejobs/db';
import { MAX_RECORDS_LIMIT } from '@scrapejobs/extraction';
import { createTestDatabase, type TestDatabase } from '../../../../../test/support/database.ts';
import { recordCount, storedRecords } from '../../../../../test/support/records.ts';
import { UsageService } from '../accounts/usage.ts';
import { jobWebhookRow } from '../webhooks/firecrawl.ts';
import { type ClaimedUrl, Frontier } from './frontier.ts';
import { type FoundUrl, type PageRows, RunStore, type UrlOutcome } from './store.ts';

let tdb: TestDatabase;
let store: RunStore;
let frontier: Frontier;
let userId: string;
const LEASE_MS = 30_000;
const HOUR = 3_600_000;

beforeAll(async () => {
  tdb = await createTestDatabase();
  store = new RunStore(tdb.db, 'https://scrape.example.com/');
  frontier = new Frontier(tdb.db);
  userId = (await tdb.db.user.create({ data: { id: newId('usr'), email: 'store@example.com' } })).id;
});
afterAll(() => tdb.drop());

/** A running run as POST run leaves it, with its settings, seeded as a worker seeds it. */
async function runningRun(
  source: string,
  crawl: object | null = null,
  queries: object[] = [{ name: 'title', type: 'css', query: 'h1', join: false }],
) {
  const jobId = newId('job');
  const runId = newId('run');
  await tdb.db.job.create({
    data: {
      id: jobId,
      userId,
      mode: 'test',
      name: 'store',
      source,
      queries,
      rateLimit: 10,
      status: 'running',
      lastRunId: runId,
    },
  });
  const settings = { source, queries, rate_limit: 10, render_config: null, proxy_config: null, crawl };
  await tdb.db.run.create({ data: { id: runId, jobId, trigger: 'manual', settings } });
  await frontier.seed(runId);
  return { jobId, runId };
}

const crawl = (maxPages: number) => ({
  follow: [{ type: 'css', query: 'a::attr(href)' }],
  max_depth: 3,
  max_pages: maxPages,
  same_origin: true,
  include: [],
  exclude: [],
  respect_robots_txt: true,
  sitemap: false,
});

const rowsOf = (url: ClaimedUrl, count = 2): PageRows => ({
  url: url.url,
  urlIndex: url.seq,
  scrapedAt: new Date(),
  records: count,
  json: JSON.stringify(Array.from({ length: count }, (_, i) => ({ title: `t${url.seq}.${i}` }))),
});
const ok = (url: ClaimedUrl, records = 2): UrlOutcome => ({
  seq: url.seq,
  claims: url.claims,
  status: 'success',
  httpStatus: 200,
  records,
  durationMs: 12,
  fetchedAt: new Date(),
  failure: null,
});
const failed = (url: ClaimedUrl, code = 'HTTP_ERROR'): UrlOutcome => ({
  ...ok(url),
  status: 'failed',
  httpStatus: 404,
  records: null,
  failure: { code, message: `${url.url}: HTTP 404` },
});
const link = (parent: ClaimedUrl, url: string): FoundUrl => ({
  kind: 'page',
  url,
  key: urlKey('page', url),
  depth: parent.depth + 1,
  parentSeq: parent.seq,
});
const runOf = (runId: string) => tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
const urlsOf = (runId: string) => tdb.db.runUrl.findMany({ where: { runId }, orderBy: { seq: 'asc' } });

describe('Frontier', () => {
  it('seeds the expanded source once, a URL that normalises like an earlier one counted once', async () => {
    const { runId } = await runningRun('https://EXAMPLE.com:443/p/[1-3]');
    await frontier.seed(runId);
    const urls = await urlsOf(runId);
    expect(urls.map((u) => [u.seq, u.url, u.status, u.depth])).toEqual([
      [0, 'https://example.com/p/1', 'pending', 0],
      [1, 'https://example.com/p/2', 'pending', 0],
      [2, 'https://example.com/p/3', 'pending', 0],
    ]);
    expect(await runOf(runId)).toEqual(expect.objectContaining({ seeded: true, totalUrls: 3, nextSeq: 3 }));
  });

  it('claims in the order accepted, never past max_pages however many workers claim at once', async () => {
    const { runId } = await runningRun('https://example.com/[1-9]', crawl(5));
    const claims = await Promise.all(Array.from({ length: 6 }, () => frontier.claim(runId, 2, LEASE_MS)));
    const seqs = claims.flat().map((u) => u.seq);
    expect(seqs.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4]);
    expect((await runOf(runId)).startedUrls).toBe(5);
    expect(await frontier.claim(runId, 4, LEASE_MS)).toEqual([]);
  });

  it('gives workers that claimed at once and waited for one another the next pending URLs, each once', async () => {
    const { runId } = await runningRun('https://example.com/[1-9]');
    const claims = await Promise.all(Array.from({ length: 6 }, () => frontier.claim(runId, 2, LEASE_MS)));
    expect(
      claims
        .flat()
        .map((u) => u.seq)
        .sort((a, b) => a - b),
    ).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(claims.map((urls) => urls.length).sort()).toEqual([0, 1, 2, 2, 2, 2]);
    expect(await runOf(runId)).toEqual(
      expect.objectContaining({ startedUrls: 9, pendingUrls: 0, activeUrls: 9 }),
    );
  });

  it('takes over a URL whose lease ran out, and fences the worker that lost it', async () => {
    const { runId } = await runningRun('https://example.com/a');
    const [first] = await frontier.claim(runId, 1, 1);
    await new Promise((r) => setTimeout(r, 20));
    const taken = await frontier.takeOver(runId, LEASE_MS);
    expect(taken).toEqual(expect.objectContaining({ seq: 0, claims: 2, takeOvers: 1, crashes: 0 }));
    expect(await frontier.renew([{ runId, seq: 0, claims: first!.claims }], LEASE_MS)).toEqual([
      { runId, seq: 0, claims: 1 },
    ]);
    // The worker that lost it stores nothing and hears so; the one that took it over stores once.
    expect(await store.saveBatch(runId, { pages: [rowsOf(first!)], outcomes: [ok(first!)], found: [] })).toBe(
      1,
    );
    expect(await frontier.release(runId, [first!])).toBe(1);
    expect(await recordCount(tdb.db, runId)).toBe(0);
    expect(await store.saveBatch(runId, { pages: [rowsOf(taken!)], outcomes: [ok(taken!)], found: [] })).toBe(
      0,
    );
    expect(await store.saveBatch(runId, { pages: [rowsOf(taken!)], outcomes: [ok(taken!)], found: [] })).toBe(
      1,
    );
    expect(await recordCount(tdb.db, runId)).toBe(2);
    expect(await runOf(runId)).toEqual(expect.objectContaining({ successfulUrls: 1, failedUrls: 0 }));
  });

  it('gives released URLs back with their share of max_pages, and holds claims until the time given', async () => {
    const { runId } = await runningRun('https://example.com/[1-4]', crawl(2));
    const urls = await frontier.claim(runId, 2, LEASE_MS);
    const later = new Date(Date.now() + 60_000);
    expect(await frontier.release(runId, urls, later)).toBe(0);
    const run = await runOf(runId);
    expect(run.startedUrls).toBe(0);
    expect(run.nextClaimAt?.getTime()).toBe(later.getTime());
    const [state] = (await frontier.states(100, 120_000, HOUR)).filter((s) => s.runId === runId);
    expect(state).toEqual(expect.objectContaining({ claimable: true, active: false }));
    expect(state!.notBefore?.getTime()).toBe(later.getTime());
    expect((await frontier.claim(runId, 5, LEASE_MS)).map((u) => u.seq)).toEqual([0, 1]);
  });

  it('counts take-overs apart from crashes, and notes a crash only under the claim that saw it', async () => {
    const { runId } = await runningRun('https://example.com/[1-2]');
    const [a, b] = await frontier.claim(runId, 2, 1);
    await new Promise((r) => setTimeout(r, 20));
    // A lease that ran out is no proof of a death: a take-over is counted, not a crash.
    const first = await frontier.takeOver(runId, 1);
    expect(first).toEqual(expect.objectContaining({ seq: a!.seq, takeOvers: 1, crashes: 0 }));
    await new Promise((r) => setTimeout(r, 20));
    const second = await frontier.takeOver(runId, LEASE_MS);
    expect(second).toEqual(
      expect.objectContaining({ seq: a!.seq, claims: a!.claims + 2, takeOvers: 2, crashes: 0 }),
    );
    // The death of its child process, seen under a claim that was lost, changes nothing.
    await frontier.crashed(runId, first!);
    await frontier.crashed(runId, { seq: b!.seq, claims: b!.claims + 1 });
    expect((await urlsOf(runId)).map((u) => u.crashes)).toEqual([0, 0]);
    await frontier.crashed(runId, second!);
    expect((await urlsOf(runId)).map((u) => [u.crashes, u.takeOvers])).toEqual([
      [1, 2],
      [0, 0],
    ]);
    // The other URL, whose lease ran out too, is next.
    expect(await frontier.takeOver(runId, LEASE_MS)).toEqual(
      expect.objectContaining({ seq: b!.seq, takeOvers: 1, crashes: 0 }),
    );
    expect(await frontier.takeOver(runId, LEASE_MS)).toBeNull();
  });

  it('keeps each run due from when a worker has something to do for it, and not while all its URLs are claimed', async () => {
    const due = async (runId: string) =>
      (await frontier.states(100, 0, HOUR)).some((state) => state.runId === runId);
    const { runId } = await runningRun('https://example.com/[1-2]');
    expect(await due(runId)).toBe(true);
    const urls = await frontier.claim(runId, 2, LEASE_MS);
    expect(await runOf(runId)).toEqual(expect.objectContaining({ pendingUrls: 0, activeUrls: 2 }));
    expect(await due(runId)).toBe(false);
    await store.saveBatch(runId, { pages: [], outcomes: [ok(urls[0]!, 0)], found: [] });
    expect(await due(runId)).toBe(false);
    // Its last URL stored, the run is due to be ended.
    await store.saveBatch(runId, { pages: [], outcomes: [ok(urls[1]!, 0)], found: [] });
    expect(await runOf(runId)).toEqual(expect.objectContaining({ pendingUrls: 0, activeUrls: 0 }));
    expect(await due(runId)).toBe(true);
    await store.finish(runId, null);
    expect(await runOf(runId)).toEqual(expect.objectContaining({ status: 'success', dueAt: null }));
  });

  it('finds the due runs among thousands of running ones, whenever each started', async () => {
    const { runId: template } = await runningRun('https://example.com/t');
    // 2,000 runs started earlier, each waiting an hour for its job's next request start.
    await tdb.db.$executeRaw`
      INSERT INTO runs (id, job_id, trigger, settings, seeded, started_at, pending_urls, next_claim_at)
      SELECT 'run_wait_' || g, r.job_id, 'manual', r.settings, true,
             (now() AT TIME ZONE 'UTC') - interval '1 minute', 1,
             (now() AT TIME ZONE 'UTC') + interval '1 hour'
        FROM runs r, generate_series(1, 2000) g WHERE r.id = ${template}`;
    const { runId } = await runningRun('https://example.com/late');
    const states = await frontier.states(10, 1_000, HOUR);
    expect(states.map((state) => state.runId)).toEqual(expect.arrayContaining([template, runId]));
    expect(states.some((state) => state.runId.startsWith('run_wait_'))).toBe(false);
    const plan = await tdb.db.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(
      `EXPLAIN SELECT id FROM runs WHERE due_at <= now() ORDER BY due_at LIMIT 10`,
    );
    expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/runs_due_at_idx/);
    await tdb.db.run.deleteMany({ where: { id: { startsWith: 'run_wait_' } } });
  });

  it('counts a failed attempt once per backoff, however many workers report it', async () => {
    const { runId } = await runningRun('https://example.com/a');
    const reports = await Promise.all(Array.from({ length: 4 }, () => frontier.failedAttempt(runId, 60_000)));
    expect(reports.filter((r) => r !== null)).toEqual([1]);
  });
});

describe('RunStore', () => {
  it('stores outcomes, records and the links found, each link accepted once', async () => {
    const { runId } = await runningRun('https://example.com/[1-2]', crawl(100));
    const [a, b] = await frontier.claim(runId, 2, LEASE_MS);
    await store.saveBatch(runId, {
      pages: [rowsOf(a!)],
      outcomes: [ok(a!), failed(b!)],
      found: [
        link(a!, 'https://example.com/3'),
        link(a!, 'https://example.com/2'),
        link(a!, 'https://example.com/3'),
        // Found on a page that failed: not accepted.
        link(b!, 'https://example.com/4'),
      ],
    });
    const urls = await urlsOf(runId);
    expect(urls.map((u) => [u.url, u.status, u.depth, u.parentSeq])).toEqual([
      ['https://example.com/1', 'success', 0, null],
      ['https://example.com/2', 'failed', 0, null],
      ['https://example.com/3', 'pending', 1, 0],
    ]);
    expect(urls[0]).toEqual(expect.objectContaining({ httpStatus: 200, records: 2, durationMs: 12 }));
    expect(urls[1]).toEqual(expect.objectContaining({ errorCode: 'HTTP_ERROR', httpStatus: 404 }));
    expect(await runOf(runId)).toEqual(
      expect.objectContaining({ successfulUrls: 1, failedUrls: 1, totalUrls: 3 }),
    );
  });

  it("counts the account's pages stored successfully this month, kept when the run is deleted", async () => {
    const other = await tdb.db.user.create({ data: { id: newId('usr'), email: 'usage@example.com' } });
    const { jobId, runId } = await runningRun('https://example.com/u[1-3]', crawl(100));
    await tdb.db.job.update({ where: { id: jobId }, data: { userId: other.id } });
    const usage = new UsageService(tdb.db);
    expect((await usage.month(other.id)).pages).toBe(0);
    const [a, b, c] = await frontier.claim(runId, 3, LEASE_MS);
    await store.saveBatch(runId, { pages: [rowsOf(a!)], outcomes: [ok(a!), failed(b!)], found: [] });
    await store.saveBatch(runId, { pages: [rowsOf(c!)], outcomes: [ok(c!)], found: [] });
    // A worker that lost its claim writes nothing, and counts nothing.
    await store.saveBatch(runId, { pages: [rowsOf(c!)], outcomes: [ok(c!)], found: [] });
    await tdb.db.job.delete({ where: { id: jobId } });
    const month = await usage.month(other.id);
    expect(month.pages).toBe(2);
    expect(month.monthStart.getUTCDate()).toBe(1);
    expect(month.monthEnd.getTime()).toBeGreaterThan(Date.now());
    expect(month.lastPageAt).toEqual(expect.any(Date));
  });

  it('keeps the failure of the lowest URL, whatever order batches come in', async () => {
    const { runId } = await runningRun('https://example.com/[1-9]');
    const urls = await frontier.claim(runId, 9, LEASE_MS);
    const save = (outcomes: UrlOutcome[]) => store.saveBatch(runId, { pages: [], outcomes, found: [] });
    await save([failed(urls[6]!), failed(urls[4]!, 'TIMEOUT')]);
    await save([failed(urls[7]!), ok(urls[0]!)]);
    await save([failed(urls[2]!, 'NETWORK_ERROR')]);
    expect((await runOf(runId)).firstFailure).toEqual({
      index: 2,
      code: 'NETWORK_ERROR',
      message: 'https://example.com/3: HTTP 404',
    });
  });

  it("gives a running run's settings, its job's for a run started before they were kept, and none once it ended", async () => {
    const { jobId, runId } = await runningRun('https://example.com/[1-2]');
    expect(await store.settings(runId)).toEqual(
      expect.objectContaining({ source: 'https://example.com/[1-2]', rateLimit: 10, crawl: null }),
    );
    const legacy = newId('run');
    await tdb.db.job.update({
      where: { id: jobId },
      data: { source: 'https://example.com/{a,b,c}', rateLimit: 30 },
    });
    await tdb.db.run.create({ data: { id: legacy, jobId, trigger: 'manual' } });
    expect(await store.settings(legacy)).toEqual({
      source: 'https://example.com/{a,b,c}',
      urls: null,
      queries: [{ name: 'title', type: 'css', query: 'h1', join: false }],
      rateLimit: 30,
      renderConfig: null,
      proxyConfig: null,
      crawl: null,
      request: null,
      formats: [],
      content: null,
      trackContent: false,
      refetch: 'conditional',
      extract: null,
      pageTracking: null,
    });
    await frontier.seed(legacy);
    expect((await urlsOf(legacy)).map((u) => u.url)).toEqual(
      ['a', 'b', 'c'].map((p) => `https://example.com/${p}`),
    );
    await tdb.db.run.update({ where: { id: legacy }, data: { status: 'cancelled' } });
    expect(await store.settings(legacy)).toBeNull();
  });

  it('ends a run only when its frontier is done, pages past max_pages skipped with MAX_PAGES', async () => {
    const { jobId, runId } = await runningRun('https://example.com/[1-4]', crawl(2));
    const [a, b] = await frontier.claim(runId, 4, LEASE_MS);
    await store.saveBatch(runId, { pages: [rowsOf(a!)], outcomes: [ok(a!)], found: [] });
    // One URL still in a worker's hands.
    expect(await store.finish(runId, null)).toBeNull();
    await store.saveBatch(runId, { pages: [rowsOf(b!, 3)], outcomes: [ok(b!, 3)], found: [] });
    expect(await store.finish(runId, null)).toEqual(
      expect.objectContaining({ status: 'success', successfulUrls: 2, failedUrls: 0, skippedUrls: 2 }),
    );
    const run = await runOf(runId);
    expect(run).toEqual(expect.objectContaining({ status: 'success', resultsCount: 5, totalUrls: 4 }));
    expect((await urlsOf(runId)).map((u) => [u.status, u.errorCode])).toEqual([
      ['success', null],
      ['success', null],
      ['skipped', 'MAX_PAGES'],
      ['skipped', 'MAX_PAGES'],
    ]);
    const event = await tdb.db.event.findFirstOrThrow({ where: { jobId } });
    expect(event.kind).toBe('job.completed');
    expect(event.createdAt).toEqual(run.finishedAt);
    expect(event.data).toEqual({
      job_id: jobId,
      job_name: 'store',
      run_id: runId,
      status: 'success',
      results_count: 5,
      duration_ms: run.finishedAt!.getTime() - run.startedAt.getTime(),
      download_url: `https://scrape.example.com/jobs/${jobId}/download`,
      skipped_urls: 2,
    });
    expect(await tdb.db.job.findUniqueOrThrow({ where: { id: jobId } })).toEqual(
      expect.objectContaining({ status: 'success', resultsCount: 5 }),
    );
    expect(await store.finish(runId, null)).toBeNull();
  });

  it('fails a run whose URL failed with that failure, counted against the URLs it had', async () => {
    const { jobId, runId } = await runningRun('https://example.com/[1-3]');
    const urls = await frontier.claim(runId, 3, LEASE_MS);
    await store.saveBatch(runId, {
      pages: [rowsOf(urls[0]!)],
      outcomes: [ok(urls[0]!), failed(urls[1]!), failed(urls[2]!, 'TIMEOUT')],
      found: [],
    });
    expect(await store.finish(runId, null)).toEqual(
      expect.objectContaining({ status: 'failed', successfulUrls: 1, failedUrls: 2, skippedUrls: 0 }),
    );
    const error = {
      code: 'HTTP_ERROR',
      message: '2 of 3 URLs failed; first: https://example.com/2: HTTP 404',
      failed_urls: 2,
      successful_urls: 1,
    };
    expect((await runOf(runId)).error).toEqual(error);
    const event = await tdb.db.event.findFirstOrThrow({ where: { jobId } });
    expect(event.kind).toBe('job.failed');
    expect(event.data).toEqual({
      job_id: jobId,
      job_name: 'store',
      run_id: runId,
      status: 'failed',
      error,
      skipped_urls: 0,
    });
    expect((await tdb.db.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('failed');
  });

  it('stores a run with nothing to analyse as analysed, and leaves every other run due', async () => {
    const ended = async (runId: string) => {
      const [url] = await frontier.claim(runId, 1, LEASE_MS);
      await store.saveBatch(runId, { pages: [], outcomes: [ok(url!, 0)], found: [] });
      await store.finish(runId, null);
      const { analysisDue, health, queryMatches } = await runOf(runId);
      return { analysisDue, health, queryMatches };
    };
    const analysed = { analysisDue: false, health: { status: 'ok', reasons: [] }, queryMatches: {} };
    const due = { analysisDue: true, health: null, queryMatches: null };
    // No queries, no change tracking: a Firecrawl scrape, and a job's first runs.
    const { jobId, runId } = await runningRun('https://example.com/a', null, []);
    expect(await ended(runId)).toEqual(analysed);
    // A query to check, or records to compare.
    expect(await ended((await runningRun('https://example.com/a')).runId)).toEqual(due);
    const tracked = await runningRun('https://example.com/a', null, []);
    await tdb.db.job.update({ where: { id: tracked.jobId }, data: { changeTracking: { key: [] } } });
    expect(await ended(tracked.runId)).toEqual(due);
    // From three successful runs before it, its records are held against theirs.
    const later = async () => {
      const next = newId('run');
      await tdb.db.run.create({
        data: {
          id: next,
          jobId,
          trigger: 'manual',
          settings: (await runOf(runId)).settings ?? {},
        },
      });
      await tdb.db.job.update({ where: { id: jobId }, data: { status: 'running', lastRunId: next } });
      await frontier.seed(next);
      return ended(next);
    };
    expect(await later()).toEqual(analysed);
    expect(await later()).toEqual(analysed);
    expect(await later()).toEqual(due);
    expect(await tdb.db.run.count({ where: { jobId, status: 'success' } })).toBe(4);
  });

  it('ends a failed run with its first failure, and counts URLs never done as failed when forced', async () => {
    const { jobId, runId } = await runningRun('https://example.com/[1-5]');
    const urls = await frontier.claim(runId, 3, LEASE_MS);
    await store.saveBatch(runId, {
      pages: [rowsOf(urls[0]!)],
      outcomes: [ok(urls[0]!), failed(urls[2]!)],
      found: [],
    });
    const timedOut = { code: 'TIMEOUT', message: 'The run exceeded its time limit of 60000 ms.' };
    expect(await store.finish(runId, timedOut)).toEqual(
      expect.objectContaining({ status: 'failed', successfulUrls: 1, failedUrls: 4, skippedUrls: 0 }),
    );
    const run = await runOf(runId);
    expect(run.error).toEqual(
      expect.objectContaining({ code: 'TIMEOUT', failed_urls: 4, successful_urls: 1 }),
    );
    expect((await urlsOf(runId)).map((u) => u.errorCode)).toEqual([
      null,
      'TIMEOUT',
      'HTTP_ERROR',
      'TIMEOUT',
      'TIMEOUT',
    ]);
    const event = await tdb.db.event.findFirstOrThrow({ where: { jobId } });
    expect(event.data).toEqual(expect.objectContaining({ status: 'failed', skipped_urls: 0 }));
  });

  it('keeps and counts a batch that arrives after a pause, but leaves an ended run as it is', async () => {
    const { runId } = await runningRun('https://example.com/[1-2]');
    const [a, b] = await frontier.claim(runId, 2, LEASE_MS);
    await tdb.db.run.update({ where: { id: runId }, data: { status: 'cancelled' } });
    await store.saveBatch(runId, { pages: [rowsOf(a!)], outcomes: [ok(a!)], found: [] });
    expect(await runOf(runId)).toEqual(expect.objectContaining({ successfulUrls: 1, resultsCount: 2 }));
    expect((await tdb.db.job.findFirstOrThrow({ where: { lastRunId: runId } })).resultsCount).toBe(2);
    await tdb.db.run.update({ where: { id: runId }, data: { status: 'success' } });
    await store.saveBatch(runId, { pages: [rowsOf(b!)], outcomes: [ok(b!)], found: [] });
    expect(await runOf(runId)).toEqual(expect.objectContaining({ successfulUrls: 1 }));
  });

  it('fails a page of more records than a stored page holds, without its records or links, and stores the rest', async () => {
    const { runId } = await runningRun('https://example.com/[1-2]', crawl(10));
    const [big, small] = await frontier.claim(runId, 2, LEASE_MS);
    const records = MAX_RECORDS_LIMIT + 1;
    const tooMany: PageRows = {
      ...rowsOf(big!),
      records,
      json: JSON.stringify(Array.from({ length: records }, (_, i) => ({ title: `r${i}` }))),
    };
    await store.saveBatch(runId, {
      pages: [tooMany, rowsOf(small!)],
      outcomes: [ok(big!, records), ok(small!)],
      found: [link(big!, 'https://example.com/from-big'), link(small!, 'https://example.com/from-small')],
    });
    expect(await runOf(runId)).toEqual(
      expect.objectContaining({ successfulUrls: 1, failedUrls: 1, resultsCount: 2, totalUrls: 3 }),
    );
    const urls = await urlsOf(runId);
    expect(urls.map((u) => [u.url, u.status, u.errorCode])).toEqual([
      ['https://example.com/1', 'failed', 'EXTRACTION_ERROR'],
      ['https://example.com/2', 'success', null],
      ['https://example.com/from-small', 'pending', null],
    ]);
    expect(urls[0]!.errorMessage).toMatch(/more than 16384 records/);
    expect((await storedRecords(tdb.db, runId)).map((r) => r.urlIndex)).toEqual([1, 1]);
  });

  it('fails only the page whose values PostgreSQL refuses, and stores the rest of its batch', async () => {
    const { runId } = await runningRun('https://example.com/[1-3]');
    const urls = await frontier.claim(runId, 3, LEASE_MS);
    const refused: PageRows = {
      ...rowsOf(urls[1]!),
      records: 1,
      json: JSON.stringify([{ title: 'a\u0000b' }]),
    };
    await store.saveBatch(runId, {
      pages: [rowsOf(urls[0]!), refused, rowsOf(urls[2]!)],
      outcomes: urls.map((url) => ok(url)),
      found: [],
    });
    expect(await runOf(runId)).toEqual(
      expect.objectContaining({
        successfulUrls: 2,
        failedUrls: 1,
        firstFailure: {
          index: 1,
          code: 'EXTRACTION_ERROR',
          message: expect.stringMatching(/^https:\/\/example\.com\/2: its records could not be stored: /),
        },
      }),
    );
    const stored = await storedRecords(tdb.db, runId);
    expect(stored.map((r) => r.urlIndex)).toEqual([0, 0, 2, 2]);
  });
});

describe('RunStore page events', () => {
  /** The job's Firecrawl webhook, asking for `events`. */
  async function watch(jobId: string, events: ('started' | 'page' | 'completed' | 'failed')[]) {
    const webhook = { url: 'https://93.184.215.14/hook', headers: {}, metadata: {}, events };
    const row = jobWebhookRow(
      { userId, mode: 'test' },
      jobId,
      { webhook, prefix: 'crawl', field: 'webhook' },
      new Date(),
    );
    await tdb.db.webhook.create({ data: row });
  }
  const pageEventsOf = async (jobId: string) =>
    (await tdb.db.event.findMany({ where: { jobId, kind: 'firecrawl.page' } }))
      .map((e) => e.data as { seq: number })
      .sort((a, b) => a.seq - b.seq);

  it('writes one event per page stored successfully when the job’s Firecrawl webhook asks for page', async () => {
    const { jobId, runId } = await runningRun('https://example.com/[1-3]');
    await watch(jobId, ['started', 'page']);
    const [a, b, c] = await frontier.claim(runId, 3, LEASE_MS);
    const batch = { pages: [rowsOf(a!), rowsOf(c!)], outcomes: [ok(a!), failed(b!), ok(c!)], found: [] };
    await tdb.db.runScreenshot.create({ data: { runId, seq: c!.seq, png: Buffer.from('png') } });
    expect(await store.saveBatch(runId, batch)).toBe(0);
    const events = await tdb.db.event.findMany({ where: { jobId, kind: 'firecrawl.page' } });
    expect(events.every((e) => e.userId === userId && e.mode === 'test' && /^evt_/.test(e.id))).toBe(true);
    expect(await pageEventsOf(jobId)).toEqual([
      { run_id: runId, seq: 0, url: 'https://example.com/1', screenshot_url: null },
      {
        run_id: runId,
        seq: 2,
        url: 'https://example.com/3',
        screenshot_url: `https://scrape.example.com/jobs/${jobId}/runs/${runId}/screenshots/2`,
      },
    ]);
    // The same outcomes stored again are not written again, nor are their events.
    expect(await store.saveBatch(runId, batch)).toBe(3);
    expect(await pageEventsOf(jobId)).toHaveLength(2);
  });

  it('writes none for a worker that lost its claim, nor for a job whose webhook does not ask for page', async () => {
    const watched = await runningRun('https://example.com/a');
    await watch(watched.jobId, ['page']);
    const [first] = await frontier.claim(watched.runId, 1, 1);
    await new Promise((r) => setTimeout(r, 20));
    const taken = await frontier.takeOver(watched.runId, LEASE_MS);
    expect(await store.saveBatch(watched.runId, { pages: [], outcomes: [ok(first!, 0)], found: [] })).toBe(1);
    expect(await pageEventsOf(watched.jobId)).toEqual([]);
    await store.saveBatch(watched.runId, { pages: [], outcomes: [ok(taken!, 0)], found: [] });
    expect((await pageEventsOf(watched.jobId)).map((e) => e.seq)).toEqual([0]);

    const notPages = await runningRun('https://example.com/[1-2]');
    await watch(notPages.jobId, ['started', 'completed', 'failed']);
    const plain = await runningRun('https://example.com/[1-2]');
    for (const { runId } of [notPages, plain]) {
      const urls = await frontier.claim(runId, 2, LEASE_MS);
      await store.saveBatch(runId, { pages: [], outcomes: urls.map((u) => ok(u, 0)), found: [] });
      expect((await runOf(runId)).successfulUrls).toBe(2);
    }
    expect(await pageEventsOf(notPages.jobId)).toEqual([]);
    expect(await pageEventsOf(plain.jobId)).toEqual([]);
  });
});
