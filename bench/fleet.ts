/**
 * Fleet benchmark, end to end: ten jobs of 100 pages each, triggered together through the real
 * API process and run by ONE real scraper-worker process; next to it, in the same run, Crawlee's
 * CheerioCrawler fetching and extracting the same 1,000 pages (bench/fleet-crawlee.ts).
 *
 *   - Site: bench/fleet-site.ts in its own process, ~80 KB pages with 400 list items each,
 *     warmed (every page built once) before anything is measured.
 *   - Jobs: `http://127.0.0.1:<port>/p/j<k>/[1-100]`, rate_limit 6000, three queries: css `h1`,
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
 *       [--no-wait] [--json-out <file>]`
 * Env: BENCH_ADMIN_DATABASE_URL (postgresql://root@127.0.0.1:5432/postgres), REDIS_URL.
 * Prints a JSON summary, then a Markdown table.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { type Proc, startApp } from '../test/support/processes.ts';
import {
  ADMIN_URL,
  benchPrefix,
  cpuMsOf,
  createBenchDatabase,
  createKeyWithCli,
  deleteRedisKeys,
  freePort,
  machineCpu,
  memorySampler,
  REDIS_URL,
  ROOT,
  round2,
  sleep,
  summarizeProfile,
  waitForQuiet,
} from './support.ts';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '1' },
    crawlee: { type: 'string', default: 'disk,memory' },
    'max-concurrency': { type: 'string', default: '32' },
    'log-level': { type: 'string', default: 'info' },
    'cpu-prof': { type: 'string' },
    'json-out': { type: 'string' },
    'no-wait': { type: 'boolean', default: false },
    'worker-node-options': { type: 'string', default: '' },
    'no-production-flags': { type: 'boolean', default: false },
  },
});

/** The Node flags of the worker's production start script: `node <flags> src/main.ts`. */
function productionWorkerFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'apps/scraper-worker/package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const m = /^node\s+(.*?)\s*src\/main\.ts$/.exec(pkg.scripts.start);
  if (!m) throw new Error(`unexpected start script: ${pkg.scripts.start}`);
  return (m[1] ?? '').split(/\s+/).filter(Boolean);
}
const WORKER_FLAGS = [
  ...(args['no-production-flags'] ? [] : productionWorkerFlags()),
  ...args['worker-node-options']!.split(' ').filter(Boolean),
];
const ROUNDS = Number(args.rounds);
const CRAWLEE_VARIANTS = args.crawlee!.split(',').filter(Boolean) as ('disk' | 'memory')[];
const MAX_CONCURRENCY = Number(args['max-concurrency']);
const LOG_LEVEL = args['log-level']!;
const CPU_PROF_DIR = args['cpu-prof'] ? resolve(args['cpu-prof']) : undefined;

const JOBS = 10;
const PAGES = 100;
const ITEMS = 400;
const TARGETS = { memory_mib: 300 };
const DB_NAME = 'scrapejobs_bench_fleet';
const PREFIX = benchPrefix('fleet');

const queries = [
  { name: 'title', type: 'css', query: 'h1' },
  { name: 'links', type: 'css', query: 'li.item > a::attr(href)' },
  { name: 'price', type: 'xpath', query: '//span[@class="price"]' },
];

// ---------------------------------------------------------------- processes and cleanup

const tmp = mkdtempSync(join(os.tmpdir(), 'bench-fleet-'));
const MEMWATCH_FILE = join(tmp, 'worker-memwatch.jsonl');

interface MemSample {
  t: number;
  rss: number;
  heap_total: number;
  heap_used: number;
  external: number;
  array_buffers: number;
  loop_p50_ms: number;
  loop_p99_ms: number;
  loop_max_ms: number;
  live_heap: number | null;
  major_gcs: number;
  gc_ms: number;
}
/** What the worker reported about itself (bench/fleet-memwatch.ts) between two instants. */
function workerSelfReport(from: number, to: number) {
  let lines: MemSample[] = [];
  try {
    lines = readFileSync(MEMWATCH_FILE, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as MemSample)
      .filter((l) => l.t >= from && l.t <= to + 500);
  } catch {
    return null;
  }
  if (!lines.length) return null;
  const peak = lines.reduce((a, b) => (b.rss > a.rss ? b : a));
  const p99s = lines.map((l) => l.loop_p99_ms).sort((a, b) => a - b);
  return {
    samples: lines.length,
    at_peak_rss_mib: {
      rss: peak.rss,
      heap_total: peak.heap_total,
      heap_used: peak.heap_used,
      external: peak.external,
      array_buffers: peak.array_buffers,
      other_native_incl_wasm: round2(peak.rss - peak.heap_total - peak.external),
    },
    max_heap_used_mib: Math.max(...lines.map((l) => l.heap_used)),
    max_live_heap_after_major_gc_mib: Math.max(0, ...lines.map((l) => l.live_heap ?? 0)),
    major_gcs: lines.reduce((n, l) => n + l.major_gcs, 0),
    gc_seconds: round2(lines.reduce((n, l) => n + l.gc_ms, 0) / 1000),
    event_loop_delay_ms: {
      median_of_interval_p99: p99s[Math.floor(p99s.length / 2)]!,
      max: Math.max(...lines.map((l) => l.loop_max_ms)),
    },
  };
}
const children = new Set<ChildProcess>();
const procs = new Set<Proc>();
let dropDb: (() => Promise<void>) | undefined;

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
  children.delete(child);
}
async function stopProc(p: Proc): Promise<void> {
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 20_000);
  await p.kill('SIGTERM');
  clearTimeout(timer);
  procs.delete(p);
}

let cleanedUp = false;
async function cleanup(): Promise<void> {
  if (cleanedUp) return;
  cleanedUp = true;
  await Promise.allSettled([...procs].map(stopProc));
  await Promise.allSettled([...children].map(stopChild));
  if (dropDb)
    await dropDb().catch((err) => console.error(`bench: could not drop ${DB_NAME}: ${err.message}`));
  await deleteRedisKeys(PREFIX).catch((err) => console.error(`bench: Redis cleanup failed: ${err.message}`));
  rmSync(tmp, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`bench: ${signal}, cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

async function startSiteProcess(): Promise<{ child: ChildProcess; url: string }> {
  const logFile = join(tmp, 'site.log');
  const child = spawn(process.execPath, ['bench/fleet-site.ts'], {
    cwd: ROOT,
    stdio: ['ignore', openSync(logFile, 'w'), 'inherit'],
  });
  children.add(child);
  const deadline = Date.now() + 15_000;
  for (;;) {
    const m = readFileSync(logFile, 'utf8').match(/listening (\d+)/);
    if (m) return { child, url: `http://127.0.0.1:${m[1]}` };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('the site did not start');
    await sleep(100);
  }
}

// ---------------------------------------------------------------- CPU accounting

interface CpuMark {
  at: number;
  machine: ReturnType<typeof machineCpu>;
  pids: Map<string, number>;
}
function cpuMark(pids: Record<string, number | undefined>): CpuMark {
  const m = new Map<string, number>();
  for (const [name, pid] of Object.entries(pids)) if (pid) m.set(name, cpuMsOf(pid) ?? 0);
  return { at: performance.now(), machine: machineCpu(), pids: m };
}
/**
 * CPU time of the PostgreSQL backends serving the bench database: they come and go with the
 * pools, so they are looked up every 500 ms; a backend seen first after the start counts from 0.
 */
async function postgresTracker() {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  const seen = new Map<number, { first: number; last: number }>();
  const poll = async (initial: boolean) => {
    const r = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
      DB_NAME,
    ]);
    for (const { pid } of r.rows) {
      const ms = cpuMsOf(pid);
      if (ms === null) continue;
      const entry = seen.get(pid);
      if (entry) entry.last = ms;
      else seen.set(pid, { first: initial ? ms : 0, last: ms });
    }
  };
  await poll(true);
  let running = true;
  const loop = (async () => {
    while (running) {
      await sleep(500);
      await poll(false).catch(() => {});
    }
  })();
  return {
    async stop(): Promise<number> {
      running = false;
      await loop;
      await poll(false).catch(() => {});
      await client.end();
      let ms = 0;
      for (const { first, last } of seen.values()) ms += last - first;
      return ms;
    },
  };
}
/** Cores used on average between two marks, per watched process and for the whole machine. */
function coresBetween(a: CpuMark, b: CpuMark) {
  const wall = b.at - a.at;
  const out: Record<string, number> = {};
  for (const [name, ms] of b.pids) out[name] = round2((ms - (a.pids.get(name) ?? 0)) / wall);
  out.machine = round2((b.machine.busy - a.machine.busy) / wall);
  return out;
}
function cpuSecondsBetween(a: CpuMark, b: CpuMark) {
  const out: Record<string, number> = {};
  for (const [name, ms] of b.pids) out[name] = round2((ms - (a.pids.get(name) ?? 0)) / 1000);
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

function apiClient(base: string, token: string) {
  const call = async <T>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  };
  return call;
}

// ---------------------------------------------------------------- ours

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
  call: ReturnType<typeof apiClient>,
  jobIds: string[],
  worker: Proc,
  api: Proc,
  site: ChildProcess,
): Promise<OursResult> {
  const busyBefore = args['no-wait'] ? -1 : await waitForQuiet();
  process.stderr.write(`bench: round ${round}: ours (10 jobs × ${PAGES} pages, one worker) … `);
  const pgCpu = await postgresTracker();
  const watch = () => ({
    worker: worker.child.pid,
    api: api.child.pid,
    site: site.pid,
    bench: process.pid,
  });
  const before = cpuMark(watch());
  const mem = memorySampler(worker.child.pid!);
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
    await sleep(200);
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
    if (run.results_count !== PAGES * ITEMS) problems.push(`j${k}: ${run.results_count} records`);
  }
  const durationS = (end - t0) / 1000;
  const pages = runs.reduce((n, r) => n + r.successful_urls, 0);
  const cpuSeconds = cpuSecondsBetween(before, after);
  const cores = coresBetween(before, after);
  const result: OursResult = {
    round,
    pages,
    records,
    duration_s: round2(durationS),
    pages_per_s: round2(pages / durationS),
    trigger_ms: triggerMs,
    runs,
    valid: problems.length === 0,
    problems,
    worker_memory: memory,
    worker_self_report: workerSelfReport(t0, end),
    cpu_cores: { ...cores, postgres_bench_db_backends: round2(pgMs / (after.at - before.at)) },
    cpu_seconds: { ...cpuSeconds, postgres_bench_db_backends: round2(pgMs / 1000) },
    worker_cpu_ms_per_page: round2(((cpuSeconds.worker ?? 0) * 1000) / pages),
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
  const busyBefore = args['no-wait'] ? -1 : await waitForQuiet();
  const storageDir = join(tmp, `crawlee-${variant}-${round}`);
  const minConcurrency = variant === 'memory' ? MAX_CONCURRENCY : null;
  process.stderr.write(`bench: round ${round}: Crawlee CheerioCrawler (${variant}) … `);
  const logFile = join(tmp, `crawlee-${variant}-${round}.log`);
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      'bench/fleet-crawlee.ts',
      urlsFile,
      String(MAX_CONCURRENCY),
      ...(minConcurrency ? [String(minConcurrency)] : []),
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        CRAWLEE_STORAGE_DIR: storageDir,
        CRAWLEE_PERSIST_STORAGE: variant === 'disk' ? 'true' : 'false',
      },
      stdio: ['ignore', openSync(logFile, 'w'), 'inherit'],
    },
  );
  children.add(child);
  const before = cpuMark({ crawlee: child.pid, site: site.pid });
  const mem = memorySampler(child.pid!);
  let after = before;
  // Read the CPU time just before the child exits (its /proc entry goes with it).
  const timer = setInterval(() => {
    if (child.exitCode === null) after = cpuMark({ crawlee: child.pid, site: site.pid });
  }, 200);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearInterval(timer);
  const wall = (performance.now() - started) / 1000;
  const memory = mem.stop();
  children.delete(child);
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
    duration_s: round2(r.duration_ms / 1000),
    pages_per_s: round2(r.pages_handled / (r.duration_ms / 1000)),
    process_wall_s: round2(wall),
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
    cpu_ms_per_page: round2(((cpu.crawlee ?? 0) * 1000) / Math.max(1, r.pages_handled)),
    machine_busy_before: busyBefore,
  };
  process.stderr.write(
    `${result.pages_per_s} pages/s over ${result.duration_s} s, peak RSS ${result.vm_hwm_mib} MiB${result.valid ? '' : ' (INVALID)'}\n`,
  );
  return result;
}

// ---------------------------------------------------------------- the run

async function main() {
  process.stderr.write(
    `bench: database ${DB_NAME}, Redis prefix ${PREFIX}, ${os.availableParallelism()} cores\n`,
  );
  const database = await createBenchDatabase(DB_NAME);
  dropDb = database.drop;
  const site = await startSiteProcess();

  const urls: string[] = [];
  for (let j = 0; j < JOBS; j++) for (let n = 1; n <= PAGES; n++) urls.push(`${site.url}/p/j${j}/${n}`);
  const urlsFile = join(tmp, 'urls.json');
  writeFileSync(urlsFile, JSON.stringify(urls));
  // Build every page once, so neither side pays for the site's first render.
  for (let i = 0; i < urls.length; i += 50)
    await Promise.all(urls.slice(i, i + 50).map((u) => fetch(u).then((r) => r.arrayBuffer())));
  const pageBytes = Buffer.byteLength(await (await fetch(urls[0]!)).text());

  const token = await createKeyWithCli(database.url, 'bench-fleet@example.com');
  const port = await freePort();
  const common = {
    DATABASE_URL: database.url,
    REDIS_URL,
    QUEUE_PREFIX: PREFIX,
    LOG_LEVEL,
    ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
  };
  const api = startApp('api', { ...common, PORT: String(port), API_RATE_LIMIT_PER_MINUTE: '1000000' });
  procs.add(api);
  if (CPU_PROF_DIR) mkdirSync(CPU_PROF_DIR, { recursive: true });
  const worker = startApp('scraper-worker', {
    ...common,
    BENCH_MEMWATCH_FILE: MEMWATCH_FILE,
    NODE_OPTIONS: [
      `--import=${join(ROOT, 'bench/fleet-memwatch.ts')}`,
      ...WORKER_FLAGS,
      ...(CPU_PROF_DIR
        ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`, `--cpu-prof-name=worker-${Date.now()}.cpuprofile`]
        : []),
    ].join(' '),
  });
  procs.add(worker);
  // The worker logs its start at info; at a quieter LOG_LEVEL give it a few seconds instead.
  if (['info', 'debug', 'trace'].includes(LOG_LEVEL))
    await worker.waitForLog((l) => l.msg === 'scraper worker started', 30_000);
  else await sleep(3000);
  const deadline = Date.now() + 30_000;
  while (
    (await fetch(`http://127.0.0.1:${port}/ready`).then(
      (r) => r.status,
      () => 0,
    )) !== 200
  ) {
    if (Date.now() > deadline) throw new Error('the API did not become ready');
    await sleep(200);
  }
  const call = apiClient(`http://127.0.0.1:${port}`, token);

  const jobIds: string[] = [];
  for (let j = 0; j < JOBS; j++) {
    const r = await call<JobDetail>('POST', '/jobs', {
      name: `fleet j${j}`,
      source: `${site.url}/p/j${j}/[1-${PAGES}]`,
      rate_limit: 6000,
      queries,
    });
    if (r.status !== 201) throw new Error(`POST /jobs answered ${r.status}: ${JSON.stringify(r.body)}`);
    jobIds.push(r.body.job_id);
  }
  await sleep(1000); // let the worker finish connecting

  const ours: OursResult[] = [];
  const crawlee: CrawleeResult[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    ours.push(await runOurs(round, call, jobIds, worker, api, site.child));
    for (const v of CRAWLEE_VARIANTS) crawlee.push(await runCrawlee(round, v, urlsFile, site.child));
  }
  const workerHwm = memorySampler(worker.child.pid!).stop().vm_hwm_mib;
  await stopProc(worker);
  await stopProc(api);

  let profile: ReturnType<typeof summarizeProfile> | null = null;
  if (CPU_PROF_DIR) {
    const files = readdirSync(CPU_PROF_DIR).filter(
      (f) => f.startsWith('worker-') && f.endsWith('.cpuprofile'),
    );
    if (files.length) profile = summarizeProfile(join(CPU_PROF_DIR, files.sort().at(-1)!));
  }
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
    machine: {
      nproc: os.availableParallelism(),
      cpu: os.cpus()[0]?.model ?? 'unknown',
      memory_gib: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      loadavg_at_end: os.loadavg().map(round2),
      note: 'worker, API, site, PostgreSQL, Redis and Crawlee share these cores; other work on the machine too',
    },
    settings: {
      jobs: JOBS,
      pages_per_job: PAGES,
      items_per_page: ITEMS,
      page_bytes: pageBytes,
      rate_limit: 6000,
      queries,
      scraper_concurrency: 'default (4)',
      run_url_concurrency: 'default (8)',
      log_level: LOG_LEVEL,
      crawlee_max_concurrency: MAX_CONCURRENCY,
      rounds: ROUNDS,
      cpu_profile: Boolean(CPU_PROF_DIR),
      worker_node_flags: WORKER_FLAGS.join(' ') || null,
    },
    ours,
    crawlee,
    worker_vm_hwm_mib: workerHwm,
    site_requests: siteStats,
    profile,
    targets: {
      at_least_as_fast_as_crawlee: oursBest >= crawleeBest,
      worker_memory_under_300_mib: workerHwm < TARGETS.memory_mib,
    },
    all_valid: ours.every((r) => r.valid) && crawlee.every((r) => r.valid),
  };
  console.log(JSON.stringify(summary, null, 2));
  if (args['json-out']) {
    mkdirSync(resolve(args['json-out'], '..'), { recursive: true });
    writeFileSync(resolve(args['json-out']), `${JSON.stringify(summary, null, 2)}\n`);
  }

  console.log('');
  console.log(
    '| round | system | storage | pages | records | seconds | pages/s | peak RSS MiB | CPU ms/page | valid |',
  );
  console.log('|---:|---|---|---:|---:|---:|---:|---:|---:|---|');
  for (const o of ours)
    console.log(
      `| ${o.round} | scrapejobs: 1 worker (SCRAPER_CONCURRENCY 4 × 8 URLs), API, LOG_LEVEL=${LOG_LEVEL} | PostgreSQL | ${o.pages} | ${o.records} | ${o.duration_s} | ${o.pages_per_s} | ${o.worker_memory.vm_hwm_mib} | ${o.worker_cpu_ms_per_page} | ${o.valid ? 'yes' : 'no'} |`,
    );
  for (const c of crawlee)
    console.log(
      `| ${c.round} | Crawlee CheerioCrawler, maxConcurrency ${c.max_concurrency}${c.min_concurrency ? `, minConcurrency ${c.min_concurrency}` : ''} | ${c.variant.endsWith('disk') ? 'dataset on disk (default)' : 'dataset in memory'} | ${c.pages} | ${c.records} | ${c.duration_s} | ${c.pages_per_s} | ${c.vm_hwm_mib} | ${c.cpu_ms_per_page} | ${c.valid ? 'yes' : 'no'} |`,
    );
  console.log('');
  console.log(
    `${summary.machine.nproc} cores (${summary.machine.cpu}), Node ${process.version}; pages of ${pageBytes} bytes with ${ITEMS} items; ` +
      `worker VmHWM over the whole run ${workerHwm} MiB (target < ${TARGETS.memory_mib}), ` +
      `worker Node flags: ${WORKER_FLAGS.join(' ') || 'none'}.`,
  );
  return summary;
}

try {
  const summary = await main();
  process.exitCode = summary.all_valid ? 0 : 1;
} catch (err) {
  console.error(`bench: ${(err as Error).stack ?? err}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
