/**
 * Fleet benchmark, end to end: ten jobs of 100 pages each, triggered together through the real
 * API process and run by ONE real scraper-worker process; next to it, in the same run, Crawlee's
 * CheerioCrawler fetching and extracting the same 1,000 pages (bench/fleet-crawlee.ts).
 *
 *   - Site: bench/fleet-site.ts in its own process, ~80 KB pages with 400 list items each,
 *     warmed (every page built once) before anything is measured.
 *   - Jobs: `http://127.0.0.1:<port>/p/j<k>/[1-100]`, rate_limit 6000, `refetch: always` (every
 *     round fetches and extracts every page), three queries: css `h1`,
 *     css `li.item > a::attr(href)`, xpath `//span[@class="price"]`; 400 records per page.
 *   - Ours: `apps/api/src/main.ts` (key from the keys CLI) and `apps/scraper-worker/src/main.ts`
 *     started with test/support/processes.ts `startApp`, SCRAPER_CONCURRENCY and
 *     RUN_URL_CONCURRENCY at their defaults, ALLOW_PRIVATE_NETWORK_TARGETS=true, LOG_LEVEL from
 *     --log-level (default info, the production default). The clock runs from the first
 *     POST /jobs/{id}/run to the latest `finished_at` of the ten runs (polling GET /jobs/status
 *     until none is running); every run must be success with 100 successful URLs and 40,000
 *     records. Peak worker memory: VmRSS sampled every 100 ms and VmHWM from /proc/<pid>/status.
 *   - Crawlee: one child process per variant, timed around `crawler.run()`, peak RSS likewise.
 *     Variants (--crawlee): `disk` = Crawlee's defaults (dataset and request queue persisted
 *     to CRAWLEE_STORAGE_DIR, one JSON file per record) with maxConcurrency; `memory` =
 *     CRAWLEE_PERSIST_STORAGE=false and minConcurrency = maxConcurrency (Crawlee at its best).
 *     maxConcurrency defaults to 32 = SCRAPER_CONCURRENCY (4) × RUN_URL_CONCURRENCY (8), the
 *     most fetches our worker has in flight.
 *
 * The worker runs with bench/fleet-memwatch.ts preloaded (NODE_OPTIONS=--import), which reports
 * what its RSS is made of (heap used, live heap after major GCs, external, native/wasm), GC time
 * and event-loop delay. PostgreSQL CPU is that of the backends serving the bench database.
 *
 * Own database (`scrapejobs_bench_fleet`, dropped and re-created), own Redis prefix, everything
 * cleaned up at the end. `--cpu-prof <dir>` profiles the worker (NODE_OPTIONS=--cpu-prof in its
 * environment) and prints where its CPU time went. The worker gets the Node flags of its
 * production `start` script (apps/scraper-worker/package.json, also used by scripts/start.sh);
 * `--no-production-flags` leaves them out (Node's default heap sizing), `--worker-node-options=…`
 * adds more. bench/fleet-insert.ts measures the result-storing path alone.
 *
 * Run: `pnpm exec node bench/fleet.ts [--rounds 1] [--crawlee disk,memory] [--max-concurrency 32]
 *       [--log-level info] [--cpu-prof <dir>] [--no-production-flags]
 *       [--worker-node-options=--max-old-space-size=256]
 *       [--no-wait] [--json-out <file>] [--formats markdown,metadata] [--host-max-concurrency 8]`
 * `--formats` makes the jobs keep each page's document (docs/api.md §17) instead of records: no
 * queries, every run must end success with 100 URLs and no records; the summary adds the stored
 * documents' sizes. `--host-max-concurrency` sets the worker's HOST_MAX_CONCURRENCY (docs/api.md
 * §19; default 8: the site is one host, so at most 8 of the worker's 32 fetches are in flight);
 * 1000 turns the bound off in effect, for the cost of politeness.
 * Env: BENCH_ADMIN_DATABASE_URL (postgresql://root@127.0.0.1:5432/postgres), REDIS_URL.
 * Prints a JSON summary, then a Markdown table.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Proc } from '../test/support/processes.ts';
import * as support from './support.ts';

const args = support.parseOptions({
  rounds: '1',
  crawlee: 'disk,memory',
  'max-concurrency': '32',
  'log-level': 'info',
  'cpu-prof': undefined,
  'json-out': undefined,
  'no-wait': false,
  'worker-node-options': '',
  'no-production-flags': false,
  formats: '',
  'host-max-concurrency': '',
});

const WORKER_FLAGS = [
  ...(args['no-production-flags'] ? [] : support.productionNodeFlags('scraper-worker')),
  ...args['worker-node-options'].split(' ').filter(Boolean),
];
const ROUNDS = Number(args.rounds);
const CRAWLEE_VARIANTS = args.crawlee.split(',').filter(Boolean) as ('disk' | 'memory')[];
const MAX_CONCURRENCY = Number(args['max-concurrency']);
const LOG_LEVEL = args['log-level'];
const CPU_PROF_DIR = support.profileDir(args['cpu-prof']);

const JOBS = 10;
const PAGES = 100;
const ITEMS = 400;
const TARGETS = { memory_mib: 300 };
const DB_NAME = 'scrapejobs_bench_fleet';
const PREFIX = support.benchPrefix('fleet');

/** With --formats (docs/api.md §17), the jobs keep each page's document instead of records. */
const FORMATS = args.formats.split(',').filter(Boolean);
const queries =
  FORMATS.length > 0
    ? []
    : [
        { name: 'title', type: 'css', query: 'h1' },
        { name: 'links', type: 'css', query: 'li.item > a::attr(href)' },
        { name: 'price', type: 'xpath', query: '//span[@class="price"]' },
      ];
const RECORDS_PER_PAGE = FORMATS.length > 0 ? 0 : ITEMS;

// ---------------------------------------------------------------- processes

const tmp = support.tempDir('fleet');
const MEMWATCH_FILE = join(tmp, 'worker-memwatch.jsonl');

/** What the worker reported about itself (bench/fleet-memwatch.ts) between two instants. */
function workerSelfReport(from: number, to: number) {
  const lines = support.memwatchSamples(MEMWATCH_FILE, from, to, 500);
  if (!lines.length) return null;
  const peak = lines.reduce((a, b) => (b.rss > a.rss ? b : a));
  return {
    samples: lines.length,
    at_peak_rss_mib: {
      rss: peak.rss,
      heap_total: peak.heap_total,
      heap_used: peak.heap_used,
      external: peak.external,
      array_buffers: peak.array_buffers,
      other_native_incl_wasm: support.round2(peak.rss - peak.heap_total - peak.external),
    },
    max_heap_used_mib: Math.max(...lines.map((l) => l.heap_used)),
    max_live_heap_after_major_gc_mib: Math.max(0, ...lines.map((l) => l.live_heap ?? 0)),
    major_gcs: lines.reduce((n, l) => n + l.major_gcs, 0),
    gc_seconds: support.gcSeconds(lines),
    event_loop_delay_ms: support.eventLoopDelay(lines),
  };
}

// ---------------------------------------------------------------- CPU accounting

interface CpuMark {
  at: number;
  machine: ReturnType<typeof support.machineCpu>;
  pids: Map<string, number>;
}
function cpuMark(pids: Record<string, number | undefined>): CpuMark {
  const m = new Map<string, number>();
  for (const [name, pid] of Object.entries(pids)) if (pid) m.set(name, support.cpuMsOf(pid) ?? 0);
  return { at: performance.now(), machine: support.machineCpu(), pids: m };
}
/** Cores used on average between two marks, per watched process and for the whole machine. */
function coresBetween(a: CpuMark, b: CpuMark) {
  const wall = b.at - a.at;
  const out: Record<string, number> = {};
  for (const [name, ms] of b.pids) out[name] = support.round2((ms - (a.pids.get(name) ?? 0)) / wall);
  out.machine = support.round2((b.machine.busy - a.machine.busy) / wall);
  return out;
}
function cpuSecondsBetween(a: CpuMark, b: CpuMark) {
  const out: Record<string, number> = {};
  for (const [name, ms] of b.pids) out[name] = support.round2((ms - (a.pids.get(name) ?? 0)) / 1000);
  return out;
}

// ---------------------------------------------------------------- the API

interface JobDetail {
  job_id: string;
  status: string;
}
interface RunRow {
  run_id: string;
  status: string;
  started_at: string;
  finished_at: string | null;
  duration_ms: number | null;
  results_count: number;
  successful_urls: number;
  failed_urls: number;
  error: unknown;
}

// ---------------------------------------------------------------- ours

/** The documents the runs stored: how many, and their bytes as JSON and as stored (compressed). */
async function storedDocuments(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: string; json: string; stored: string }>(
      'SELECT count(*) AS count, avg(bytes) AS json, avg(octet_length(data)) AS stored FROM run_documents',
    );
    const row = rows[0]!;
    return {
      count: Number(row.count),
      json_bytes_per_document: Math.round(Number(row.json)),
      stored_bytes_per_document: Math.round(Number(row.stored)),
    };
  } finally {
    await client.end();
  }
}

interface OursResult {
  round: number;
  pages: number;
  records: number;
  duration_s: number;
  pages_per_s: number;
  trigger_ms: number;
  runs: {
    job: string;
    status: string;
    duration_ms: number | null;
    successful_urls: number;
    failed_urls: number;
    results_count: number;
  }[];
  valid: boolean;
  problems: string[];
  worker_memory: { peak_rss_mib: number; vm_hwm_mib: number; samples: number };
  worker_self_report: ReturnType<typeof workerSelfReport>;
  cpu_cores: Record<string, number>;
  cpu_seconds: Record<string, number>;
  worker_cpu_ms_per_page: number;
  machine_busy_before: number;
}

async function runOurs(
  round: number,
  call: ReturnType<typeof support.apiClient>,
  jobIds: string[],
  worker: Proc,
  api: Proc,
  site: ChildProcess,
): Promise<OursResult> {
  const busyBefore = args['no-wait'] ? -1 : await support.waitForQuiet();
  process.stderr.write(`bench: round ${round}: ours (10 jobs × ${PAGES} pages, one worker) … `);
  const pgCpu = await support.postgresTracker(DB_NAME);
  const watch = () => ({
    worker: worker.child.pid,
    api: api.child.pid,
    site: site.pid,
    bench: process.pid,
  });
  const before = cpuMark(watch());
  const mem = support.memorySampler(worker.child.pid!);
  const t0 = Date.now();
  const triggers = await Promise.all(jobIds.map((id) => call<{ status: string }>('POST', `/jobs/${id}/run`)));
  const triggerMs = Date.now() - t0;
  const problems: string[] = [];
  triggers.forEach((t, i) => {
    if (t.status !== 202) problems.push(`POST /jobs/${jobIds[i]}/run answered ${t.status}`);
  });
  // Poll the jobs until none is running.
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    await support.sleep(200);
    const list = await call<{ jobs: JobDetail[] }>('GET', '/jobs/status?limit=100');
    if (list.status !== 200) throw new Error(`GET /jobs/status answered ${list.status}`);
    if (!list.body.jobs.some((j) => j.status === 'running')) break;
    if (Date.now() > deadline) throw new Error('the runs did not end within 15 minutes');
  }
  const after = cpuMark(watch());
  const memory = mem.stop();
  const pgMs = await pgCpu.stop();

  const runs: OursResult['runs'] = [];
  let end = 0;
  let records = 0;
  for (const [k, id] of jobIds.entries()) {
    const r = await call<{ runs: RunRow[] }>('GET', `/jobs/${id}/runs`);
    const run = r.body.runs[0]!;
    runs.push({
      job: `j${k}`,
      status: run.status,
      duration_ms: run.duration_ms,
      successful_urls: run.successful_urls,
      failed_urls: run.failed_urls,
      results_count: run.results_count,
    });
    end = Math.max(end, new Date(run.finished_at ?? 0).getTime());
    records += run.results_count;
    if (run.status !== 'success') problems.push(`j${k}: ${run.status} ${JSON.stringify(run.error)}`);
    if (run.successful_urls !== PAGES) problems.push(`j${k}: ${run.successful_urls} successful URLs`);
    if (run.results_count !== PAGES * RECORDS_PER_PAGE) problems.push(`j${k}: ${run.results_count} records`);
  }
  const durationS = (end - t0) / 1000;
  const pages = runs.reduce((n, r) => n + r.successful_urls, 0);
  const cpuSeconds = cpuSecondsBetween(before, after);
  const cores = coresBetween(before, after);
  const result: OursResult = {
    round,
    pages,
    records,
    duration_s: support.round2(durationS),
    pages_per_s: support.round2(pages / durationS),
    trigger_ms: triggerMs,
    runs,
    valid: problems.length === 0,
    problems,
    worker_memory: memory,
    worker_self_report: workerSelfReport(t0, end),
    cpu_cores: { ...cores, postgres_bench_db_backends: support.round2(pgMs / (after.at - before.at)) },
    cpu_seconds: { ...cpuSeconds, postgres_bench_db_backends: support.round2(pgMs / 1000) },
    worker_cpu_ms_per_page: support.round2(((cpuSeconds.worker ?? 0) * 1000) / pages),
    machine_busy_before: busyBefore,
  };
  process.stderr.write(
    `${result.pages_per_s} pages/s over ${result.duration_s} s, worker peak RSS ${memory.peak_rss_mib} MiB` +
      `${result.valid ? '' : ` (INVALID: ${problems.slice(0, 3).join('; ')})`}\n`,
  );
  return result;
}

// ---------------------------------------------------------------- Crawlee

interface CrawleeResult {
  round: number;
  variant: string;
  storage: string;
  max_concurrency: number;
  min_concurrency: number | null;
  pages: number;
  records: number;
  duration_s: number;
  pages_per_s: number;
  process_wall_s: number;
  peak_rss_mib: number;
  vm_hwm_mib: number;
  requests_failed: number;
  blocked_outbound: string[];
  valid: boolean;
  cpu_cores: Record<string, number>;
  cpu_ms_per_page: number;
  machine_busy_before: number;
}

async function runCrawlee(
  round: number,
  variant: 'disk' | 'memory',
  urlsFile: string,
  site: ChildProcess,
): Promise<CrawleeResult> {
  const busyBefore = args['no-wait'] ? -1 : await support.waitForQuiet();
  const storageDir = join(tmp, `crawlee-${variant}-${round}`);
  const minConcurrency = variant === 'memory' ? MAX_CONCURRENCY : null;
  process.stderr.write(`bench: round ${round}: Crawlee CheerioCrawler (${variant}) … `);
  const logFile = join(tmp, `crawlee-${variant}-${round}.log`);
  const started = performance.now();
  const child = support.spawnLogged(
    [
      'bench/fleet-crawlee.ts',
      urlsFile,
      String(MAX_CONCURRENCY),
      ...(minConcurrency ? [String(minConcurrency)] : []),
    ],
    logFile,
    {
      env: {
        CRAWLEE_STORAGE_DIR: storageDir,
        CRAWLEE_PERSIST_STORAGE: variant === 'disk' ? 'true' : 'false',
      },
      stderr: 'inherit',
    },
  );
  const before = cpuMark({ crawlee: child.pid, site: site.pid });
  const mem = support.memorySampler(child.pid!);
  let after = before;
  // Read the CPU time just before the child exits (its /proc entry goes with it).
  const timer = setInterval(() => {
    if (child.exitCode === null) after = cpuMark({ crawlee: child.pid, site: site.pid });
  }, 200);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearInterval(timer);
  const wall = (performance.now() - started) / 1000;
  const memory = mem.stop();
  const log = readFileSync(logFile, 'utf8');
  const line = log.split('\n').find((l) => l.startsWith('RESULT '));
  if (code !== 0 || !line) throw new Error(`the Crawlee child exited with ${code}:\n${log.slice(-3000)}`);
  const r = JSON.parse(line.slice(7)) as {
    duration_ms: number;
    pages_handled: number;
    records_pushed: number;
    dataset_items: number;
    requests_failed: number;
    vm_hwm_mib: number;
    blocked_outbound: string[];
  };
  rmSync(storageDir, { recursive: true, force: true });
  const cpu = cpuSecondsBetween(before, after);
  const result: CrawleeResult = {
    round,
    variant: `crawlee-${variant}`,
    storage:
      variant === 'disk'
        ? 'default dataset, persisted (one JSON file per record under CRAWLEE_STORAGE_DIR)'
        : 'default dataset in memory (CRAWLEE_PERSIST_STORAGE=false)',
    max_concurrency: MAX_CONCURRENCY,
    min_concurrency: minConcurrency,
    pages: r.pages_handled,
    records: r.dataset_items,
    duration_s: support.round2(r.duration_ms / 1000),
    pages_per_s: support.round2(r.pages_handled / (r.duration_ms / 1000)),
    process_wall_s: support.round2(wall),
    peak_rss_mib: memory.peak_rss_mib,
    vm_hwm_mib: Math.max(memory.vm_hwm_mib, r.vm_hwm_mib),
    requests_failed: r.requests_failed,
    blocked_outbound: r.blocked_outbound,
    valid:
      r.pages_handled === JOBS * PAGES &&
      r.dataset_items === JOBS * PAGES * ITEMS &&
      r.requests_failed === 0 &&
      r.blocked_outbound.length === 0,
    cpu_cores: coresBetween(before, after),
    cpu_ms_per_page: support.round2(((cpu.crawlee ?? 0) * 1000) / Math.max(1, r.pages_handled)),
    machine_busy_before: busyBefore,
  };
  process.stderr.write(
    `${result.pages_per_s} pages/s over ${result.duration_s} s, peak RSS ${result.vm_hwm_mib} MiB${result.valid ? '' : ' (INVALID)'}\n`,
  );
  return result;
}

// ---------------------------------------------------------------- the run

async function main() {
  support.log(`database ${DB_NAME}, Redis prefix ${PREFIX}, ${os.availableParallelism()} cores`);
  const databaseUrl = await support.createBenchDatabase(DB_NAME);
  const site = await support.startSiteProcess('bench/fleet-site.ts', join(tmp, 'site.log'));

  const urls: string[] = [];
  for (let j = 0; j < JOBS; j++) for (let n = 1; n <= PAGES; n++) urls.push(`${site.url}/p/j${j}/${n}`);
  const urlsFile = join(tmp, 'urls.json');
  writeFileSync(urlsFile, JSON.stringify(urls));
  // Build every page once, so neither side pays for the site's first render.
  for (let i = 0; i < urls.length; i += 50)
    await Promise.all(urls.slice(i, i + 50).map((u) => fetch(u).then((r) => r.arrayBuffer())));
  const pageBytes = Buffer.byteLength(await (await fetch(urls[0]!)).text());

  const token = await support.createKeyWithCli(databaseUrl, 'bench-fleet@example.com');
  const { api, worker, base } = await support.startApiAndWorker({
    databaseUrl,
    prefix: PREFIX,
    logLevel: LOG_LEVEL,
    worker: {
      ...(args['host-max-concurrency'] && { HOST_MAX_CONCURRENCY: args['host-max-concurrency'] }),
      BENCH_MEMWATCH_FILE: MEMWATCH_FILE,
      NODE_OPTIONS: [
        support.memwatchFlag(),
        ...WORKER_FLAGS,
        ...(CPU_PROF_DIR ? support.cpuProfFlags(CPU_PROF_DIR, 'worker') : []),
      ].join(' '),
    },
  });
  const call = support.apiClient(base, token);

  const jobIds: string[] = [];
  for (let j = 0; j < JOBS; j++) {
    const r = await call<JobDetail>('POST', '/jobs', {
      name: `fleet j${j}`,
      source: `${site.url}/p/j${j}/[1-${PAGES}]`,
      rate_limit: 6000,
      queries,
      ...(FORMATS.length > 0 && { formats: FORMATS }),
      // Every round fetches and extracts every page: later rounds would otherwise copy the
      // unchanged pages of the first (docs/api.md §20; bench/unchanged.ts measures that path).
      refetch: 'always',
    });
    if (r.status !== 201) throw new Error(`POST /jobs answered ${r.status}: ${JSON.stringify(r.body)}`);
    jobIds.push(r.body.job_id);
  }
  await support.sleep(1000); // let the worker finish connecting

  const ours: OursResult[] = [];
  const crawlee: CrawleeResult[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    ours.push(await runOurs(round, call, jobIds, worker, api, site.child));
    for (const v of CRAWLEE_VARIANTS) crawlee.push(await runCrawlee(round, v, urlsFile, site.child));
  }
  const workerHwm = support.memorySampler(worker.child.pid!).stop().vm_hwm_mib;
  const documents = FORMATS.length > 0 ? await storedDocuments(databaseUrl) : null;
  await support.stopChild(worker.child);
  await support.stopChild(api.child);

  const profile = CPU_PROF_DIR ? support.latestProfile(CPU_PROF_DIR, 'worker') : null;
  const siteStats = (await (await fetch(`${site.url}/__stats`)).json()) as {
    pages: number;
    not_found: number;
  };

  const best = (xs: { pages_per_s: number; valid: boolean }[]) =>
    Math.max(0, ...xs.filter((x) => x.valid).map((x) => x.pages_per_s));
  const oursBest = best(ours);
  const crawleeBest = best(crawlee);
  const summary = {
    benchmark: 'fleet',
    date: new Date().toISOString(),
    machine: support.machineInfo(
      'worker, API, site, PostgreSQL, Redis and Crawlee share these cores; other work on the machine too',
    ),
    settings: {
      jobs: JOBS,
      pages_per_job: PAGES,
      items_per_page: ITEMS,
      page_bytes: pageBytes,
      rate_limit: 6000,
      queries,
      formats: FORMATS,
      scraper_concurrency: 'default (4)',
      run_url_concurrency: 'default (8)',
      host_max_concurrency: args['host-max-concurrency'] || 'default (8)',
      log_level: LOG_LEVEL,
      crawlee_max_concurrency: MAX_CONCURRENCY,
      rounds: ROUNDS,
      cpu_profile: Boolean(CPU_PROF_DIR),
      worker_node_flags: WORKER_FLAGS.join(' ') || null,
    },
    ours,
    crawlee,
    worker_vm_hwm_mib: workerHwm,
    documents,
    site_requests: siteStats,
    profile,
    targets: {
      at_least_as_fast_as_crawlee: oursBest >= crawleeBest,
      worker_memory_under_300_mib: workerHwm < TARGETS.memory_mib,
    },
    all_valid: ours.every((r) => r.valid) && crawlee.every((r) => r.valid),
  };
  console.log(JSON.stringify(summary, null, 2));
  support.writeJsonOut(args['json-out'], summary);

  const yes = (valid: boolean) => (valid ? 'yes' : 'no');
  console.log('');
  support.printTable(
    [
      'round',
      'system',
      'storage',
      'pages',
      'records',
      'seconds',
      'pages/s',
      'peak RSS MiB',
      'CPU ms/page',
      'valid',
    ],
    'rllrrrrrrl',
    [
      ...ours.map((o) => [
        o.round,
        `scrapejobs: 1 worker (SCRAPER_CONCURRENCY 4 × 8 URLs), API, LOG_LEVEL=${LOG_LEVEL}`,
        'PostgreSQL',
        o.pages,
        o.records,
        o.duration_s,
        o.pages_per_s,
        o.worker_memory.vm_hwm_mib,
        o.worker_cpu_ms_per_page,
        yes(o.valid),
      ]),
      ...crawlee.map((c) => [
        c.round,
        `Crawlee CheerioCrawler, maxConcurrency ${c.max_concurrency}${c.min_concurrency ? `, minConcurrency ${c.min_concurrency}` : ''}`,
        c.variant.endsWith('disk') ? 'dataset on disk (default)' : 'dataset in memory',
        c.pages,
        c.records,
        c.duration_s,
        c.pages_per_s,
        c.vm_hwm_mib,
        c.cpu_ms_per_page,
        yes(c.valid),
      ]),
    ],
  );
  console.log('');
  console.log(
    `${summary.machine.nproc} cores (${summary.machine.cpu}), Node ${process.version}; pages of ${pageBytes} bytes with ${ITEMS} items; ` +
      `worker VmHWM over the whole run ${workerHwm} MiB (target < ${TARGETS.memory_mib}), ` +
      `worker Node flags: ${WORKER_FLAGS.join(' ') || 'none'}.`,
  );
  return summary;
}

await support.runBench(async () => (await main()).all_valid);
