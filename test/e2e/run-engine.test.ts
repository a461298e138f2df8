// The run engine at scale and on every path a run can stop: real scraper worker processes, the
// real API, PostgreSQL and Redis, against a local site (docs/api.md §21).
import { newId } from '@scrapejobs/db';
import { buildTestApi } from '../support/api.ts';
import { client, validJob } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { recordCount } from '../support/records.ts';
import { testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let site: Awaited<ReturnType<typeof startSite>>;
let alice: ReturnType<typeof client>;
const prefix = testPrefix();
const workers: Proc[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  site = await startSite();
  const { token } = await api.keys.create({
    email: 'engine@example.com',
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write'],
    name: 'k',
  });
  alice = client(api.app, token);
  for (let i = 0; i < 2; i++) {
    const worker = startApp('scraper-worker', scraperWorkerEnv(tdb.url, prefix.prefix));
    workers.push(worker);
    await worker.waitForLog((l) => l.msg === 'scraper worker started');
  }
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await api.close();
  await site.close();
  await tdb.drop();
  await prefix.cleanup();
});

async function createJob(body: Record<string, unknown>): Promise<string> {
  const created = await alice.post('/jobs', validJob(body));
  expect(created.status).toBe(201);
  return created.body.job_id as string;
}

async function startRun(jobId: string): Promise<string> {
  const started = await alice.post(`/jobs/${jobId}/run`);
  expect(started.status).toBe(202);
  return started.body.run_id as string;
}

/** What the run, its job and its stored URLs and records say once the workers let it go. */
async function countsOf(runId: string) {
  const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId }, include: { job: true } });
  const byStatus = async (status: 'success' | 'failed') => tdb.db.runUrl.count({ where: { runId, status } });
  return {
    run: { results: run.resultsCount, successful: run.successfulUrls, failed: run.failedUrls },
    job: run.job.resultsCount,
    stored: {
      results: await recordCount(tdb.db, runId),
      successful: await byStatus('success'),
      failed: await byStatus('failed'),
    },
  };
}

describe('a paused run counts what it stored', () => {
  it('while its URLs are held by workers and arrive after the pause', async () => {
    const jobId = await createJob({ source: `${site.url}/page/[1-30]`, rate_limit: 60 });
    const runId = await startRun(jobId);
    await until(
      async () => (await tdb.db.run.findUniqueOrThrow({ where: { id: runId } })).successfulUrls >= 5,
    );
    expect((await alice.post(`/jobs/${jobId}/pause`)).status).toBe(200);
    // Workers stop what they hold; what they finished before is stored, and counted, with it.
    for (const wait of [0, 1_000, 2_000]) {
      await new Promise((r) => setTimeout(r, wait));
      const counts = await countsOf(runId);
      expect(counts.run).toEqual(counts.stored);
      expect(counts.job).toBe(counts.stored.results);
      expect(counts.stored.results).toBe(counts.stored.successful);
      expect(counts.stored.successful).toBeGreaterThanOrEqual(5);
    }
  });

  it("while its URLs wait for the job's rate limit, handed back to the frontier", async () => {
    const jobId = await createJob({ source: `${site.url}/page/{41,42,43}`, rate_limit: 1 });
    const runId = await startRun(jobId);
    await until(async () => {
      const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
      return run.successfulUrls === 1 && run.nextClaimAt !== null;
    });
    expect((await alice.post(`/jobs/${jobId}/pause`)).status).toBe(200);
    const counts = await countsOf(runId);
    expect(counts.run).toEqual({ results: 1, successful: 1, failed: 0 });
    expect(counts.stored).toEqual(counts.run);
    expect(counts.job).toBe(1);
    const listed = await alice.get(`/jobs/${jobId}/runs/${runId}`);
    expect(listed.body).toEqual(
      expect.objectContaining({ status: 'cancelled', results_count: 1, successful_urls: 1 }),
    );
  });
});

/** What the runs of jobs never fetched were left in, and what the workers warned of, for a failure's message. */
async function stalled(jobIds: string[]): Promise<string> {
  const runs = await tdb.db.$queryRaw`
    SELECT r.status, r.seeded, r.due_at, r.next_claim_at, r.retry_at, r.pending_urls, r.active_urls,
           r.attempts, json_agg(json_build_object('seq', u.seq, 'status', u.status, 'claims', u.claims,
           'lease_until', u.lease_until) ORDER BY u.seq) AS urls
      FROM runs r JOIN run_urls u ON u.run_id = r.id
     WHERE r.job_id = ANY(${jobIds})
     GROUP BY r.id LIMIT 5`;
  const warned = workers.flatMap((w) =>
    w.logs.filter((l) => l.level === 'warn' || l.level === 'error').slice(-10),
  );
  return JSON.stringify({ at: new Date(), missing: jobIds.length, runs, warned });
}

describe('thousands of runs at once', () => {
  it('fetches a first URL of each of 2,000 slow runs started at once within 60 s of its start, and of a run started beside them within 10 s', async () => {
    const RUNS = 2_000;
    const template = await createJob({ source: `${site.url}/page/0`, rate_limit: 0.5 });
    // Jobs made like the template, two pages each: one due at once, the other 2 minutes later.
    const ids = Array.from({ length: RUNS }, () => newId('job'));
    await tdb.db.$executeRaw`
      INSERT INTO jobs
      SELECT (jsonb_populate_record(j, jsonb_build_object('id', t.id, 'name', 'scale ' || t.n,
                'source', ${site.url} || '/page/' || t.n || '{0,1}'))).*
        FROM jobs j, unnest(${ids}::text[]) WITH ORDINALITY AS t(id, n)
       WHERE j.id = ${template}`;
    const runIds: string[] = [];
    const before = site.hits.length;
    const hits = () => site.hits.slice(before);
    for (let i = 0; i < RUNS; i += 25)
      runIds.push(...(await Promise.all(ids.slice(i, i + 25).map((jobId) => startRun(jobId)))));

    // Job n's pages are /page/<n>0 and /page/<n>1.
    const firstHit = new Map<number, number>();
    const fetched = () => {
      for (const hit of hits()) {
        const n = hit.path.match(/^\/page\/(\d+)[01]$/);
        if (n && !firstHit.has(Number(n[1]))) firstHit.set(Number(n[1]), hit.at);
      }
      return firstHit.size >= RUNS;
    };
    await until(async () => fetched(), 90_000, 500).catch(async (err: Error) => {
      throw new Error(`${err.message}; ${await stalled(ids.filter((_, i) => !firstHit.has(i + 1)))}`);
    });
    const runs = await tdb.db.run.findMany({ where: { id: { in: runIds } }, include: { job: true } });
    const waits = runs.map((run) => {
      const n = Number(run.job.source.match(/\/page\/(\d+)\{0,1\}$/)![1]);
      return firstHit.get(n)! - run.startedAt.getTime();
    });
    expect(Math.max(...waits)).toBeLessThan(60_000);
    // None fetched its second page ahead of its rate limit.
    expect(hits()).toHaveLength(RUNS);

    // A run started now, beside the 2,000 waiting on their rate limits, is not held back by them.
    const lastId = await startRun(template);
    await until(async () => hits().some((hit) => hit.path === '/page/0'), 10_000, 50);
    const last = await tdb.db.run.findUniqueOrThrow({ where: { id: lastId } });
    const fetchedAt = hits().find((hit) => hit.path === '/page/0')!.at;
    expect(fetchedAt - last.startedAt.getTime()).toBeLessThan(10_000);
    await tdb.db.run.updateMany({
      where: { id: { in: [...runIds, lastId] } },
      data: { status: 'cancelled' },
    });
  }, 180_000);
});
