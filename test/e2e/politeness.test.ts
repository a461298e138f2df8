// Politeness toward target sites (docs/api.md §19): real scraper workers share each target host's
// places, pauses and Crawl-delay through Redis, whatever users, jobs and workers its URLs come
// from. The sites record when each request arrived and when its answer went out; the only times
// asserted are the lower bounds that pauses and delays guarantee.
import type { RunModel } from '@scrapejobs/db';
import request from 'supertest';
import { buildTestApi } from '../support/api.ts';
import { type Client, client, validJob } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type HostSite, peakOverlap, type Route, startHostSite, type Visit } from '../support/host-site.ts';
import { type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { testPrefix } from '../support/redis.ts';

/**
 * Clock and loopback slack: a request already on its way when its host was paused, and the ms a
 * request's arrival is recorded late, stay within it.
 */
const SLACK_MS = 50;

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
const prefix = testPrefix();
const workers: Proc[] = [];
const sites: HostSite[] = [];
/** The runs each test started: those still running after it are cancelled (their jobs paused). */
const started: { as: Client; jobId: string; runId: string }[] = [];
/** `host_backoff_hosts` as the API showed it during the pause of a 429 (the metrics test checks it). */
let pausedHostsDuringPause: number | undefined;

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
});

afterEach(async () => {
  const running = await tdb.db.run.findMany({
    where: { id: { in: started.map((s) => s.runId) }, status: 'running' },
  });
  for (const run of running) {
    const { as, jobId } = started.find((s) => s.runId === run.id)!;
    await as.post(`/jobs/${jobId}/pause`);
  }
  started.splice(0);
  for (const site of sites) site.release();
});

afterAll(async () => {
  await stopWorkers();
  await api.close();
  await Promise.all(sites.map((s) => s.close()));
  await tdb.drop();
  await prefix.cleanup();
});

async function site(route?: Route): Promise<HostSite> {
  const s = await startHostSite(route);
  sites.push(s);
  return s;
}

const workerEnv = (over: Record<string, string>) =>
  scraperWorkerEnv(tdb.url, prefix.prefix, {
    EXTRACTION_THREADS: '2',
    ...over,
  });

async function startWorkers(count: number, over: Record<string, string> = {}): Promise<Proc[]> {
  const fresh = Array.from({ length: count }, () => startApp('scraper-worker', workerEnv(over)));
  workers.push(...fresh);
  await Promise.all(fresh.map((w) => w.waitForLog((l) => l.msg === 'scraper worker started', 30_000)));
  return fresh;
}

async function stopWorkers(): Promise<void> {
  await Promise.all(workers.splice(0).map((w) => w.kill('SIGKILL')));
}

// Users of their own for every test: a place a killed worker held is its user's until its lease ends.
let users = 0;
async function newUser(): Promise<Client> {
  users++;
  const { token } = await api.keys.create({
    email: `polite${users}@example.com`,
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write'],
    name: 'k',
  });
  return client(api.app, token);
}

async function createJob(as: Client, body: Record<string, unknown>): Promise<string> {
  const created = await as.post(
    '/jobs',
    validJob({ queries: [{ name: 'title', type: 'css', query: 'h1' }], rate_limit: 6000, ...body }),
  );
  expect(created.status).toBe(201);
  return created.body.job_id as string;
}

/** Starts a run of a new job of `as`; `at` is when the API had started it. */
async function run(as: Client, body: Record<string, unknown>) {
  const jobId = await createJob(as, body);
  const res = await as.post(`/jobs/${jobId}/run`);
  expect(res.status).toBe(202);
  const runId = res.body.run_id as string;
  started.push({ as, jobId, runId });
  return { jobId, runId, at: Date.now() };
}

const ended = (runId: string, timeoutMs = 30_000) =>
  until(async () => {
    const r = await tdb.db.run.findUnique({ where: { id: runId } });
    return r && r.status !== 'running' ? r : null;
  }, timeoutMs) as Promise<RunModel>;

/** Once the run has ended: its status and each page URL's outcome, by URL. */
async function outcome(runId: string, timeoutMs?: number) {
  const done = await ended(runId, timeoutMs);
  const urls = await tdb.db.runUrl.findMany({ where: { runId, kind: 'page' }, orderBy: { url: 'asc' } });
  return {
    status: done.status,
    urls: urls.map((u) => `${u.url} ${u.status}${u.errorCode ? ` ${u.errorCode} ${u.httpStatus}` : ''}`),
  };
}

/** What `outcome` says of a run whose URLs `paths` of `s` all succeeded. */
const allSucceeded = (s: HostSite, paths: string[]) => ({
  status: 'success',
  urls: paths.map((p) => `${s.url}${p} success`).sort(),
});

/** `dir/1` … `dir/count`, the paths a source `dir/[1-count]` expands to. */
const numbered = (dir: string, count: number) => Array.from({ length: count }, (_, i) => `${dir}/${i + 1}`);

/** Requests that arrived during the `pauseMs` after `answer` went out, beyond those already on their way. */
const startedDuringPause = (visits: readonly Visit[], answer: Visit, pauseMs: number) =>
  visits.filter((v) => v.start > answer.end! + SLACK_MS && v.start < answer.end! + pauseMs - SLACK_MS);

/** A value of the API's /metrics (fleet-wide), the line named `name` with `label` when given. */
async function metric(name: string, label?: string): Promise<number | undefined> {
  const text = (await request(api.app).get('/metrics')).text;
  const line = text
    .split('\n')
    .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && (!label || l.includes(label)));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

/**
 * Two users' runs of ten 100 ms pages each on one host; the host's fourth request answers 429
 * once with `retryAfter()`, and `duringPause` is called once it has. Checks that every URL
 * succeeded, the one that got the 429 at its second request; resolves the host's site, the 429's
 * visit and the end of the pause it asked for.
 */
async function pausedByOne429(
  retryAfter: () => { header: string; until: (answeredAt: number) => number },
  duringPause: () => Promise<void> = async () => {},
) {
  let pauseEnd = (_answeredAt: number) => Number.NaN;
  const s = await site((_path, _nth, index) => {
    if (index !== 3) return { delayMs: 100 };
    const asked = retryAfter();
    pauseEnd = asked.until;
    return { status: 429, headers: { 'Retry-After': asked.header } };
  });
  const runs = [
    await run(await newUser(), { source: `${s.url}/a/[1-10]` }),
    await run(await newUser(), { source: `${s.url}/b/[1-10]` }),
  ];
  const throttled = await until(async () => s.visits.find((v) => v.status === 429), 15_000, 20);
  const [outcomes] = await Promise.all([Promise.all(runs.map((r) => outcome(r.runId))), duringPause()]);
  expect(outcomes).toEqual([allSucceeded(s, numbered('/a', 10)), allSucceeded(s, numbered('/b', 10))]);
  // The URL that got it was tried again once the pause was over.
  expect(s.visits.filter((v) => v.path === throttled.path).map((v) => v.status)).toEqual([429, 200]);
  return { s, throttled, pauseEnd: pauseEnd(throttled.end!) };
}

/** Three workers whose host limit is three, for the tests that need no other settings. */
const FLEET = { HOST_MAX_CONCURRENCY: '3', SCRAPER_CONCURRENCY: '8' };

describe('politeness toward target hosts across a fleet of three workers (docs/api.md §19)', () => {
  beforeAll(() => startWorkers(3, FLEET), 60_000);
  afterAll(stopWorkers);

  it('never has more than HOST_MAX_CONCURRENCY requests in flight to one host from three users and six jobs; every URL is fetched once and succeeds', async () => {
    const s = await site(() => ({ delayMs: 100 }));
    const runs: { runId: string; paths: string[] }[] = [];
    for (const u of [1, 2, 3]) {
      const as = await newUser();
      for (const j of [1, 2]) {
        const { runId } = await run(as, { source: `${s.url}/u${u}/j${j}/[1-20]` });
        runs.push({ runId, paths: numbered(`/u${u}/j${j}`, 20) });
      }
    }
    for (const r of runs) expect(await outcome(r.runId)).toEqual(allSucceeded(s, r.paths));
    expect(s.peak()).toBe(3);
    expect(s.visits.map((v) => v.path).sort()).toEqual(runs.flatMap((r) => r.paths).sort());
  });

  it('after a 429 with Retry-After: 4, no worker starts a request to that host for 4 s; the URL is retried and every URL succeeds', async () => {
    const { s, throttled, pauseEnd } = await pausedByOne429(
      () => ({ header: '4', until: (answeredAt) => answeredAt + 4_000 }),
      async () => {
        pausedHostsDuringPause = await until(
          async () => (await metric('host_backoff_hosts')) === 1 && 1,
          3_000,
        ).catch(() => metric('host_backoff_hosts'));
      },
    );
    expect(startedDuringPause(s.visits, throttled, 4_000)).toEqual([]);
    // URLs of both runs were waiting: the next request starts once the pause is over.
    const next = s.visits.filter((v) => v.start > throttled.end! + SLACK_MS);
    expect(next.length).toBeGreaterThan(10);
    expect(Math.min(...next.map((v) => v.start))).toBeGreaterThanOrEqual(pauseEnd - SLACK_MS);
  });

  it('after a 429 whose Retry-After is an HTTP date, no worker starts a request to that host before that date; every URL succeeds', async () => {
    const { s, throttled, pauseEnd } = await pausedByOne429(() => {
      // A whole second, 2 to 3 s away: an HTTP date has no smaller unit.
      const at = Math.ceil(Date.now() / 1000) * 1000 + 2_000;
      return { header: new Date(at).toUTCString(), until: () => at };
    });
    expect(startedDuringPause(s.visits, throttled, pauseEnd - throttled.end!)).toEqual([]);
    const next = s.visits.filter((v) => v.start > throttled.end! + SLACK_MS);
    expect(next.length).toBeGreaterThan(10);
    expect(Math.min(...next.map((v) => v.start))).toBeGreaterThanOrEqual(pauseEnd - SLACK_MS);
  });

  it('backs off 1 s, 2 s, 4 s after 503s in a row without Retry-After, then recovers and the run succeeds', async () => {
    const s = await site((path, nth) => (path === '/flaky' && nth <= 3 ? { status: 503 } : {}));
    const { runId } = await run(await newUser(), { source: `${s.url}/flaky` });
    expect(await outcome(runId)).toEqual(allSucceeded(s, ['/flaky']));
    expect(s.visits.map((v) => v.status)).toEqual([503, 503, 503, 200]);
    const gaps = s.visits.slice(1).map((v, i) => v.start - s.visits[i]!.end!);
    expect(gaps[0]).toBeGreaterThanOrEqual(1_000 - SLACK_MS);
    expect(gaps[1]).toBeGreaterThanOrEqual(2_000 - SLACK_MS);
    expect(gaps[2]).toBeGreaterThanOrEqual(4_000 - SLACK_MS);
  });

  it("fails a URL that answers 429 every time with HTTP_ERROR at its sixth request, pausing the host after each, while the run's other URLs succeed", async () => {
    const s = await site((path) =>
      path === '/always' ? { status: 429, headers: { 'Retry-After': '1' } } : { delayMs: 200 },
    );
    const { runId } = await run(await newUser(), {
      source: `${s.url}/{always,ok/1,ok/2,ok/3,ok/4,ok/5,ok/6}`,
    });
    const done = await ended(runId);
    expect(await outcome(runId)).toEqual({
      status: 'failed',
      urls: [
        `${s.url}/always failed HTTP_ERROR 429`,
        ...numbered(`${s.url}/ok`, 6).map((u) => `${u} success`),
      ],
    });
    expect(done).toEqual(expect.objectContaining({ successfulUrls: 6, failedUrls: 1 }));
    expect(done.error).toEqual(expect.objectContaining({ code: 'HTTP_ERROR' }));
    const throttled = s.visits.filter((v) => v.path === '/always');
    expect(throttled.map((v) => v.status)).toEqual([429, 429, 429, 429, 429, 429]);
    for (const answer of throttled.slice(0, 5))
      expect(startedDuringPause(s.visits, answer, 1_000).map((v) => v.path)).toEqual([]);
    const gaps = throttled.slice(1).map((v, i) => v.start - throttled[i]!.end!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1_000 - SLACK_MS);
  });

  it("spaces a crawl's requests to a host by its robots.txt Crawl-delay", async () => {
    const links = [1, 2, 3].map((n) => `<a class="link" href="/c/${n}">${n}</a>`).join('');
    const s = await site((path) => {
      if (path === '/robots.txt')
        return { headers: { 'Content-Type': 'text/plain' }, body: 'User-agent: *\nCrawl-delay: 1\n' };
      if (path === '/c/0') return { body: `<html><body><h1>Start</h1>${links}</body></html>` };
      return {};
    });
    const { runId } = await run(await newUser(), {
      source: `${s.url}/c/0`,
      crawl: { follow: [{ type: 'css', query: 'a.link::attr(href)' }], respect_robots_txt: true },
    });
    expect(await outcome(runId, 20_000)).toEqual(allSucceeded(s, ['/c/0', '/c/1', '/c/2', '/c/3']));
    expect(s.visits.filter((v) => v.path === '/robots.txt')).toHaveLength(1);
    const pages = s.visits.filter((v) => v.path !== '/robots.txt').map((v) => v.start);
    expect(pages).toHaveLength(4);
    const gaps = pages.slice(1).map((at, i) => at - pages[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1_000 - SLACK_MS);
  });

  it("counts the fleet's host waits and backoffs in the API's /metrics, and the hosts paused", async () => {
    const answered = (status: number) =>
      sites.flatMap((s) => s.visits).filter((v) => v.status === status).length;
    const counted = async () => ({
      backoffs429: await metric('host_backoffs_total', 'reason="429"'),
      backoffs503: await metric('host_backoffs_total', 'reason="503"'),
      pausedNow: await metric('host_backoff_hosts'),
      pausedDuringPause: pausedHostsDuringPause,
    });
    const expected = {
      backoffs429: answered(429),
      backoffs503: answered(503),
      pausedNow: 0,
      pausedDuringPause: 1,
    };
    // Each worker adds its counts to Redis once a second.
    await until(async () => JSON.stringify(await counted()) === JSON.stringify(expected), 5_000).catch(
      () => {},
    );
    expect(await counted()).toEqual(expected);
    expect(answered(429)).toBeGreaterThan(0);
    expect(answered(503)).toBeGreaterThan(0);
    expect(await metric('host_waits_total')).toBeGreaterThan(0);
  });
});

describe("a host's places shared among users, and given back by a dead worker (docs/api.md §19)", () => {
  afterEach(stopWorkers);

  it("serves another user's one URL on a host one user's job saturates within a place's turn", async () => {
    // A's pages take a place for 800 ms: B's URL never waits for one as long as a hold (1 s).
    const s = await site((path) => ({ delayMs: path.startsWith('/a/') ? 800 : 0 }));
    await startWorkers(2, { HOST_MAX_CONCURRENCY: '2' });
    await run(await newUser(), { source: `${s.url}/a/[1-60]` });
    // Both places have gone round to A once already, with more of its URLs waiting.
    await until(async () => s.visits.length >= 4);
    const b = await run(await newUser(), { source: `${s.url}/b/1` });
    expect(await outcome(b.runId)).toEqual(allSucceeded(s, ['/b/1']));
    const served = s.visits.find((v) => v.path === '/b/1')!;
    const aBefore = s.visits.filter(
      (v) => v.path.startsWith('/a/') && v.start >= b.at && v.start <= served.start,
    );
    // One place's turn: both places may go round to A once while B's run reaches the host, and
    // the one freed beside B's may go to A first; a queue of A's waiting URLs would be longer.
    expect(aBefore.length).toBeLessThanOrEqual(3);
    expect(s.peak()).toBe(2);
  });

  it("keeps a slow job's start when its host had no place in time: its URL is fetched once the host frees, not an interval later", async () => {
    // A's page holds the host's one place for 3 s, longer than B's URL waits for it (a hold, 1 s).
    const s = await site((path) => ({ delayMs: path.startsWith('/a/') ? 3_000 : 0 }));
    await startWorkers(1, { HOST_MAX_CONCURRENCY: '1' });
    await run(await newUser(), { source: `${s.url}/a/1` });
    await until(async () => s.inFlight() === 1);
    // One start a minute: had its first start been spent on the wait, its URL would wait 60 s.
    const b = await run(await newUser(), { source: `${s.url}/b/[1-2]`, rate_limit: 1 });
    const served = await until(async () => s.visits.find((v) => v.path === '/b/1'), 20_000);
    expect(served.start - b.at).toBeLessThan(10_000);
    expect(s.peak()).toBe(1);
  });

  it('gives back the host places of a worker SIGKILLed while its requests hang: a fresh worker gets both and the run succeeds', async () => {
    // The host's first two requests never get an answer. The first worker claims no URL beyond
    // those two: URLs taken over from a dead worker are fetched one at a time (§16.2).
    const s = await site((_path, _nth, index) => (index < 2 ? { hold: true } : { delayMs: 300 }));
    const over = { HOST_MAX_CONCURRENCY: '2', RUN_LOCK_MS: '3000', RUN_URL_CONCURRENCY: '2' };
    const [first] = await startWorkers(1, over);
    const { runId } = await run(await newUser(), { source: `${s.url}/k/[1-6]` });
    await until(async () => s.inFlight() === 2);
    await first!.kill('SIGKILL');
    const killedAt = Date.now();
    await startWorkers(1, over);
    expect(await outcome(runId)).toEqual(allSucceeded(s, numbered('/k', 6)));
    const after = s.visits.filter((v) => v.start >= killedAt);
    expect(after.map((v) => v.path).sort()).toEqual(numbered('/k', 6));
    expect(peakOverlap(after)).toBe(2);
    expect(s.visits).toHaveLength(8);
    expect(s.peak()).toBe(2);
  });
});
