/**
 * Runs at scale (issue 26): how the frontier copes with many running runs at once.
 *
 *   - Site: a local server in this process; `/s/<round>/<n><d>` is a small page (one record).
 *   - Jobs: one created through the API (rate_limit 0.5 a minute, one css query), copied in
 *     PostgreSQL to N jobs whose source is `/s/<round>/<n>{0,1}`: each run has two pages, one it
 *     fetches at once and one its rate limit holds for two minutes, so every run stays running.
 *   - Rounds (--runs, default `1,100,1000,5000`): N runs started through the API (POST run, 50
 *     at a time), on --workers scraper workers (default 2, their default settings). A round ends
 *     when every run has fetched one page; then its runs are cancelled (paused jobs) before the
 *     next round, whose runs therefore start beside none.
 *   - Figures per round: how long starting them took; the time from the first start to the last
 *     run's first fetch; each run's wait from its start to its first fetch (p50, p99, max) and the
 *     last-started run's; the wait of one run more, started once the N have fetched their page and
 *     wait on their rate limits (the template job's own run); CPU time
 *     of PostgreSQL (every `postgres` process) and of the workers from the first start to the
 *     last first fetch, per claimed URL (one per run: the held page is not claimed).
 *
 * Run: `pnpm exec node bench/runs-at-scale.ts [--runs 1,100,1000,5000] [--workers 2]`
 * Env: BENCH_ADMIN_DATABASE_URL (postgresql://root@127.0.0.1:5432/postgres), REDIS_URL.
 * Prints a JSON summary, then a Markdown table.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDatabase, newId } from '@scrapejobs/db';
import { type Proc, scraperWorkerEnv, startApp } from '../test/support/processes.ts';
import * as support from './support.ts';

const args = support.parseOptions({ runs: '1,100,1000,5000', workers: '2', 'log-level': 'warn' });
const ROUNDS = args.runs.split(',').map(Number);
const WORKERS = Number(args.workers);
const DB_NAME = 'scrapejobs_bench_runs_at_scale';
const PREFIX = support.benchPrefix('runs-at-scale');
const TARGETS = { first_url_s: 60, last_started_s: 10, cost_ratio_5000_to_100: 2 };

async function main(): Promise<boolean> {
  const databaseUrl = await support.createBenchDatabase(DB_NAME);
  const db = createDatabase({ url: databaseUrl, max: 4 });
  support.atCleanup(() => db.$disconnect());

  const hits: { path: string; at: number }[] = [];
  const site = createServer((req, res) => {
    hits.push({ path: req.url ?? '/', at: Date.now() });
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><html><head><title>p</title></head><body><h1>${req.url}</h1></body></html>`);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  support.atCleanup(() => new Promise((resolve) => site.close(resolve)));
  const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

  const { worker, base } = await support.startApiAndWorker({
    databaseUrl,
    prefix: PREFIX,
    logLevel: args['log-level'],
  });
  const workers: Proc[] = [worker];
  for (let i = 1; i < WORKERS; i++) {
    const more = startApp('scraper-worker', {
      ...scraperWorkerEnv(databaseUrl, PREFIX),
      LOG_LEVEL: args['log-level'],
    });
    support.track(more.child, 20_000);
    workers.push(more);
  }
  await support.sleep(3_000);
  const { token } = await support.createKey(db, 'scale@example.com', ['jobs:read', 'jobs:write']);
  const call = support.apiClient(base, token);

  const rounds = [];
  for (const [index, runs] of ROUNDS.entries()) {
    const created = await call<{ job_id: string }>('POST', '/jobs', {
      name: `template ${index}`,
      source: `${siteUrl}/s/${index}/0`,
      queries: [{ name: 'title', type: 'css', query: 'h1' }],
      rate_limit: 0.5,
    });
    if (created.status !== 201) throw new Error(`could not create the template job: ${created.status}`);
    const ids = Array.from({ length: runs }, () => newId('job'));
    await db.$executeRaw`
      INSERT INTO jobs
      SELECT (jsonb_populate_record(j, jsonb_build_object('id', t.id, 'name', 'scale ' || t.n,
                'source', ${siteUrl} || '/s/' || ${index}::int || '/' || t.n || '{0,1}'))).*
        FROM jobs j, unnest(${ids}::text[]) WITH ORDINALITY AS t(id, n)
       WHERE j.id = ${created.body.job_id}`;
    await support.waitForQuiet();
    const from = hits.length;
    const firstFetch = new Map<number, number>();
    const pgBefore = support.cpuMsByName(['postgres']).postgres!;
    const workersBefore = workers.map((w) => support.cpuMsOf(w.child.pid!) ?? 0);
    const started = Date.now();
    for (let i = 0; i < runs; i += 50)
      await Promise.all(
        ids.slice(i, i + 50).map(async (id) => {
          const res = await call('POST', `/jobs/${id}/run`);
          if (res.status !== 202) throw new Error(`POST run answered ${res.status}`);
        }),
      );
    const allStarted = Date.now();
    const prefix = `/s/${index}/`;
    for (;;) {
      for (const hit of hits.slice(from)) {
        if (!hit.path.startsWith(prefix)) continue;
        const n = Number(hit.path.slice(prefix.length, -1));
        if (!firstFetch.has(n)) firstFetch.set(n, hit.at);
      }
      if (firstFetch.size >= runs) break;
      if (Date.now() - started > 300_000) throw new Error(`only ${firstFetch.size} of ${runs} runs fetched`);
      await support.sleep(100);
    }
    const done = Date.now();
    const pgMs = support.cpuMsByName(['postgres']).postgres! - pgBefore;
    const workerMs = workers.reduce(
      (sum, w, i) => sum + ((support.cpuMsOf(w.child.pid!) ?? 0) - workersBefore[i]!),
      0,
    );
    const nOf = new Map(ids.map((id, i) => [id, i + 1]));
    const runsStarted = await db.run.findMany({
      where: { jobId: { in: ids } },
      select: { jobId: true, startedAt: true },
    });
    const waits = runsStarted.map((run) => firstFetch.get(nOf.get(run.jobId)!)! - run.startedAt.getTime());
    const last = runsStarted.reduce((a, b) => (b.startedAt > a.startedAt ? b : a));
    const sorted = [...waits].sort((a, b) => a - b);
    // One run more, started while the N wait on their rate limits: the template job's own page.
    const templatePath = `${prefix}0`;
    const extraFrom = hits.length;
    if ((await call('POST', `/jobs/${created.body.job_id}/run`)).status !== 202)
      throw new Error('could not start the run started last');
    while (!hits.slice(extraFrom).some((hit) => hit.path === templatePath)) await support.sleep(20);
    const extraHit = hits.slice(extraFrom).find((hit) => hit.path === templatePath)!.at;
    const extra = await db.run.findFirstOrThrow({ where: { jobId: created.body.job_id } });
    rounds.push({
      runs,
      start_s: support.round2((allStarted - started) / 1000),
      all_first_urls_s: support.round2((done - started) / 1000),
      wait_p50_s: support.round2(support.percentile(sorted, 50) / 1000),
      wait_p99_s: support.round2(support.percentile(sorted, 99) / 1000),
      wait_max_s: support.round2(sorted.at(-1)! / 1000),
      last_started_wait_s: support.round2(
        (firstFetch.get(nOf.get(last.jobId)!)! - last.startedAt.getTime()) / 1000,
      ),
      one_more_wait_s: support.round2((extraHit - extra.startedAt.getTime()) / 1000),
      postgres_cpu_ms_per_url: support.round2(pgMs / runs),
      workers_cpu_ms_per_url: support.round2(workerMs / runs),
    });
    support.log(`round ${runs}: ${JSON.stringify(rounds.at(-1))}`);
    const all = [...ids, created.body.job_id];
    await db.$executeRaw`UPDATE runs SET status = 'cancelled' FROM unnest(${all}::text[]) AS t(id) WHERE runs.job_id = t.id`;
    await db.$executeRaw`UPDATE jobs SET status = 'paused' FROM unnest(${all}::text[]) AS t(id) WHERE jobs.id = t.id`;
  }

  const at100 = rounds.find((r) => r.runs === 100)?.postgres_cpu_ms_per_url;
  const at5000 = rounds.find((r) => r.runs === 5000)?.postgres_cpu_ms_per_url;
  const summary = {
    machine: support.machineInfo(`${WORKERS} scraper workers`),
    targets: TARGETS,
    rounds,
    postgres_cost_ratio_5000_to_100: at100 && at5000 ? support.round2(at5000 / at100) : null,
  };
  console.log(JSON.stringify(summary, null, 2));
  support.printTable(
    [
      'runs',
      'starting them s',
      'all first URLs s',
      'wait p50 s',
      'p99 s',
      'max s',
      'last started s',
      'one more s',
      'PG CPU ms/URL',
      'workers CPU ms/URL',
    ],
    'rrrrrrrrrr',
    rounds.map((r) => [
      r.runs,
      r.start_s,
      r.all_first_urls_s,
      r.wait_p50_s,
      r.wait_p99_s,
      r.wait_max_s,
      r.last_started_wait_s,
      r.one_more_wait_s,
      r.postgres_cpu_ms_per_url,
      r.workers_cpu_ms_per_url,
    ]),
  );
  return rounds.every(
    (r) => r.wait_max_s < TARGETS.first_url_s && r.one_more_wait_s < TARGETS.last_started_s,
  );
}

await support.runBench(main);
