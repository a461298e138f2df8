// The run engine under faults (docs/api.md §16.2, §21): runs of healthy pages on three real scraper
// workers, one SIGKILLed every few seconds and replaced at once (every other kill, when one exists,
// a worker whose child process extracts a taken-over URL), while PostgreSQL twice refuses every
// connection (and cuts the open ones) for 10 s. Every run must still end success with every
// page stored once, and no worker may die by itself. Only the kill timing is random (seeded).
import { mkdirSync, writeFileSync } from 'node:fs';
import type { RunModel } from '@scrapejobs/db';
import { buildTestApi } from '../support/api.ts';
import { type Client, client, validJob } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { extractionProcesses, type Proc, scraperWorkerEnv, startApp } from '../support/processes.ts';
import { seededRandom } from '../support/random.ts';
import { storedRecords } from '../support/records.ts';
import { testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

const WORKERS = 3;
const RECORDS_PER_PAGE = 4;
const CRAWL_PAGES = 50;
const GLOB_PAGES = 30;
// Rate limits that keep every run going for at least ~36 s however fast the fleet is (the limiter
// spaces starts, it never bursts), so that both outages and the kills surely hit running runs.
const CRAWL_RATE = 80;
const GLOB_RATE = 48;
const KILL_EVERY_MS = [1_500, 3_000] as const;
/**
 * How long a targeted kill looks for a worker whose child extracts a taken-over URL, from the
 * earliest time a kill may come: the URLs of the worker killed before are taken over once their
 * 2 s lease runs out, and each child lives for well under a second on a quiet machine.
 */
const HOLDER_LOOK_MS = 3_000;
const OUTAGES = [
  { at: 6_000, ms: 10_000 },
  { at: 24_000, ms: 10_000 },
];
const CHAOS_MS = 38_000;
/** From the runs' start: every run must have ended by then. */
const DEADLINE_MS = 120_000;
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 2 ** 31);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** A page of `RECORDS_PER_PAGE` records named after it, with links for crawls. */
const catalog = (label: string, links: string[]) =>
  `<!doctype html><html><head><title>${label}</title></head><body><h1>${label}</h1><ul>${Array.from(
    { length: RECORDS_PER_PAGE },
    (_, i) =>
      `<li class="item"><span class="name">${label} #${i}</span> <span class="price">${i}</span></li>`,
  ).join(
    '',
  )}</ul>${links.map((href) => `<a class="link" href="${href}">${href}</a>`).join('')}</body></html>`;

/** Crawl k is a binary tree of CRAWL_PAGES pages; each links to its children, its root and itself. */
const crawlLinks = (k: number, n: number) =>
  [2 * n + 1, 2 * n + 2, 0, n].filter((child) => child < CRAWL_PAGES).map((child) => `/crawl/${k}/${child}`);

interface Worker {
  proc: Proc;
  stderr: string;
  /** The test SIGKILLed it; any other end is the worker's own. */
  killed: boolean;
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
}

interface PlannedRun {
  name: string;
  user: 'alice' | 'bob';
  jobId: string;
  runId: string;
  /** Every page URL the run must store, once each. */
  urls: string[];
  /** The title of a URL's page, which its records' names carry. */
  label: (url: string) => string;
}

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let site: Awaited<ReturnType<typeof startSite>>;
let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
let proxiedDatabaseUrl: string;
const prefix = testPrefix();
const workers: Worker[] = [];
const runs: PlannedRun[] = [];
const clients: Record<PlannedRun['user'], Client> = {} as Record<PlannedRun['user'], Client>;
const chaos = {
  kills: 0,
  /** Kills of a worker while its child process extracted a taken-over URL. */
  holding: 0,
  outages: [] as { runningAtStart: number; runningAtEnd: number }[],
};
/** What the test did when, for reading the workers' logs beside it (CHAOS_LOG_DIR). */
const timeline: { at: string; event: string; pid?: number }[] = [];
const note = (event: string, pid?: number) => timeline.push({ at: new Date().toISOString(), event, pid });
let ended: RunModel[] = [];

function startWorker(): Worker {
  const proc = startApp(
    'scraper-worker',
    scraperWorkerEnv(proxiedDatabaseUrl, prefix.prefix, {
      RUN_LOCK_MS: '2000',
      RUN_RETRY_DELAY_MS: '1000',
    }),
  );
  const worker: Worker = { proc, stderr: '', killed: false, exit: null };
  proc.child.stderr!.on('data', (chunk: Buffer) => {
    worker.stderr += chunk.toString();
  });
  proc.child.on('exit', (code, signal) => {
    worker.exit = { code, signal };
  });
  workers.push(worker);
  return worker;
}

async function createRun(plan: Omit<PlannedRun, 'jobId' | 'runId'>, body: Record<string, unknown>) {
  const as = clients[plan.user];
  const created = await as.post(
    '/jobs',
    validJob({
      name: plan.name,
      queries: [
        { name: 'name', type: 'css', query: 'li.item .name' },
        { name: 'price', type: 'css', query: 'li.item .price' },
      ],
      ...body,
    }),
  );
  if (created.status !== 201) throw new Error(`create ${plan.name}: ${JSON.stringify(created.body)}`);
  const started = await as.post(`/jobs/${created.body.job_id}/run`);
  if (started.status !== 202) throw new Error(`run ${plan.name}: ${JSON.stringify(started.body)}`);
  runs.push({ ...plan, jobId: created.body.job_id, runId: started.body.run_id });
}

const runningCount = async () =>
  tdb.db.run.count({ where: { id: { in: runs.map((r) => r.runId) }, status: 'running' } });

/**
 * Until `until`: SIGKILLs a worker every 1.5–3 s and starts its replacement at once. The victim is
 * random, except that every other kill goes to a worker whose child process extracts a taken-over
 * URL, looked for from 1.5 s after the kill before until one is found or HOLDER_LOOK_MS have
 * passed (then a random one): a kill that lands there must not blame the URL either (§16.2).
 */
async function killWorkers(random: () => number, until: number) {
  const fleet = workers.slice(0, WORKERS);
  for (let tick = 0; ; tick++) {
    const targeted = tick % 2 === 1;
    await sleep(KILL_EVERY_MS[0] + (targeted ? 0 : random() * (KILL_EVERY_MS[1] - KILL_EVERY_MS[0])));
    if (Date.now() >= until) return;
    let holders: number[] = [];
    for (const lookUntil = Date.now() + HOLDER_LOOK_MS; targeted && Date.now() < lookUntil; ) {
      holders = fleet.flatMap((w, i) => (extractionProcesses(w.proc.child.pid!).length > 0 ? [i] : []));
      if (holders.length > 0) break;
      await sleep(25);
    }
    const holding = holders.length > 0;
    const i = holding ? holders[Math.floor(random() * holders.length)]! : Math.floor(random() * fleet.length);
    const victim = fleet[i]!;
    victim.killed = true;
    note(holding ? 'SIGKILL while its child extracts a taken-over URL' : 'SIGKILL', victim.proc.child.pid);
    await victim.proc.kill('SIGKILL');
    chaos.kills++;
    if (holding) chaos.holding++;
    fleet[i] = startWorker();
    note('started', fleet[i]!.proc.child.pid);
  }
}

/** Makes PostgreSQL refuse connections, and cuts the open ones, at each outage. */
async function cutPostgres(startedAt: number) {
  for (const outage of OUTAGES) {
    await sleep(startedAt + outage.at - Date.now());
    const runningAtStart = await runningCount();
    note('postgres refused');
    await proxy.refuse();
    try {
      await sleep(outage.ms);
    } finally {
      await proxy.restore();
      note('postgres restored');
    }
    chaos.outages.push({ runningAtStart, runningAtEnd: await runningCount() });
  }
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  for (const user of ['alice', 'bob'] as const) {
    const { token } = await api.keys.create({
      email: `${user}@example.com`,
      mode: 'test',
      scopes: ['jobs:read', 'jobs:write'],
      name: 'chaos',
    });
    clients[user] = client(api.app, token);
  }
  site = await startSite((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    const crawled = path.match(/^\/crawl\/(\d+)\/(\d+)$/);
    const globbed = path.match(/^\/glob\/(\d+)\/(\d+)$/);
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    if (path === '/robots.txt') {
      res.setHeader('Content-Type', 'text/plain');
      res.end('User-agent: *\nAllow: /\n');
    } else if (crawled && Number(crawled[2]) < CRAWL_PAGES) {
      const [k, n] = [Number(crawled[1]), Number(crawled[2])];
      setTimeout(() => res.end(catalog(`crawl ${k} page ${n}`, crawlLinks(k, n))), 40);
    } else if (globbed) setTimeout(() => res.end(catalog(`glob ${globbed[1]} page ${globbed[2]}`, [])), 40);
    else return false;
    return true;
  });
  proxy = await startTcpProxy(Number(new URL(tdb.url).port || 5432));
  const proxied = new URL(tdb.url);
  proxied.port = String(proxy.port);
  proxiedDatabaseUrl = proxied.toString();

  const first = Array.from({ length: WORKERS }, startWorker);
  await Promise.all(first.map((w) => w.proc.waitForLog((l) => l.msg === 'scraper worker started', 30_000)));

  const startedAt = Date.now();
  const users = ['alice', 'bob', 'alice'] as const;
  for (const k of [1, 2, 3]) {
    const pages = Array.from({ length: CRAWL_PAGES }, (_, n) => `${site.url}/crawl/${k}/${n}`);
    await createRun(
      {
        name: `crawl ${k}`,
        user: users[k - 1]!,
        urls: pages,
        label: (u) => `crawl ${k} page ${u.split('/').pop()}`,
      },
      {
        source: pages[0],
        rate_limit: CRAWL_RATE,
        // One crawl reads robots.txt: a read shared by its URLs, through the kills and outages.
        crawl: {
          follow: [{ type: 'css', query: 'a.link::attr(href)' }],
          max_depth: 10,
          respect_robots_txt: k === 1,
        },
      },
    );
    const globbed = Array.from({ length: GLOB_PAGES }, (_, n) => `${site.url}/glob/${k}/${n + 1}`);
    await createRun(
      {
        name: `glob ${k}`,
        user: users[3 - k]!,
        urls: globbed,
        label: (u) => `glob ${k} page ${u.split('/').pop()}`,
      },
      { source: `${site.url}/glob/${k}/[1-${GLOB_PAGES}]`, rate_limit: GLOB_RATE },
    );
  }

  const random = seededRandom(SEED);
  await Promise.all([killWorkers(random, startedAt + CHAOS_MS), cutPostgres(startedAt)]);

  const ids = runs.map((r) => r.runId);
  for (;;) {
    ended = await tdb.db.run.findMany({ where: { id: { in: ids } } });
    if (ended.every((r) => r.status !== 'running') || Date.now() > startedAt + DEADLINE_MS) break;
    await sleep(250);
  }
}, 180_000);

afterAll(async () => {
  if (process.env.CHAOS_LOG_DIR) {
    const lines = workers.flatMap((w) => [
      ...w.proc.logs.map((l) => JSON.stringify({ pid: w.proc.child.pid, ...l })),
      ...(w.stderr ? [JSON.stringify({ pid: w.proc.child.pid, stderr: w.stderr })] : []),
    ]);
    mkdirSync(process.env.CHAOS_LOG_DIR, { recursive: true });
    writeFileSync(`${process.env.CHAOS_LOG_DIR}/workers.ndjson`, `${lines.join('\n')}\n`);
    writeFileSync(
      `${process.env.CHAOS_LOG_DIR}/timeline.json`,
      JSON.stringify({ SEED, runs, timeline }, null, 1),
    );
  }
  for (const w of workers) w.killed = true;
  await Promise.all(workers.map((w) => w.proc.kill('SIGKILL')));
  await proxy?.stop();
  await site?.close();
  await api?.close();
  await tdb?.drop();
  await prefix.cleanup();
});

const runOf = (plan: PlannedRun) => ended.find((r) => r.id === plan.runId)!;

describe(`the run engine under worker kills and PostgreSQL outages (§16.2, §21; CHAOS_SEED=${SEED})`, () => {
  it('kills a worker every few seconds, some while they extract a taken-over URL, and cuts PostgreSQL twice while every run is running', () => {
    expect(chaos.kills).toBeGreaterThanOrEqual(10);
    expect(chaos.holding).toBeGreaterThanOrEqual(2);
    expect(chaos.outages).toEqual(
      OUTAGES.map(() => ({ runningAtStart: runs.length, runningAtEnd: runs.length })),
    );
  });

  it('ends every run success, every page URL succeeded once, none failed for a death it did not cause', async () => {
    const seen = [];
    for (const plan of runs) {
      const run = runOf(plan);
      const urls = await tdb.db.runUrl.findMany({ where: { runId: plan.runId }, orderBy: { seq: 'asc' } });
      seen.push({
        run: plan.name,
        status: run.status,
        error: run.error,
        failed: urls
          .filter((u) => u.status !== 'success')
          .map(
            (u) =>
              `${u.url} ${u.status} (take-overs ${u.takeOvers}, crashes ${u.crashes}) ${u.errorCode}: ${u.errorMessage}`,
          ),
        urls: urls.map((u) => u.url).sort(),
        counts: [run.successfulUrls, run.failedUrls, run.skippedUrls, run.totalUrls],
      });
    }
    // A URL that failed is explained by when the kills and outages came.
    if (seen.some((run) => run.failed.length > 0)) console.error(JSON.stringify(timeline, null, 1));
    expect(seen).toEqual(
      runs.map((plan) => ({
        run: plan.name,
        status: 'success',
        error: null,
        failed: [],
        urls: [...plan.urls].sort(),
        counts: [plan.urls.length, 0, 0, plan.urls.length],
      })),
    );
    const blamed = await tdb.db.runUrl.count({
      where: { runId: { in: runs.map((r) => r.runId) }, crashes: { gt: 0 } },
    });
    expect(blamed).toBe(0);
  });

  it('stores every record of every page exactly once', async () => {
    for (const plan of runs) {
      const records = await storedRecords(tdb.db, plan.runId);
      const stored = records.map((r) => `${r.url} | ${(r.data as { name: string }).name}`).sort();
      const expected = plan.urls
        .flatMap((url) =>
          Array.from({ length: RECORDS_PER_PAGE }, (_, i) => `${url} | ${plan.label(url)} #${i}`),
        )
        .sort();
      expect({ run: plan.name, stored }).toEqual({ run: plan.name, stored: expected });
      expect(await tdb.db.resultPage.count({ where: { runId: plan.runId } })).toBe(plan.urls.length);
    }
  });

  it('reports successful_urls and results_count equal to what is stored', async () => {
    for (const plan of runs) {
      const res = await clients[plan.user].get(`/jobs/${plan.jobId}/runs/${plan.runId}`);
      expect(res.status).toBe(200);
      const stored = {
        successful_urls: await tdb.db.runUrl.count({ where: { runId: plan.runId, status: 'success' } }),
        failed_urls: await tdb.db.runUrl.count({ where: { runId: plan.runId, status: 'failed' } }),
        results_count: (await storedRecords(tdb.db, plan.runId)).length,
      };
      expect({ run: plan.name, ...res.body }).toEqual(expect.objectContaining({ run: plan.name, ...stored }));
      expect(stored.results_count).toBe(plan.urls.length * RECORDS_PER_PAGE);
    }
  });

  it('keeps every worker it did not kill alive, with no unhandled rejection or uncaught error logged', () => {
    const died = workers
      .filter((w) => !w.killed || (w.exit && w.exit.signal !== 'SIGKILL'))
      .filter((w) => w.exit !== null)
      .map((w) => ({ pid: w.proc.child.pid, exit: w.exit, stderr: w.stderr.slice(-2_000) }));
    expect(died).toEqual([]);
    const alive = workers.filter((w) => !w.killed);
    expect(alive).toHaveLength(WORKERS);
    const bad = /unhandled.?rejection|uncaught/i;
    const lines = workers.flatMap((w) => [
      ...w.proc.logs.map((l) => JSON.stringify(l)),
      ...w.stderr.split('\n'),
    ]);
    expect(lines.filter((l) => bad.test(l))).toEqual([]);
    expect(lines.filter((l) => l.includes('ended the process extracting it'))).toEqual([]);
  });
});
