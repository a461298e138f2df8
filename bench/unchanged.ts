/**
 * Unchanged-pages benchmark (issue 30, docs/api.md §20): the second run of 1,000 unchanged 80 KB
 * pages, with ETags and without validators, beside `refetch: always`, in the same sitting.
 *
 *   - Site: bench/unchanged-site.ts in its own process, bench/fleet-site.ts's catalogue page
 *     (~80 KB, 400 list items) under `/etag/…` (a strong ETag, 304 to a matching If-None-Match)
 *     and `/plain/…` (no validators). It counts the HTTP bytes it writes for pages (status line,
 *     headers, body), the requests by status and the TCP connections it accepted: the bytes the
 *     worker received.
 *   - Variants, each with its own ten jobs of 100 pages (`/<site>/<letter><k>/[1-100]`, rate_limit
 *     6000, bench/fleet.ts's three queries, 400 records a page):
 *       (a) `etag`: ETags, `refetch: conditional` (the default);
 *       (b) `plain`: no validators, `refetch: conditional` (a 200 with the same body is copied);
 *       (c) `always`: ETags, `refetch: always`: the baseline, fetched and extracted in full;
 *       (d) `changed`: as (a) with `change_tracking: {key: ["links"]}`; before its second run
 *           --changed (1 %) of its pages change (two items repriced, one added).
 *     Run 1 of every variant, then run 2 of (a), (b), (c), then the change and run 2 of (d);
 *     every run is measured, each alone, after waiting for a quiet machine.
 *   - Ours: one API and one scraper worker process (support.startApiAndWorker) at their defaults
 *     (4 runs × 8 URLs, 8 requests in flight to the site), the worker with its production Node
 *     flags. The clock runs from the first POST /jobs/{id}/run to the latest `finished_at`.
 *     Worker CPU: utime + stime of its process (/proc/<pid>/stat, threads included; its main
 *     thread alone from /proc/<pid>/task/<pid>/stat, and its live threads by kind: extraction,
 *     V8's helpers (garbage collection, compilation), libuv's pool) from before the triggers until
 *     GET /jobs/status shows none of the ten jobs running; PostgreSQL CPU: the
 *     backends serving the bench database (as bench/fleet.ts). Both are also read again once
 *     every run has its `health` (and, for (d), its `changes`): the runs' analysis included.
 *     "Other work" is the machine's busy cores (/proc/stat) over the same window minus the
 *     worker, the API, the site, the bench and those backends: Redis, and anything else running.
 *   - Checks: every run `success` with 100 successful URLs; run 1: 40,000 records and no URL
 *     unchanged; run 2: `results_count` that of run 1 (plus the added items in (d)), every URL
 *     item `unchanged: true` with status 304 in (a), 200 in (b), `false` with 200 in (c); in (d)
 *     exactly the changed pages `unchanged: false`, and GET …/changes lists exactly the changed
 *     and added items. The records of run 2 (downloaded as jsonl, `scraped_at` left out, sorted:
 *     pages are stored in the order they were fetched) must equal run 1's in (a), (b) and (c).
 *
 * Targets (issue 30): with ETags ≥ 10× fewer bytes and ≥ 5× less worker CPU per page than
 * `refetch: always`; without validators ≥ 3× less worker CPU per page; 1 % changed pages give
 * exactly those changes.
 *
 * Own database (`scrapejobs_bench_unchanged`, dropped and re-created), own Redis prefix,
 * everything cleaned up at the end. `--cpu-prof <dir>` profiles the worker's main thread over its
 * whole life (NODE_OPTIONS=--cpu-prof) and, for each measured run, summarizes the samples taken
 * between its first trigger and the end of its runs (a `slice-<variant>-<run>-….cpuprofile` is
 * written for each): where the worker's JavaScript spent that run. `--variants` picks the
 * variants and their order (e.g. `always,plain,etag`; (d) always comes last).
 *
 * Run: `pnpm exec node bench/unchanged.ts [--variants etag,plain,always,changed] [--changed 0.01]
 *       [--log-level info] [--cpu-prof <dir>] [--no-production-flags]
 *       [--worker-node-options=…] [--no-wait] [--json-out <file>]`
 * Env: BENCH_ADMIN_DATABASE_URL (postgresql://root@127.0.0.1:5432/postgres), REDIS_URL.
 * Prints a JSON summary, then Markdown tables.
 */
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { Proc } from '../test/support/processes.ts';
import * as support from './support.ts';
import { ADDED_ITEMS, CHANGED_ITEMS, itemLink } from './unchanged-site.ts';

const args = support.parseOptions({
  variants: 'etag,plain,always,changed',
  changed: '0.01',
  'log-level': 'info',
  'cpu-prof': undefined,
  'json-out': undefined,
  'no-wait': false,
  'worker-node-options': '',
  'no-production-flags': false,
});

const WORKER_FLAGS = [
  ...(args['no-production-flags'] ? [] : support.productionNodeFlags('scraper-worker')),
  ...args['worker-node-options'].split(' ').filter(Boolean),
];
const LOG_LEVEL = args['log-level'];
const CPU_PROF_DIR = support.profileDir(args['cpu-prof']);
const CHANGED_SHARE = Number(args.changed);

const JOBS = 10;
const PAGES = 100;
const ITEMS = 400;
const TOTAL_PAGES = JOBS * PAGES;
const TARGETS = { etag_bytes: 10, etag_worker_cpu: 5, plain_worker_cpu: 3 };
const DB_NAME = 'scrapejobs_bench_unchanged';
const PREFIX = support.benchPrefix('unchanged');
const queries = [
  { name: 'title', type: 'css', query: 'h1' },
  { name: 'links', type: 'css', query: 'li.item > a::attr(href)' },
  { name: 'price', type: 'xpath', query: '//span[@class="price"]' },
];

type VariantName = 'etag' | 'plain' | 'always' | 'changed';
interface Variant {
  name: VariantName;
  /** The jobs' part of the site's paths: `<letter><k>`. */
  letter: string;
  label: string;
  site: 'etag' | 'plain';
  refetch: 'conditional' | 'always';
  tracking: boolean;
  /** What every URL item of run 2 shows; (d) is checked page by page instead. */
  second: { unchanged: boolean; http_status: number } | null;
}
const VARIANTS: Variant[] = [
  {
    name: 'etag',
    letter: 'a',
    label: '(a) ETags, refetch conditional',
    site: 'etag',
    refetch: 'conditional',
    tracking: false,
    second: { unchanged: true, http_status: 304 },
  },
  {
    name: 'plain',
    letter: 'b',
    label: '(b) no validators, refetch conditional',
    site: 'plain',
    refetch: 'conditional',
    tracking: false,
    second: { unchanged: true, http_status: 200 },
  },
  {
    name: 'always',
    letter: 'c',
    label: '(c) ETags, refetch always (baseline)',
    site: 'etag',
    refetch: 'always',
    tracking: false,
    second: { unchanged: false, http_status: 200 },
  },
  {
    name: 'changed',
    letter: 'd',
    label: `(d) as (a), ${CHANGED_SHARE * 100} % of pages changed, change tracking`,
    site: 'etag',
    refetch: 'conditional',
    tracking: true,
    second: null,
  },
];
/** The variants to run, in the order given: run 1 of each, then run 2 of each. */
const SELECTED = args.variants.split(',').filter(Boolean);
for (const v of SELECTED)
  if (!VARIANTS.some((x) => x.name === v)) throw new Error(`unknown variant ${v} (--variants)`);
if (!(CHANGED_SHARE > 0 && CHANGED_SHARE <= 1)) throw new Error('0 < --changed ≤ 1');

const tmp = support.tempDir('unchanged');

// ---------------------------------------------------------------- processes

/** The site's path of page `n` of job `k` of a variant. */
const pathOf = (v: Variant, k: number, n: number) => `/${v.site}/${v.letter}${k}/${n}`;

interface SiteStats {
  connections: number;
  requests: Record<string, number>;
  conditional_requests: number;
  bytes_sent: number;
  body_bytes_sent: number;
}

/** Calls a control path of the site: GET /__stats, else a POST. */
async function siteControl<T>(siteUrl: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${siteUrl}${path}`, {
    method: path === '/__stats' ? 'GET' : 'POST',
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (res.status !== 200) throw new Error(`the site answered ${res.status} to ${path}`);
  return (await res.json()) as T;
}

/** Builds pages in the site (each is built on its first request), so no run pays for that. */
async function warm(siteUrl: string, paths: readonly string[]): Promise<void> {
  for (let i = 0; i < paths.length; i += 50)
    await Promise.all(
      paths.slice(i, i + 50).map((p) => fetch(`${siteUrl}${p}`).then((r) => r.arrayBuffer())),
    );
}

/** The worker's Node flags: production, extra, and a CPU profile of every thread with --cpu-prof. */
const workerNodeOptions = () =>
  [...WORKER_FLAGS, ...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : [])].join(' ');

// ---------------------------------------------------------------- CPU accounting

/** CPU time (user + system, ms) of one thread of a process, from /proc; 0 once it has ended. */
function threadCpuMs(pid: number, tid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // USER_HZ ticks
  } catch {
    return 0;
  }
}

/** The worker's threads by the name Node and V8 give them (/proc/<pid>/task/<tid>/comm). */
const THREAD_KINDS: Record<string, string> = {
  WorkerThread: 'extraction_threads',
  V8Worker: 'v8_helper_threads',
  'libuv-worker': 'libuv_threads',
};

/**
 * CPU time (ms) of a process's live threads by kind: extraction threads, V8's helpers (garbage
 * collection, compilation), libuv's pool; a thread that has ended is not counted.
 */
function threadKindsCpuMs(pid: number): Record<string, number> {
  const out = Object.fromEntries(Object.values(THREAD_KINDS).map((kind) => [kind, 0]));
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let name: string;
    try {
      name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    const kind = THREAD_KINDS[name];
    if (kind) out[kind]! += threadCpuMs(pid, Number(tid));
  }
  return out;
}

/**
 * CPU time (ms) since the start of each named process (threads included), of the worker's main
 * thread alone (its JavaScript; the rest is extraction threads, GC helpers and libuv's pool), of
 * the PostgreSQL backends, and of the whole machine.
 */
async function cpuMeter(pids: () => Record<string, number | undefined>) {
  const now = () => {
    const out: Record<string, number> = {};
    for (const [name, pid] of Object.entries(pids())) out[name] = pid ? (support.cpuMsOf(pid) ?? 0) : 0;
    const worker = pids().worker;
    if (worker) {
      out.worker_main_thread = threadCpuMs(worker, worker);
      for (const [kind, ms] of Object.entries(threadKindsCpuMs(worker))) out[`worker_${kind}`] = ms;
    }
    out.machine = support.machineCpu().busy;
    return out;
  };
  const postgres = await support.postgresTracker(DB_NAME);
  const start = now();
  const since = (at: Record<string, number>, pgMs: number) => {
    const out: Record<string, number> = { postgres: Math.round(pgMs) };
    for (const [name, ms] of Object.entries(at)) out[name] = Math.round(ms - (start[name] ?? 0));
    return out;
  };
  return {
    read: async () => since(now(), await postgres.read()),
    stop: async () => since(now(), await postgres.stop()),
  };
}

// ---------------------------------------------------------------- the API

type Call = ReturnType<typeof support.apiClient>;
interface RunRow {
  run_id: string;
  status: string;
  finished_at: string | null;
  results_count: number;
  successful_urls: number;
  failed_urls: number;
  error: unknown;
  health: unknown;
  changes: unknown;
}
interface UrlItem {
  url: string;
  status: string;
  http_status: number | null;
  unchanged: boolean;
}
interface Change {
  type: 'added' | 'removed' | 'changed';
  key: { links?: string };
  changed_fields: string[];
}

/** Every item of a paged list (`limit=1000`, following `next_cursor`). */
async function allPages<T>(call: Call, path: string, field: string): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const r = await call<Record<string, unknown>>(
      'GET',
      `${path}${sep}limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
    );
    if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
    out.push(...(r.body[field] as T[]));
    cursor = r.body.next_cursor as string | null;
  } while (cursor);
  return out;
}

/** A digest of a run's records as the jsonl download gives them, without `scraped_at`, in any order; their count. */
async function recordsDigest(ctx: Context, jobId: string, runId: string) {
  const res = await fetch(`${ctx.base}/jobs/${jobId}/download?format=jsonl&run_id=${runId}`, {
    headers: { authorization: `Bearer ${ctx.token}` },
  });
  if (res.status !== 200) throw new Error(`download of ${runId} answered ${res.status}`);
  // A run stores its pages in the order they were fetched, which differs from run to run.
  const lines: string[] = [];
  for (const line of (await res.text()).split('\n')) {
    if (!line) continue;
    const { scraped_at: _, ...rest } = JSON.parse(line) as Record<string, unknown>;
    lines.push(JSON.stringify(rest));
  }
  const hash = createHash('sha256');
  for (const line of lines.sort()) hash.update(`${line}\n`);
  return { digest: hash.digest('hex'), count: lines.length };
}

// ---------------------------------------------------------------- one measured run

interface Context {
  call: Call;
  base: string;
  token: string;
  siteUrl: string;
  api: Proc;
  worker: Proc;
  site: ChildProcess;
  jobs: Map<VariantName, string[]>;
}

interface Measured {
  variant: VariantName;
  run: 1 | 2;
  started_at: string;
  finished_at: string;
  pages: number;
  records: number;
  duration_s: number;
  pages_per_s: number;
  site: SiteStats;
  bytes_per_page: number;
  cpu_ms: Record<string, number>;
  /** Cores busy on the machine from the first trigger to the runs' end, and of them the work of others. */
  cores: { machine: number; others: number };
  worker_cpu_ms_per_page: number;
  worker_main_thread_cpu_ms_per_page: number;
  /** The rest of the worker's CPU a page, by kind of thread. */
  worker_threads_cpu_ms_per_page: Record<string, number>;
  postgres_cpu_ms_per_page: number;
  with_analysis: { wait_ms: number; worker_cpu_ms_per_page: number; postgres_cpu_ms_per_page: number };
  url_items: { unchanged: number; http_status: Record<string, number> };
  runs: { job: string; run_id: string; status: string; results_count: number; successful_urls: number }[];
  problems: string[];
  valid: boolean;
  machine_busy_before: number;
  /** From the first trigger to the end of the runs, in µs of the monotonic clock (for --cpu-prof). */
  window_us: [number, number];
  profile?: ReturnType<typeof support.latestProfile>;
}

/** What the runs must show: each job's records, and each URL item by its path. */
interface Expected {
  results: (k: number) => number;
  item: (k: number, path: string) => { unchanged: boolean; http_status: number };
}
const FETCHED = { unchanged: false, http_status: 200 };

/**
 * Triggers the jobs together and waits until none is running (`onEnded` is called then), then
 * until every run has been analysed (`health`, and `changes` for a tracked job).
 */
async function runJobs(ctx: Context, jobIds: string[], tracking: boolean, onEnded: () => Promise<void>) {
  const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
  const window: [number, number] = [monotonicUs(), 0];
  const t0 = Date.now();
  const triggers = await Promise.all(
    jobIds.map((id) => ctx.call<{ run_id: string }>('POST', `/jobs/${id}/run`)),
  );
  const problems = triggers.flatMap((t, k) =>
    t.status === 202 ? [] : [`POST /jobs/${jobIds[k]}/run answered ${t.status}`],
  );
  const runIds = triggers.map((t) => t.body.run_id);
  const mine = new Set(jobIds);
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    await support.sleep(200);
    const list = await ctx.call<{ jobs: { job_id: string; status: string }[] }>(
      'GET',
      '/jobs/status?limit=100',
    );
    if (list.status !== 200) throw new Error(`GET /jobs/status answered ${list.status}`);
    if (!list.body.jobs.some((j) => mine.has(j.job_id) && j.status === 'running')) break;
    if (Date.now() > deadline) throw new Error('the runs did not end within 15 minutes');
  }
  window[1] = monotonicUs();
  await onEnded();
  const endedAt = Date.now();
  for (;;) {
    const rows = await Promise.all(
      jobIds.map(async (id, k) => (await ctx.call<RunRow>('GET', `/jobs/${id}/runs/${runIds[k]}`)).body),
    );
    if (rows.every((r) => r.health !== null && (!tracking || r.changes !== null)))
      return { t0, window, runIds, rows, problems, analysisWaitMs: Date.now() - endedAt };
    if (Date.now() > deadline) throw new Error('the runs were not analysed within 15 minutes');
    await support.sleep(100);
  }
}

/** Checks the runs and their URL items against `expected`; counts the items' statuses. */
async function checkRuns(
  ctx: Context,
  v: Variant,
  runIds: string[],
  rows: RunRow[],
  expected: Expected,
): Promise<{ problems: string[]; url_items: Measured['url_items'] }> {
  const jobIds = ctx.jobs.get(v.name)!;
  const problems: string[] = [];
  const statuses: Record<string, number> = {};
  let unchanged = 0;
  for (const [k, row] of rows.entries()) {
    const job = `${v.letter}${k}`;
    if (row.status !== 'success') problems.push(`${job}: ${row.status} ${JSON.stringify(row.error)}`);
    if (row.successful_urls !== PAGES) problems.push(`${job}: ${row.successful_urls} successful URLs`);
    if (row.results_count !== expected.results(k))
      problems.push(`${job}: ${row.results_count} records, expected ${expected.results(k)}`);
    const items = await allPages<UrlItem>(ctx.call, `/jobs/${jobIds[k]}/runs/${runIds[k]}/urls`, 'urls');
    if (items.length !== PAGES) problems.push(`${job}: ${items.length} URL items`);
    for (const item of items) {
      const path = new URL(item.url).pathname;
      const want = expected.item(k, path);
      statuses[String(item.http_status)] = (statuses[String(item.http_status)] ?? 0) + 1;
      if (item.unchanged) unchanged++;
      if (
        item.status !== 'success' ||
        item.unchanged !== want.unchanged ||
        item.http_status !== want.http_status
      )
        problems.push(
          `${path}: ${item.status} ${item.http_status} unchanged ${item.unchanged}, ` +
            `expected ${want.http_status} unchanged ${want.unchanged}`,
        );
    }
  }
  return { problems, url_items: { unchanged, http_status: statuses } };
}

/** The machine's busy cores over `wallMs`, and those not used by the bench's processes (Redis included). */
function coresOf(cpu: Record<string, number>, wallMs: number) {
  const ours = ['worker', 'api', 'site', 'bench', 'postgres'].reduce((n, k) => n + (cpu[k] ?? 0), 0);
  const machine = cpu.machine ?? 0;
  return { machine: support.round2(machine / wallMs), others: support.round2((machine - ours) / wallMs) };
}

/** One run of a variant's ten jobs, alone on a quiet machine: its figures and its checks. */
async function measure(
  ctx: Context,
  v: Variant,
  run: 1 | 2,
  expected: Expected,
): Promise<{ result: Measured; runIds: string[] }> {
  const busyBefore = args['no-wait'] ? -1 : await support.waitForQuiet();
  process.stderr.write(`bench: ${v.label}, run ${run} … `);
  await siteControl(ctx.siteUrl, '/__reset');
  const meter = await cpuMeter(() => ({
    worker: ctx.worker.child.pid,
    api: ctx.api.child.pid,
    site: ctx.site.pid,
    bench: process.pid,
  }));
  let cpu: Record<string, number> = {};
  const ran = await runJobs(ctx, ctx.jobs.get(v.name)!, v.tracking, async () => {
    cpu = await meter.read();
  });
  const analysed = await meter.stop();
  const site = await siteControl<SiteStats>(ctx.siteUrl, '/__stats');
  const checked = await checkRuns(ctx, v, ran.runIds, ran.rows, expected);
  const problems = [...ran.problems, ...checked.problems];
  const end = Math.max(...ran.rows.map((r) => new Date(r.finished_at ?? 0).getTime()));
  const pages = ran.rows.reduce((n, r) => n + r.successful_urls, 0);
  const perPage = (ms = 0) => support.round2(ms / Math.max(1, pages));
  const durationS = (end - ran.t0) / 1000;
  const result: Measured = {
    variant: v.name,
    run,
    started_at: new Date(ran.t0).toISOString(),
    finished_at: new Date(end).toISOString(),
    pages,
    records: ran.rows.reduce((n, r) => n + r.results_count, 0),
    duration_s: support.round2(durationS),
    pages_per_s: support.round2(pages / durationS),
    site,
    bytes_per_page: Math.round(site.bytes_sent / Math.max(1, pages)),
    cpu_ms: cpu,
    cores: coresOf(cpu, (ran.window[1] - ran.window[0]) / 1000),
    worker_cpu_ms_per_page: perPage(cpu.worker),
    worker_main_thread_cpu_ms_per_page: perPage(cpu.worker_main_thread),
    worker_threads_cpu_ms_per_page: Object.fromEntries(
      Object.values(THREAD_KINDS).map((kind) => [kind, perPage(cpu[`worker_${kind}`])]),
    ),
    postgres_cpu_ms_per_page: perPage(cpu.postgres),
    with_analysis: {
      wait_ms: ran.analysisWaitMs,
      worker_cpu_ms_per_page: perPage(analysed.worker),
      postgres_cpu_ms_per_page: perPage(analysed.postgres),
    },
    url_items: checked.url_items,
    runs: ran.rows.map((r, k) => ({
      job: `${v.letter}${k}`,
      run_id: r.run_id,
      status: r.status,
      results_count: r.results_count,
      successful_urls: r.successful_urls,
    })),
    problems,
    valid: problems.length === 0,
    machine_busy_before: busyBefore,
    window_us: ran.window,
  };
  const invalid = problems.length
    ? ` (INVALID: ${problems.slice(0, 3).join('; ')}${problems.length > 3 ? ' …' : ''})`
    : '';
  process.stderr.write(
    `${result.pages_per_s} pages/s, ${(site.bytes_sent / 1e6).toFixed(2)} MB sent, ` +
      `worker ${result.worker_cpu_ms_per_page} ms/page${invalid}\n`,
  );
  return { result, runIds: ran.runIds };
}

interface CpuProfile {
  nodes: unknown[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/**
 * The worker's main-thread profile (Node names it `CPU.<date>.<pid>.0.<n>.cpuprofile`) cut to each
 * run's window, summarized by support.latestProfile. Profile times and the windows are both
 * microseconds of the monotonic clock.
 */
function profileSlices(pid: number, measured: Measured[]): void {
  if (!CPU_PROF_DIR) return;
  const file = readdirSync(CPU_PROF_DIR).find((f) => f.includes(`.${pid}.0.`) && f.endsWith('.cpuprofile'));
  if (!file) {
    support.log(`no main-thread profile of worker ${pid} in ${CPU_PROF_DIR}`);
    return;
  }
  const profile = JSON.parse(readFileSync(join(CPU_PROF_DIR, file), 'utf8')) as CpuProfile;
  for (const m of measured) {
    const [from, to] = m.window_us;
    const samples: number[] = [];
    const deltas: number[] = [];
    let t = profile.startTime;
    profile.samples.forEach((id, i) => {
      t += profile.timeDeltas[i] ?? 0;
      if (t < from || t > to) return;
      samples.push(id);
      deltas.push(profile.timeDeltas[i] ?? 0);
    });
    const name = `slice-${m.variant}-${m.run}`;
    const slice = { ...profile, samples, timeDeltas: deltas, startTime: from, endTime: to };
    writeFileSync(join(CPU_PROF_DIR, `${name}-${Date.now()}.cpuprofile`), JSON.stringify(slice));
    m.profile = support.latestProfile(CPU_PROF_DIR, name);
  }
}

// ---------------------------------------------------------------- the changed pages of (d)

/** The changed pages: CHANGED_SHARE of the 1,000, spread over the jobs (101 is prime to 1,000). */
function changedPages(): { k: number; n: number }[] {
  const count = Math.max(1, Math.round(TOTAL_PAGES * CHANGED_SHARE));
  return Array.from({ length: count }, (_, i) => {
    const g = (i * 101 + 37) % TOTAL_PAGES;
    return { k: Math.floor(g / PAGES), n: (g % PAGES) + 1 };
  });
}

/** Checks that run 2 of job k of (d) lists exactly the changes made to its pages, and counts the rest. */
async function checkChanges(
  ctx: Context,
  v: Variant,
  k: number,
  runId: string,
  changed: { k: number; n: number }[],
) {
  const job = `${v.letter}${k}`;
  const jobId = ctx.jobs.get(v.name)![k]!;
  const pages = changed.filter((c) => c.k === k);
  const want = new Set<string>();
  for (const { n } of pages) {
    for (const i of CHANGED_ITEMS) want.add(`changed ${itemLink(job, n, i)} price`);
    for (const i of ADDED_ITEMS) want.add(`added ${itemLink(job, n, i)} `);
  }
  const r = await ctx.call<{ summary: Record<string, number> }>(
    'GET',
    `/jobs/${jobId}/runs/${runId}/changes?limit=1`,
  );
  if (r.status !== 200)
    return { job, summary: null, listed: 0, problems: [`${job}: GET …/changes answered ${r.status}`] };
  const changes = await allPages<Change>(ctx.call, `/jobs/${jobId}/runs/${runId}/changes`, 'changes');
  const got = changes.map((c) => {
    const key =
      c.key.links === undefined ? JSON.stringify(c.key) : new URL(c.key.links, ctx.siteUrl).pathname;
    return `${c.type} ${key} ${c.changed_fields.join(',')}`;
  });
  const problems: string[] = [];
  const missing = [...want].filter((w) => !got.includes(w));
  const extra = got.filter((g) => !want.has(g));
  if (missing.length || extra.length || got.length !== want.size)
    problems.push(
      `${job}: changes missing ${JSON.stringify(missing)}, unexpected ${JSON.stringify(extra.slice(0, 5))}`,
    );
  const summary = {
    added: ADDED_ITEMS.length * pages.length,
    removed: 0,
    changed: CHANGED_ITEMS.length * pages.length,
    unchanged: PAGES * ITEMS - CHANGED_ITEMS.length * pages.length,
    duplicate_keys: 0,
  };
  const s = r.body.summary;
  if (Object.entries(summary).some(([key, n]) => s[key] !== n))
    problems.push(`${job}: summary ${JSON.stringify(s)}, expected ${JSON.stringify(summary)}`);
  return { job, summary: s, listed: changes.length, problems };
}

/** Changes the pages of (d), measures its run 2 and checks its URL items and its changes. */
async function changedRun(ctx: Context, v: Variant, first: Measured) {
  const changed = changedPages();
  const paths = changed.map(({ k, n }) => pathOf(v, k, n));
  await siteControl(ctx.siteUrl, '/__change', { paths });
  await warm(ctx.siteUrl, paths);
  const counts = first.runs.map((r) => r.results_count);
  const measured = await measure(ctx, v, 2, {
    results: (k) => counts[k]! + ADDED_ITEMS.length * changed.filter((c) => c.k === k).length,
    item: (k, path) =>
      changed.some((c) => c.k === k && pathOf(v, k, c.n) === path)
        ? FETCHED
        : { unchanged: true, http_status: 304 },
  });
  const perJob = [];
  for (const [k, runId] of measured.runIds.entries())
    perJob.push(await checkChanges(ctx, v, k, runId, changed));
  const problems = perJob.flatMap((c) => c.problems);
  measured.result.problems.push(...problems);
  measured.result.valid = measured.result.problems.length === 0;
  const changes = { pages: paths, per_job: perJob.map(({ problems: _, ...c }) => c), problems };
  return { measured, changes };
}

// ---------------------------------------------------------------- the sitting

/** The database, the site with every page built, the API and the worker, and ten jobs a variant. */
async function setUp(variants: Variant[]): Promise<{ ctx: Context; pageBytes: number }> {
  const databaseUrl = await support.createBenchDatabase(DB_NAME);
  const site = await support.startSiteProcess('bench/unchanged-site.ts', join(tmp, 'site.log'));
  const paths = variants.flatMap((v) =>
    Array.from({ length: TOTAL_PAGES }, (_, g) => pathOf(v, Math.floor(g / PAGES), (g % PAGES) + 1)),
  );
  await warm(site.url, paths);
  const pageBytes = (await (await fetch(`${site.url}${paths[0]}`)).arrayBuffer()).byteLength;
  const token = await support.createKeyWithCli(databaseUrl, 'bench-unchanged@example.com');
  const { api, worker, base } = await support.startApiAndWorker({
    databaseUrl,
    prefix: PREFIX,
    logLevel: LOG_LEVEL,
    worker: { NODE_OPTIONS: workerNodeOptions() },
  });
  const call = support.apiClient(base, token);
  const jobs = new Map<VariantName, string[]>();
  for (const v of variants) {
    const ids: string[] = [];
    for (let k = 0; k < JOBS; k++) {
      const r = await call<{ job_id: string }>('POST', '/jobs', {
        name: `unchanged ${v.letter}${k}`,
        source: `${site.url}/${v.site}/${v.letter}${k}/[1-${PAGES}]`,
        rate_limit: 6000,
        queries,
        refetch: v.refetch,
        ...(v.tracking && { change_tracking: { key: ['links'] } }),
      });
      if (r.status !== 201) throw new Error(`POST /jobs answered ${r.status}: ${JSON.stringify(r.body)}`);
      ids.push(r.body.job_id);
    }
    jobs.set(v.name, ids);
  }
  await support.sleep(1000); // let the worker finish connecting
  const ctx = { call, base, token, siteUrl: site.url, api, worker, site: site.child, jobs };
  return { ctx, pageBytes };
}

/** Where nothing changed, run 2's records are run 1's apart from their ids and times; marks runs that differ. */
async function compareRecords(
  ctx: Context,
  v: Variant,
  first: string[],
  second: Measured,
  secondIds: string[],
) {
  const tally = { jobs: first.length, equal: 0, records: 0 };
  for (const [k, jobId] of ctx.jobs.get(v.name)!.entries()) {
    const a = await recordsDigest(ctx, jobId, first[k]!);
    const b = await recordsDigest(ctx, jobId, secondIds[k]!);
    tally.records += b.count;
    if (a.digest === b.digest && a.count === b.count) tally.equal++;
    else second.problems.push(`${v.letter}${k}: run 2's records differ from run 1's`);
  }
  second.valid = second.problems.length === 0;
  return tally;
}

const ratio = (baseline: number, x: number) => (x > 0 ? support.round2(baseline / x) : null);

/** Run 2 of each variant against run 2 of (c). */
function ratiosAgainstAlways(second: Measured[]) {
  const baseline = second.find((m) => m.variant === 'always');
  if (!baseline) return {};
  return Object.fromEntries(
    second
      .filter((m) => m !== baseline)
      .map((m) => [
        m.variant,
        {
          bytes: ratio(baseline.site.bytes_sent, m.site.bytes_sent),
          worker_cpu_per_page: ratio(baseline.worker_cpu_ms_per_page, m.worker_cpu_ms_per_page),
          postgres_cpu_per_page: ratio(baseline.postgres_cpu_ms_per_page, m.postgres_cpu_ms_per_page),
          pages_per_s: ratio(m.pages_per_s, baseline.pages_per_s),
        },
      ]),
  );
}

async function main() {
  support.log(`database ${DB_NAME}, Redis prefix ${PREFIX}, ${os.availableParallelism()} cores`);
  const variants = SELECTED.map((name) => VARIANTS.find((v) => v.name === name)!);
  const { ctx, pageBytes } = await setUp(variants);

  const first = new Map<VariantName, { result: Measured; runIds: string[] }>();
  for (const v of variants)
    first.set(v.name, await measure(ctx, v, 1, { results: () => PAGES * ITEMS, item: () => FETCHED }));
  const second = new Map<VariantName, { result: Measured; runIds: string[] }>();
  for (const v of variants) {
    const item = v.second;
    if (!item) continue;
    const counts = first.get(v.name)!.result.runs.map((r) => r.results_count);
    second.set(v.name, await measure(ctx, v, 2, { results: (k) => counts[k]!, item: () => item }));
  }
  const tracked = variants.find((v) => v.tracking);
  const changed = tracked ? await changedRun(ctx, tracked, first.get(tracked.name)!.result) : null;
  if (tracked && changed) second.set(tracked.name, changed.measured);

  support.log('comparing the records of run 2 with those of run 1');
  const sameRecords: Record<string, Awaited<ReturnType<typeof compareRecords>>> = {};
  for (const v of variants) {
    const again = second.get(v.name);
    if (v.tracking || !again) continue;
    sameRecords[v.name] = await compareRecords(ctx, v, first.get(v.name)!.runIds, again.result, again.runIds);
  }
  const workerHwm = support.memorySampler(ctx.worker.child.pid!).stop().vm_hwm_mib;
  await support.stopChild(ctx.worker.child);
  await support.stopChild(ctx.api.child);

  const firstRuns = [...first.values()].map((m) => m.result);
  const secondRuns = [...second.values()].map((m) => m.result);
  profileSlices(ctx.worker.child.pid!, [...firstRuns, ...secondRuns]);
  const ratios = ratiosAgainstAlways(secondRuns);
  const met = (r: number | null | undefined, target: number) => (r == null ? null : r >= target);
  const summary = {
    benchmark: 'unchanged',
    date: new Date().toISOString(),
    machine: support.machineInfo(
      'worker, API, site, PostgreSQL and Redis share these cores; other work on the machine too',
    ),
    settings: {
      jobs_per_variant: JOBS,
      pages_per_job: PAGES,
      items_per_page: ITEMS,
      page_bytes: pageBytes,
      rate_limit: 6000,
      queries,
      changed_share: CHANGED_SHARE,
      scraper_concurrency: 'default (4)',
      run_url_concurrency: 'default (8)',
      host_max_concurrency: 'default (8)',
      log_level: LOG_LEVEL,
      worker_node_flags: WORKER_FLAGS.join(' ') || null,
      cpu_profile: Boolean(CPU_PROF_DIR),
    },
    variants: Object.fromEntries(variants.map((v) => [v.name, v.label])),
    first_runs: firstRuns,
    second_runs: secondRuns,
    ratios_against_always: ratios,
    changes: changed?.changes ?? null,
    same_records_as_run_1: sameRecords,
    worker_vm_hwm_mib: workerHwm,
    targets: {
      etag_bytes_10x: met(ratios.etag?.bytes, TARGETS.etag_bytes),
      etag_worker_cpu_5x: met(ratios.etag?.worker_cpu_per_page, TARGETS.etag_worker_cpu),
      plain_worker_cpu_3x: met(ratios.plain?.worker_cpu_per_page, TARGETS.plain_worker_cpu),
      changed_pages_give_exactly_those_changes: changed ? changed.changes.problems.length === 0 : null,
    },
    all_valid: [...firstRuns, ...secondRuns].every((m) => m.valid),
  };
  console.log(JSON.stringify(summary, null, 2));
  support.writeJsonOut(args['json-out'], summary);
  printTables(summary);
  return summary;
}

function printTables(summary: {
  first_runs: Measured[];
  second_runs: Measured[];
  ratios_against_always: ReturnType<typeof ratiosAgainstAlways>;
  settings: { page_bytes: number };
  machine: { nproc: number; cpu: string };
  targets: Record<string, boolean | null>;
}): void {
  const label = (name: string) => VARIANTS.find((v) => v.name === name)!.label;
  console.log('');
  support.printTable(
    [
      'variant',
      'run',
      'pages/s',
      'bytes sent',
      'bytes/page',
      '200 / 304',
      'connections',
      'worker CPU ms/page',
      'of it main thread',
      'V8 helper threads',
      'PostgreSQL CPU ms/page',
      'unchanged URLs',
      'other work (cores)',
      'valid',
    ],
    'lrrrrrrrrrrrrl',
    [...summary.first_runs, ...summary.second_runs].map((m) => [
      label(m.variant),
      m.run,
      m.pages_per_s,
      m.site.bytes_sent,
      m.bytes_per_page,
      `${m.site.requests['200'] ?? 0} / ${m.site.requests['304'] ?? 0}`,
      m.site.connections,
      m.worker_cpu_ms_per_page,
      m.worker_main_thread_cpu_ms_per_page,
      m.worker_threads_cpu_ms_per_page.v8_helper_threads,
      m.postgres_cpu_ms_per_page,
      m.url_items.unchanged,
      m.cores.others,
      m.valid ? 'yes' : 'no',
    ]),
  );
  console.log('');
  support.printTable(
    ['run 2 against (c)', 'fewer bytes', 'less worker CPU/page', 'less PostgreSQL CPU/page', 'pages/s'],
    'lrrrr',
    Object.entries(summary.ratios_against_always).map(([name, r]) => [
      label(name),
      `${r.bytes}×`,
      `${r.worker_cpu_per_page}×`,
      `${r.postgres_cpu_per_page}×`,
      `${r.pages_per_s}×`,
    ]),
  );
  console.log('');
  console.log(
    `${summary.machine.nproc} cores (${summary.machine.cpu}), Node ${process.version}; ` +
      `pages of ${summary.settings.page_bytes} bytes with ${ITEMS} items; targets: ${JSON.stringify(summary.targets)}.`,
  );
}

await support.runBench(async () => (await main()).all_valid);
