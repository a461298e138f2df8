/**
 * Crawl benchmark, end to end: crawls of a local site of linked pages through the real API
 * process and one or two real scraper-worker processes sharing each run's frontier.
 *
 *   - Site: bench/fleet-site.ts in its own process; `/c/<n>` is an ~80 KB catalogue page with
 *     400 items that links to `/c/<2n+1>` and `/c/<2n+2>` (a tree of --pages pages, 20,000 by
 *     default), built per request.
 *   - Job: source `/c/0`, the three queries of bench/fleet.ts (400 records a page), rate_limit
 *     6000, crawl `{follow: [css a.next::attr(href)], max_depth: 50, max_pages: --pages}` with
 *     robots.txt respected (the site answers 404: all allowed).
 *   - Rounds (--rounds, default `1x1,1x2,2x1`): `<jobs>x<workers>`; each starts that many
 *     scraper workers (defaults of SCRAPER_CONCURRENCY and RUN_URL_CONCURRENCY, production Node
 *     flags) and runs that many crawl jobs at once, each a separate job on the whole site. The
 *     clock runs from the first POST run to the latest `finished_at`; every run must be success
 *     with --pages successful URLs and 400 records each. Peak RSS of each worker: VmRSS sampled
 *     every 100 ms. After the rounds, PostgreSQL's size per URL: pg_total_relation_size of
 *     `run_urls` (table, indexes, TOAST) after VACUUM, divided by its rows; the same for results
 *     per record.
 *
 * One crawl job cannot go faster than its own rate_limit: 6000 a minute is 100 pages/s, across
 * any number of workers. The `2x1` round shows what one worker does when two jobs feed it.
 *
 * Run: `pnpm exec node bench/crawl.ts [--pages 20000] [--rounds 1x1,1x2,2x1] [--log-level info]`
 * Env: BENCH_ADMIN_DATABASE_URL (postgresql://root@127.0.0.1:5432/postgres), REDIS_URL.
 * Prints a JSON summary, then a Markdown table.
 */
import { join } from 'node:path';
import pg from 'pg';
import { type Proc, startApp } from '../test/support/processes.ts';
import * as support from './support.ts';

const args = support.parseOptions({
  pages: '20000',
  rounds: '1x1,1x2,2x1',
  'log-level': 'info',
});
const PAGES = Number(args.pages);
const ITEMS = 400;
const ROUNDS = args.rounds.split(',').map((r) => {
  const [jobs, workers] = r.split('x').map(Number);
  return { jobs: jobs!, workers: workers! };
});
const DB_NAME = 'scrapejobs_bench_crawl';
const PREFIX = support.benchPrefix('crawl');
const TARGETS = { one_worker_pages_per_s: 150, worker_rss_mib: 300 };

const queries = [
  { name: 'title', type: 'css', query: 'h1' },
  { name: 'links', type: 'css', query: 'li.item > a::attr(href)' },
  { name: 'price', type: 'xpath', query: '//span[@class="price"]' },
];

interface RunView {
  run_id: string;
  status: string;
  started_at: string;
  finished_at: string | null;
  successful_urls: number;
  failed_urls: number;
  skipped_urls: number;
  results_count: number;
  error: unknown;
}

async function main(): Promise<boolean> {
  const tmp = support.tempDir('crawl');
  const databaseUrl = await support.createBenchDatabase(DB_NAME);
  const logFile = join(tmp, 'site.log');
  const site = support.spawnLogged(['bench/fleet-site.ts'], logFile, {
    stderr: 'inherit',
    env: { CRAWL_PAGES: String(PAGES) },
  });
  const [, port] = await support.waitForLog(site, logFile, /listening (\d+)/, 'the site');
  const siteUrl = `http://127.0.0.1:${port}`;
  const { worker, base } = await support.startApiAndWorker({
    databaseUrl,
    prefix: PREFIX,
    logLevel: args['log-level'],
    worker: { NODE_OPTIONS: support.productionNodeFlags('scraper-worker').join(' ') },
  });
  const workers: Proc[] = [worker];
  const token = await support.createKeyWithCli(databaseUrl, 'crawl-bench@example.com');
  const call = support.apiClient(base, token);

  const results = [];
  let ok = true;
  for (const round of ROUNDS) {
    while (workers.length < round.workers) {
      const more = startApp('scraper-worker', {
        DATABASE_URL: databaseUrl,
        REDIS_URL: support.REDIS_URL,
        QUEUE_PREFIX: PREFIX,
        LOG_LEVEL: args['log-level'],
        ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
        METRICS_PORT: '0',
        NODE_OPTIONS: support.productionNodeFlags('scraper-worker').join(' '),
      });
      support.track(more.child, 20_000);
      await more.waitForLog((l) => l.msg === 'scraper worker started', 30_000);
      workers.push(more);
    }
    while (workers.length > round.workers) await support.stopChild(workers.pop()!.child);
    const result = await runRound(call, siteUrl, round.jobs, workers);
    results.push(result);
    ok &&= result.valid;
  }

  const sizes = await sizesPerRow(databaseUrl);
  const summary = {
    machine: support.machineInfo('crawl benchmark'),
    pages_per_job: PAGES,
    records_per_page: ITEMS,
    targets: TARGETS,
    rounds: results,
    postgres_bytes: sizes,
  };
  console.log(JSON.stringify(summary, null, 2));
  console.log('');
  support.printTable(
    ['jobs × workers', 'pages', 'seconds', 'pages/s', 'peak worker RSS (MiB)', 'valid'],
    'lrrrrl',
    results.map((r) => [
      `${r.jobs} × ${r.workers}`,
      r.pages,
      r.duration_s,
      r.pages_per_s,
      r.worker_peak_rss_mib.join(', '),
      r.valid ? 'yes' : r.problems.join('; '),
    ]),
  );
  console.log('');
  console.log(
    `PostgreSQL: ${sizes.run_urls_bytes_per_url} bytes per URL (run_urls), ${sizes.results_bytes_per_record} bytes per record (results)`,
  );
  return ok;
}

async function runRound(
  call: ReturnType<typeof support.apiClient>,
  siteUrl: string,
  jobs: number,
  workers: Proc[],
) {
  const busyBefore = await support.waitForQuiet();
  support.log(`round: ${jobs} crawl job(s) of ${PAGES} pages, ${workers.length} worker(s)`);
  const jobIds: string[] = [];
  for (let j = 0; j < jobs; j++) {
    const created = await call<{ job_id: string }>('POST', '/jobs', {
      name: `crawl ${j}`,
      source: `${siteUrl}/c/0`,
      queries,
      rate_limit: 6000,
      crawl: {
        follow: [{ type: 'css', query: 'a.next::attr(href)' }],
        max_depth: 50,
        max_pages: PAGES,
      },
    });
    if (created.status !== 201)
      throw new Error(`POST /jobs answered ${created.status}: ${JSON.stringify(created.body)}`);
    jobIds.push(created.body.job_id);
  }
  const samplers = workers.map((w) => support.memorySampler(w.child.pid!));
  const t0 = Date.now();
  const runIds: string[] = [];
  for (const id of jobIds) {
    const started = await call<{ run_id: string }>('POST', `/jobs/${id}/run`);
    if (started.status !== 202) throw new Error(`POST run answered ${started.status}`);
    runIds.push(started.body.run_id);
  }
  const runs: RunView[] = [];
  for (const [i, id] of jobIds.entries()) {
    for (;;) {
      await support.sleep(500);
      const run = await call<RunView>('GET', `/jobs/${id}/runs/${runIds[i]}`);
      if (run.status !== 200) throw new Error(`GET run answered ${run.status}`);
      if (run.body.status !== 'running') {
        runs.push(run.body);
        break;
      }
      if (Date.now() - t0 > 30 * 60_000) throw new Error('the crawl did not end within 30 minutes');
    }
  }
  const memory = samplers.map((s) => s.stop());
  const end = Math.max(...runs.map((r) => new Date(r.finished_at!).getTime()));
  const problems: string[] = [];
  for (const run of runs) {
    if (run.status !== 'success') problems.push(`${run.run_id}: ${run.status} ${JSON.stringify(run.error)}`);
    if (run.successful_urls !== PAGES) problems.push(`${run.run_id}: ${run.successful_urls} successful URLs`);
    if (run.results_count !== PAGES * ITEMS) problems.push(`${run.run_id}: ${run.results_count} records`);
  }
  const pages = runs.reduce((n, r) => n + r.successful_urls, 0);
  const durationS = (end - t0) / 1000;
  return {
    jobs,
    workers: workers.length,
    pages,
    records: runs.reduce((n, r) => n + r.results_count, 0),
    duration_s: support.round2(durationS),
    pages_per_s: support.round2(pages / durationS),
    worker_peak_rss_mib: memory.map((m) => m.peak_rss_mib),
    machine_busy_before: busyBefore,
    valid: problems.length === 0,
    problems,
  };
}

/** Bytes per row of the frontier and of results, table + indexes + TOAST, after VACUUM. */
async function sizesPerRow(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('VACUUM ANALYZE run_urls');
    await client.query('VACUUM ANALYZE result_pages');
    // Records are counted in the view `results`; their bytes are those of the table result_pages.
    const size = async (table: string, counted = table) => {
      const { rows } = await client.query<{ bytes: string; n: string }>(
        `SELECT pg_total_relation_size('${table}') AS bytes, (SELECT count(*) FROM ${counted}) AS n`,
      );
      return { bytes: Number(rows[0]!.bytes), rows: Number(rows[0]!.n) };
    };
    const urls = await size('run_urls');
    const results = await size('result_pages', 'results');
    return {
      run_urls_rows: urls.rows,
      run_urls_bytes: urls.bytes,
      run_urls_bytes_per_url: Math.round(urls.bytes / urls.rows),
      results_rows: results.rows,
      results_bytes: results.bytes,
      results_bytes_per_record: Math.round(results.bytes / results.rows),
    };
  } finally {
    await client.end();
  }
}

await support.runBench(main);
