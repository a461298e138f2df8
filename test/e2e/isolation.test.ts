// One user's job cannot stall, crash or starve the scraper workers that every user shares: each
// hostile job runs on real worker processes against a local site, beside another user's job.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JobModel, RunModel } from '@scrapejobs/db';
import { buildTestApi } from '../support/api.ts';
import { client, validJob } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import {
  extractionProcesses,
  type Proc,
  processAlive,
  scraperWorkerEnv,
  startApp,
  until,
} from '../support/processes.ts';
import { recordCount, storedRecords } from '../support/records.ts';
import { testPrefix } from '../support/redis.ts';
import { listPage, startSite } from '../support/site.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let site: Awaited<ReturnType<typeof startSite>>;
type Client = ReturnType<typeof client>;
let alice: Client;
let bob: Client;
const prefix = testPrefix();
const workers: Proc[] = [];

// Pages a hostile user points its jobs at.
const NESTED_200 = `<html><body>${'<div>'.repeat(200)}x${'</div>'.repeat(200)}</body></html>`;
const NESTED_1MIB = `<html><body>${`<div>${'y'.repeat(1_040)}`.repeat(1_000)}${'</div>'.repeat(1_000)}</body></html>`;
/**
 * `/hang-twice` is held open the first two times, and `/held/<n>` every time, until the test answers
 * or ends; `/slow-user/<n>` answers 400 ms after `slowUsersGo` settles, and tracks concurrency.
 */
const held: ServerResponse[] = [];
let slowInFlight = 0;
let hangTwice = 0;
let poisonHits = 0;
let slowPeak = 0;
let slowUsersGo: Promise<void> = Promise.resolve();
let letSlowUsersGo = () => {};

function hostile(req: IncomingMessage, res: ServerResponse): boolean {
  const path = new URL(req.url ?? '/', 'http://site').pathname;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  if (path.startsWith('/nested-200')) res.end(NESTED_200);
  else if (path.startsWith('/nested-1mib')) res.end(NESTED_1MIB);
  else if (path === '/nul') res.end('<html><body><p>a\0b</p><p>c\0\0d</p></body></html>');
  else if (path.startsWith('/held/')) held.push(res);
  else if (path === '/hang-twice') {
    hangTwice++;
    if (hangTwice <= 2) held.push(res);
    else res.end(listPage('late', 1));
  } else if (path === '/poison') {
    // Held open the first time, until its worker is killed; then a page whose query grows past
    // any small heap.
    poisonHits++;
    if (poisonHits === 1) held.push(res);
    else res.end(listPage('poison', 4));
  } else if (path.startsWith('/slow-user/')) {
    slowInFlight++;
    slowPeak = Math.max(slowPeak, slowInFlight);
    let open = true;
    const settle = () => {
      if (open) slowInFlight--;
      open = false;
    };
    // Answered, or given up by its worker first.
    res.on('close', settle);
    void slowUsersGo.then(() =>
      setTimeout(() => {
        settle();
        res.end(listPage('slow', 2));
      }, 400),
    );
  } else return false;
  return true;
}

const workerEnv = (over: Record<string, string>) =>
  scraperWorkerEnv(tdb.url, prefix.prefix, { RUN_LOCK_MS: '2000', EXTRACTION_THREADS: '3', ...over });

async function startWorker(over: Record<string, string> = {}) {
  const w = startApp('scraper-worker', workerEnv(over));
  workers.push(w);
  const started = await w.waitForLog((l) => l.msg === 'scraper worker started');
  return { proc: w, port: started.metrics_port as number };
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  site = await startSite(hostile);
});

// Two users of their own for every test: a worker killed in one test leaves its user's places
// taken until their leases expire, as it should.
let users = 0;
async function newUser(): Promise<Client> {
  users++;
  const { token } = await api.keys.create({
    email: `user${users}@example.com`,
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write'],
    name: 'k',
  });
  return client(api.app, token);
}

beforeEach(async () => {
  alice = await newUser();
  bob = await newUser();
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.kill('SIGKILL')));
  for (const res of held.splice(0)) res.destroy();
  letSlowUsersGo();
});

afterAll(async () => {
  await api.close();
  await site.close();
  await tdb.drop();
  await prefix.cleanup();
});

const titleQuery = [{ name: 'title', type: 'css', query: 'h1' }];

async function createJob(as: Client, body: Record<string, unknown>): Promise<string> {
  const created = await as.post('/jobs', validJob({ queries: titleQuery, rate_limit: 6000, ...body }));
  expect(created.status).toBe(201);
  return created.body.job_id as string;
}

async function run(as: Client, jobId: string) {
  const started = await as.post(`/jobs/${jobId}/run`);
  expect(started.status).toBe(202);
  return { runId: started.body.run_id as string, at: Date.now() };
}

const ended = (runId: string, timeoutMs = 30_000) =>
  until(async () => {
    const r = await tdb.db.run.findUnique({ where: { id: runId } });
    return r && r.status !== 'running' ? r : null;
  }, timeoutMs) as Promise<RunModel>;

const runError = (r: RunModel) => r.error as { code: string; message: string } | null;

/** Largest answer time of the worker's /health, polled every 100 ms until `done` settles. */
async function healthWhile(port: number, done: Promise<unknown>): Promise<number> {
  let settled = false;
  void done.finally(() => {
    settled = true;
  });
  let worst = 0;
  while (!settled) {
    const asked = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(5_000) });
    expect(res.status).toBe(200);
    worst = Math.max(worst, performance.now() - asked);
    await new Promise((r) => setTimeout(r, 100));
  }
  return worst;
}

describe('isolation between users on shared scraper workers', () => {
  it("fails pages whose css or XPath query outruns the time limit, while /health answers within 1 s and another user's run keeps its pace", async () => {
    const { port } = await startWorker({ EXTRACTION_TIME_LIMIT_MS: '2000' });
    const hostileCss = await createJob(alice, {
      source: `${site.url}/nested-200/[1-3]`,
      // The pseudo-class keeps it from the one-pass reader, which would match it in linear time.
      queries: [{ name: 'deep', type: 'css', query: 'x div div div div div div:not(p)' }],
    });
    // Nothing to iterate on the empty page it is compiled against; 8 million steps on 200 divs.
    const hostileXPath = await createJob(alice, {
      source: `${site.url}/nested-200/x`,
      queries: [
        { name: 'cube', type: 'xpath', query: 'count(for $a in //div, $b in //div, $c in //div return 1)' },
      ],
    });
    const normalJob = await createJob(bob, { source: `${site.url}/page/[1-5]` });
    const hostileRuns = [await run(alice, hostileCss), await run(alice, hostileXPath)];
    await until(async () => site.hits.some((h) => h.path.startsWith('/nested-200')));
    const hostileEnd = Promise.all(hostileRuns.map((r) => ended(r.runId)));
    const worst = healthWhile(port, hostileEnd);

    const normalRun = await run(bob, normalJob);
    const normal = await ended(normalRun.runId);
    expect(normal.status).toBe('success');
    expect(normal.resultsCount).toBe(5);

    const [css, xpath] = await hostileEnd;
    // Bob's run did not wait behind alice's four 2 s extractions on the worker's two threads: it
    // ended while her three-page run still ran.
    expect(normal.finishedAt!.getTime()).toBeLessThan(css!.finishedAt!.getTime());
    expect(css).toEqual(expect.objectContaining({ status: 'failed', failedUrls: 3, successfulUrls: 0 }));
    expect(runError(css!)).toEqual(
      expect.objectContaining({
        code: 'EXTRACTION_ERROR',
        message: expect.stringMatching(/time limit of 2000 ms \(css query "deep" was running\)/),
      }),
    );
    expect(runError(xpath!)).toEqual(
      expect.objectContaining({
        code: 'EXTRACTION_ERROR',
        message: expect.stringMatching(/time limit of 2000 ms \(xpath query "cube" was running\)/),
      }),
    );
    expect(await worst).toBeLessThan(1_000);
  });

  it('fails a page whose values outgrow the output limits, quickly and without harming the worker', async () => {
    const { proc, port } = await startWorker();
    const jobId = await createJob(alice, {
      source: `${site.url}/nested-1mib`,
      queries: [{ name: 'text', type: 'css', query: 'div' }],
    });
    const { runId, at } = await run(alice, jobId);
    const failed = await ended(runId);
    expect(failed.status).toBe('failed');
    expect(runError(failed)).toEqual(
      expect.objectContaining({
        code: 'EXTRACTION_ERROR',
        message: expect.stringMatching(/limit of \d+ bytes/),
      }),
    );
    expect(failed.finishedAt!.getTime() - at).toBeLessThan(5_000);
    expect(proc.child.exitCode).toBeNull();
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
  });

  it('fails a page whose extraction outgrows its heap limit, and the worker goes on with the next run', async () => {
    const { proc } = await startWorker({ EXTRACTION_MEMORY_MB: '64', EXTRACTION_TIME_LIMIT_MS: '20000' });
    const jobId = await createJob(alice, {
      source: `${site.url}/page/1`,
      // Cheap on the empty page it is compiled against; millions of strings on a page with items.
      queries: [
        {
          name: 'big',
          type: 'xpath',
          query: 'count(array { for $n in //li, $i in 1 to 3000000 return string($i) })',
        },
      ],
    });
    const failed = await ended((await run(alice, jobId)).runId);
    expect(runError(failed)).toEqual(
      expect.objectContaining({
        code: 'EXTRACTION_ERROR',
        message: expect.stringMatching(/memory limit of 64 MB/),
      }),
    );
    expect(proc.child.exitCode).toBeNull();
    const next = await ended((await run(bob, await createJob(bob, { source: `${site.url}/page/2` }))).runId);
    expect(next.status).toBe('success');
  });

  it('drops NUL characters from extracted values, so the run ends and its event goes out', async () => {
    await startWorker();
    const jobId = await createJob(alice, {
      source: `${site.url}/nul`,
      queries: [{ name: 'p', type: 'css', query: 'p' }],
    });
    const { runId } = await run(alice, jobId);
    const done = await ended(runId);
    expect(done.status).toBe('success');
    const rows = await storedRecords(tdb.db, runId);
    expect(rows.map((r) => r.data)).toEqual([{ p: 'ab' }, { p: 'cd' }]);
    const events = await tdb.db.event.findMany({ where: { jobId }, orderBy: { id: 'asc' } });
    expect(events.map((e) => e.kind)).toEqual(['job.started', 'job.completed']);
  });

  it('never blames a URL for the deaths of workers that were waiting on its page: its run ends success', async () => {
    const jobId = await createJob(alice, { source: `${site.url}/{page/1,hang-twice,page/2,page/3}` });
    const hangHits = () => site.hits.filter((h) => h.path === '/hang-twice').length;
    const { runId } = await run(alice, jobId);
    for (const hits of [1, 2]) {
      const worker = await startWorker();
      await until(async () => hangHits() === hits, 20_000);
      await worker.proc.kill('SIGKILL');
    }
    const last = await startWorker();
    const done = await ended(runId);
    expect(done).toEqual(expect.objectContaining({ status: 'success', successfulUrls: 4, failedUrls: 0 }));
    expect(hangHits()).toBe(3);
    expect(await recordCount(tdb.db, runId)).toBe(4);
    expect(last.proc.child.exitCode).toBeNull();
  });

  it('never blames a healthy slow page for the kills of the workers holding it, also while a taken-over extraction runs in a child process: its run ends success', async () => {
    const jobId = await createJob(alice, {
      source: `${site.url}/{page/1,nested-200/slow,page/2,page/3}`,
      // A while on the nested page, nothing on the others.
      queries: [
        {
          name: 'slow',
          type: 'xpath',
          query: 'count(for $a in //div, $b in //div, $c in 1 to 20 return 1)',
        },
      ],
    });
    const nestedHits = () => site.hits.filter((h) => h.path === '/nested-200/slow').length;
    const over = { EXTRACTION_TIME_LIMIT_MS: '60000' };
    const first = await startWorker(over);
    const { runId } = await run(alice, jobId);
    await until(async () => nestedHits() === 1);
    await first.proc.kill('SIGKILL');

    // Taken over, the page is extracted in a child process of the worker that took it over; a
    // kill of that worker ends the child too, and blames nothing.
    const second = await startWorker(over);
    // Fetched again by that worker, the page is extracted next: the child is its.
    const [child] = await until(async () => {
      const found = extractionProcesses(second.proc.child.pid!);
      return nestedHits() === 2 && found.length > 0 && found;
    }, 20_000);
    await second.proc.kill('SIGKILL');
    await until(async () => !processAlive(child!), 10_000);

    const third = await startWorker(over);
    const done = await ended(runId, 60_000);
    expect(done).toEqual(expect.objectContaining({ status: 'success', successfulUrls: 4, failedUrls: 0 }));
    const nested = await tdb.db.runUrl.findFirst({ where: { runId, url: { endsWith: '/nested-200/slow' } } });
    expect(nested).toEqual(expect.objectContaining({ status: 'success', takeOvers: 2, crashes: 0 }));
    expect(nestedHits()).toBe(3);
    expect(await recordCount(tdb.db, runId)).toBe(4);
    expect(third.proc.child.exitCode).toBeNull();
  }, 60_000);

  it('fails a page whose extraction in its child process passes the memory limit after two process deaths in all; the rest of its run succeeds', async () => {
    const over = { EXTRACTION_MEMORY_MB: '32', EXTRACTION_TIME_LIMIT_MS: '20000' };
    const jobId = await createJob(alice, {
      source: `${site.url}/{nested-200/a,poison,nested-200/b,nested-200/c}`,
      // Nothing on pages without items; millions of strings on the poison page, which has some.
      queries: [
        {
          name: 'big',
          type: 'xpath',
          query: 'count(array { for $n in //li, $i in 1 to 3000000 return string($i) })',
        },
      ],
    });
    const first = await startWorker(over);
    const { runId } = await run(alice, jobId);
    // The first death: its worker, while the page is fetched.
    await until(async () => poisonHits === 1);
    await first.proc.kill('SIGKILL');

    // The second: the child process of the worker that took it over, past its heap.
    const second = await startWorker(over);
    const done = await ended(runId, 60_000);
    const urls = await tdb.db.runUrl.findMany({ where: { runId }, orderBy: { seq: 'asc' } });
    expect(
      urls.map((u) => [u.url.replace(site.url, ''), u.status, u.errorMessage?.replace(site.url, '') ?? null]),
    ).toEqual([
      ['/nested-200/a', 'success', null],
      [
        '/poison',
        'failed',
        '/poison: extraction exceeded its memory limit of 32 MB (EXTRACTION_MEMORY_MB); it ended the process extracting it',
      ],
      ['/nested-200/b', 'success', null],
      ['/nested-200/c', 'success', null],
    ]);
    expect(done).toEqual(expect.objectContaining({ status: 'failed', successfulUrls: 3, failedUrls: 1 }));
    expect(runError(done)).toEqual(
      expect.objectContaining({
        code: 'EXTRACTION_ERROR',
        message: expect.stringMatching(
          /\/poison: extraction exceeded its memory limit of 32 MB \(EXTRACTION_MEMORY_MB\); it ended the process extracting it/,
        ),
      }),
    );
    const poison = await tdb.db.runUrl.findFirst({ where: { runId, url: { endsWith: '/poison' } } });
    expect(poison).toEqual(expect.objectContaining({ status: 'failed', takeOvers: 1, crashes: 1 }));
    // No third death: the worker that saw its child die lives on, and the page was not fetched again.
    expect(poisonHits).toBe(2);
    expect(
      second.proc.logs.filter((l) => l.msg === 'the process extracting a taken-over URL died of it'),
    ).toHaveLength(1);
    expect(second.proc.child.exitCode).toBeNull();
    // Each child is killed once it answered: none is left once the last has gone.
    await until(async () => extractionProcesses(second.proc.child.pid!).length === 0, 5_000, 50);
  }, 60_000);

  it("lets one user's slow-rate jobs hold no place while they wait, so another user's job runs at once", async () => {
    await startWorker({ SCRAPER_CONCURRENCY: '4' });
    const slow = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        createJob(alice, { source: `${site.url}/page/{${n}0,${n}1}`, rate_limit: 0.01 }),
      ),
    );
    const slowRuns = await Promise.all(slow.map((jobId) => run(alice, jobId)));
    // Each stores its first page, then waits 100 minutes for its second start.
    const parked = async () => {
      const runs = await tdb.db.run.findMany({ where: { id: { in: slowRuns.map((r) => r.runId) } } });
      return runs.every((r) => r.status === 'running' && r.successfulUrls === 1);
    };
    await until(parked);

    const { runId, at } = await run(bob, await createJob(bob, { source: `${site.url}/page/99` }));
    const done = await ended(runId);
    expect(done.status).toBe('success');
    expect(done.finishedAt!.getTime() - at).toBeLessThan(3_000);
    expect(await parked()).toBe(true);
    expect(site.hits.filter((h) => /^\/page\/\d1$/.test(h.path))).toEqual([]);
  });

  it("bounds one user's URLs in flight across the fleet, while another user's job runs beside them", async () => {
    await Promise.all([1, 2].map(() => startWorker({ MAX_RUNNING_URLS_PER_USER: '2' })));
    slowPeak = 0;
    slowUsersGo = new Promise((resolve) => {
      letSlowUsersGo = resolve;
    });
    const jobs = await Promise.all(
      ['a', 'b'].map((k) => createJob(alice, { source: `${site.url}/slow-user/${k}[1-6]` })),
    );
    const runs = await Promise.all(jobs.map((jobId) => run(alice, jobId)));
    // Both of Alice's places in the fleet are taken, by requests the site leaves unanswered.
    await until(async () => slowInFlight >= 2);
    const other = await run(bob, await createJob(bob, { source: `${site.url}/page/[1-3]` }));
    const otherEnd = await ended(other.runId);
    expect(otherEnd.status).toBe('success');
    // Bob's run went through while the site held Alice's URLs unanswered: beside them, not after
    // them. Meanwhile she had no more than her two in flight.
    expect(slowPeak).toBe(2);
    letSlowUsersGo();
    for (const { runId } of runs) expect((await ended(runId)).status).toBe('success');
    expect(slowPeak).toBe(2);
  });

  it("gives the next free place to another user's run when one user holds every place", async () => {
    // Four places here: two runs at a time, two URLs each.
    await startWorker({ SCRAPER_CONCURRENCY: '2', RUN_URL_CONCURRENCY: '2' });
    const from = site.hits.length;
    const long = await Promise.all(
      [1, 2, 3].map((n) => createJob(alice, { source: `${site.url}/held/${n}[01-10]` })),
    );
    const longRuns = await Promise.all(long.map((jobId) => run(alice, jobId)));
    // Every place is Alice's, each waiting for the site's answer.
    await until(async () => held.length === 4);
    const { runId } = await run(bob, await createJob(bob, { source: `${site.url}/page/7` }));
    // Bob's run is in the frontier the worker looks at: it has its URL.
    await until(async () => (await tdb.db.runUrl.count({ where: { runId } })) === 1);
    held.shift()!.end(listPage('held', 1));
    // The place that frees goes to Bob's URL, although each of Alice's runs has URLs waiting.
    const requested = () =>
      site.hits
        .slice(from)
        .map((h) => h.path)
        .filter((p) => p === '/page/7' || p.startsWith('/held/'));
    await until(async () => requested().length > 4);
    expect(requested()[4]).toBe('/page/7');
    const done = await ended(runId);
    expect(done.status).toBe('success');
    for (const { runId: longRun } of longRuns)
      expect((await tdb.db.run.findUniqueOrThrow({ where: { id: longRun } })).status).toBe('running');
    for (const jobId of long) expect((await alice.post(`/jobs/${jobId}/pause`)).status).toBe(200);
  });

  it('retries a run whose storage is cut mid-run and finishes it with every URL counted once, none failed', async () => {
    const pgPort = Number(new URL(tdb.url).port || 5432);
    const proxy = await startTcpProxy(pgPort);
    const dbUrl = new URL(tdb.url);
    dbUrl.port = String(proxy.port);
    await startWorker({ DATABASE_URL: dbUrl.toString(), RUN_RETRY_DELAY_MS: '200' });
    const jobId = await createJob(alice, { source: `${site.url}/slow/[1-12]?ms=150`, rate_limit: 600 });
    const { runId } = await run(alice, jobId);
    await until(async () => (await recordCount(tdb.db, runId)) >= 4);
    await proxy.refuse();
    await new Promise((r) => setTimeout(r, 2_500));
    await proxy.restore();
    const done = await ended(runId, 45_000);
    await proxy.stop();
    expect(done).toEqual(expect.objectContaining({ status: 'success', successfulUrls: 12, failedUrls: 0 }));
    const rows = await storedRecords(tdb.db, runId);
    expect(rows).toHaveLength(12);
    expect(new Set(rows.map((r) => r.urlIndex)).size).toBe(12);
  });

  it("ends a run that keeps failing for the worker's own reasons as failed after its retries, never as the target's NETWORK_ERROR", async () => {
    await startWorker({ RUN_RETRY_DELAY_MS: '50' });
    const since = Date.now();
    const jobId = await createJob(alice, { source: `${site.url}/page/[31-32]` });
    // A stored value the API would refuse today: the rate budget's script cannot compute with it.
    await tdb.db.job.update({ where: { id: jobId }, data: { rateLimit: 5e-324 } });
    const { runId } = await run(alice, jobId);
    const done = await ended(runId, 30_000);
    expect(done.status).toBe('failed');
    expect(runError(done)).toEqual(
      expect.objectContaining({
        code: 'EXTRACTION_ERROR',
        message: expect.stringMatching(/^The run could not go on after 5 attempts: /),
      }),
    );
    const job = (await tdb.db.job.findUniqueOrThrow({ where: { id: jobId } })) as JobModel;
    expect(job.status).toBe('failed');
    expect(site.hits.filter((h) => h.at >= since && /^\/page\/3[12]$/.test(h.path))).toEqual([]);
  });
});
