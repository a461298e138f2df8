/**
 * What the benches share: a private database and Redis prefix, API keys, child processes and the
 * cleanup of everything a bench leaves behind (also on SIGINT and SIGTERM), starting the apps,
 * /proc readings (memory and CPU time of processes, machine-wide CPU, waiting for a quiet
 * machine), the reports of bench/fleet-memwatch.ts, statistics, output (Markdown tables, the JSON
 * summary, the machine), and a CPU-profile summary.
 *
 * The database and Redis clients are loaded only when a bench asks for one, so that
 * bench/extraction.ts and bench/render.ts measure a process without them.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { type ParseArgsOptionsConfig, parseArgs, promisify } from 'node:util';
import type { Database } from '@scrapejobs/db';
import type { Scope } from '@scrapejobs/domain';
import type { Redis } from 'ioredis';
import pg from 'pg';
import { freePort, type Proc, startApp } from '../test/support/processes.ts';

export const ROOT = resolve(import.meta.dirname, '..');
export const ADMIN_URL = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgresql://root@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export const round2 = (n: number) => Math.round(n * 100) / 100;
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** One line on stderr, where progress goes (stdout holds the results). */
export const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

export { freePort };

type OptionSpec = Record<string, string | boolean | undefined>;
type Options<S extends OptionSpec> = {
  [K in keyof S]: S[K] extends boolean ? boolean : S[K] extends string ? string : string | undefined;
};

/**
 * The command-line options of a bench: `name: 'default'` for `--name <value>` (undefined: no
 * default), `name: false` for a flag `--name`. Anything else on the command line is an error.
 */
export function parseOptions<S extends OptionSpec>(spec: S): Options<S> {
  const options: ParseArgsOptionsConfig = {};
  for (const [name, fallback] of Object.entries(spec))
    options[name] =
      typeof fallback === 'boolean'
        ? { type: 'boolean', default: fallback }
        : { type: 'string', ...(fallback !== undefined && { default: fallback }) };
  return parseArgs({ options }).values as Options<S>;
}

// ---------------------------------------------------------------- running and cleaning up

const children = new Map<ChildProcess, number>();
const cleanupSteps: (() => Promise<unknown>)[] = [];
let cleanedUp = false;

/** Runs `step` when the bench ends, after its child processes have stopped; the latest step first. */
export function atCleanup(step: () => Promise<unknown>): void {
  cleanupSteps.push(step);
}

/** Keeps `child` to be stopped when the bench ends (SIGTERM, then SIGKILL after `graceMs`). */
export function track<T extends ChildProcess>(child: T, graceMs = 15_000): T {
  children.set(child, graceMs);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Stops a child process: SIGTERM, then SIGKILL if it is still there after its grace time. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), children.get(child) ?? 15_000);
    await exited;
    clearTimeout(timer);
  }
  children.delete(child);
}

async function cleanup(): Promise<void> {
  if (cleanedUp) return;
  cleanedUp = true;
  await Promise.allSettled([...children.keys()].map(stopChild));
  for (const step of cleanupSteps.reverse())
    await step().catch((err) => console.error(`bench: cleanup failed: ${err.message}`));
}

/**
 * Runs a bench: `main`, then the cleanup, also on SIGINT or SIGTERM (which then exit 130). The exit
 * code is 1 when `main` throws (its stack is printed) or returns false.
 */
export async function runBench(main: () => Promise<boolean>): Promise<void> {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`bench: ${signal}, cleaning up`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  try {
    process.exitCode = (await main()) ? 0 : 1;
  } catch (err) {
    console.error(`bench: ${(err as Error).stack ?? err}`);
    process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

/** A temporary directory `<tmp>/bench-<what>-…`, removed when the bench ends. */
export function tempDir(what: string): string {
  const dir = mkdtempSync(join(os.tmpdir(), `bench-${what}-`));
  atCleanup(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// ---------------------------------------------------------------- database and Redis

/** The URL of database `name` on the server of ADMIN_URL. */
export function databaseUrl(name: string): string {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Runs `fn` with a client connected to the server's administrative database (ADMIN_URL). */
export async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const dropDatabase = (name: string) =>
  admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));

/** Drops database `name` when the bench ends. */
export function dropAtCleanup(name: string): void {
  atCleanup(() =>
    dropDatabase(name).catch((err) => console.error(`bench: could not drop ${name}: ${err.message}`)),
  );
}

/**
 * A fresh, migrated database of that name (dropped first if a crashed run left it), dropped again
 * when the bench ends unless `keep`; returns its URL.
 */
export async function createBenchDatabase(name: string, { keep = false } = {}): Promise<string> {
  if (!keep) dropAtCleanup(name);
  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${name}"`);
  });
  const url = databaseUrl(name);
  const { applyMigrations } = await import('@scrapejobs/db');
  await applyMigrations(url);
  return url;
}

/** Process ids of the PostgreSQL backends serving database `name`. */
export async function backendPids(client: pg.Client, name: string): Promise<number[]> {
  const r = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
    name,
  ]);
  return r.rows.map((row) => row.pid);
}

/**
 * CPU time (ms) of the PostgreSQL backends serving database `name`: they come and go with the
 * pools, so they are looked up every 500 ms; a backend seen first after the start counts from 0.
 */
export async function postgresTracker(name: string) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  const seen = new Map<number, { first: number; last: number }>();
  const poll = async (initial: boolean) => {
    for (const pid of await backendPids(client, name)) {
      const ms = cpuMsOf(pid);
      if (ms === null) continue;
      const entry = seen.get(pid);
      if (entry) entry.last = ms;
      else seen.set(pid, { first: initial ? ms : 0, last: ms });
    }
  };
  const total = () => [...seen.values()].reduce((ms, { first, last }) => ms + last - first, 0);
  await poll(true);
  let running = true;
  let polling = Promise.resolve();
  const loop = (async () => {
    while (running) {
      await sleep(500);
      polling = poll(false).catch(() => {});
      await polling;
    }
  })();
  return {
    /** The total so far. */
    async read(): Promise<number> {
      await polling;
      await poll(false).catch(() => {});
      return total();
    },
    async stop(): Promise<number> {
      running = false;
      await loop;
      await poll(false).catch(() => {});
      await client.end();
      return total();
    },
  };
}

/** A bench site (`script`, which logs `listening <port>`) in its own process, logging to `logFile`. */
export async function startSiteProcess(
  script: string,
  logFile: string,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawnLogged([script], logFile, { stderr: 'inherit' });
  const [, port] = await waitForLog(child, logFile, /listening (\d+)/, 'the site');
  return { child, url: `http://127.0.0.1:${port}` };
}

/** A Redis prefix of the bench's own, `bench-<what>-<random>`; its keys are deleted when the bench ends. */
export function benchPrefix(what: string): string {
  const prefix = `bench-${what}-${randomBytes(4).toString('hex')}`;
  atCleanup(() =>
    deleteRedisKeys(prefix).catch((err) =>
      console.error(`bench: could not delete Redis keys: ${err.message}`),
    ),
  );
  return prefix;
}

/** Every key under `prefix:`, for cleanup and memory accounting. */
export async function scanKeys(redis: Redis, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    out.push(...keys);
  } while (cursor !== '0');
  return out;
}

async function deleteRedisKeys(prefix: string): Promise<number> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await scanKeys(redis, prefix);
    let n = 0;
    for (let i = 0; i < keys.length; i += 1000) n += await redis.unlink(...keys.slice(i, i + 1000));
    return n;
  } finally {
    redis.disconnect();
  }
}

/** Creates a test-mode API key named `bench` for `email` (and the user, when new) with the keys service. */
export async function createKey(db: Database, email: string, scopes: Scope[]) {
  const { KeysService } = await import('@scrapejobs/domain');
  return new KeysService(db).create({ email, mode: 'test', scopes, name: 'bench' });
}

/** Creates an API key with the project's CLI (`keys create`); the token is the last line printed. */
export async function createKeyWithCli(databaseUrl: string, email: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      join(ROOT, 'apps/api/src/cli/keys.ts'),
      'create',
      '--user',
      email,
      '--scopes',
      'jobs:read,jobs:write',
      '--name',
      'bench',
    ],
    { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl } },
  );
  const token = stdout.trim().split('\n').at(-1)!.trim();
  if (!/^sk_(live|test)_[A-Za-z0-9]{24,64}$/.test(token)) throw new Error(`keys create printed: ${stdout}`);
  return token;
}

// ---------------------------------------------------------------- processes

/** The last `lines` lines of a file ('' when there is none). */
function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * Starts `node <args>` in the repository root with `env` added to this process's environment, its
 * stdout (and its stderr, unless inherited) written to `logFile`; it is stopped when the bench ends.
 */
export function spawnLogged(
  args: string[],
  logFile: string,
  { env = {}, stderr = 'log' }: { env?: Record<string, string>; stderr?: 'log' | 'inherit' } = {},
): ChildProcess {
  const out = openSync(logFile, 'w');
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', out, stderr === 'inherit' ? 'inherit' : out],
  });
  closeSync(out);
  return track(child);
}

/** Waits until `logFile` matches `pattern`; throws when `child` ends first or after `timeoutMs`. */
export async function waitForLog(
  child: ChildProcess,
  logFile: string,
  pattern: RegExp,
  what: string,
  timeoutMs = 15_000,
): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = readFileSync(logFile, 'utf8').match(pattern);
    if (match) return match;
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}):\n${tail(logFile)}`);
    if (Date.now() > deadline) throw new Error(`${what} did not start:\n${tail(logFile)}`);
    await sleep(100);
  }
}

/** Polls `GET <base>/ready` until it answers 200; throws when `child` ends first or after 30 s. */
async function waitForApi(base: string, child: ChildProcess, logFile?: string): Promise<void> {
  const logged = () => (logFile ? `:\n${tail(logFile)}` : '');
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the API exited (${child.exitCode})${logged()}`);
    const status = await fetch(`${base}/ready`).then(
      (r) => r.status,
      () => 0, // not listening yet
    );
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`the API did not become ready${logged()}`);
    await sleep(200);
  }
}

/**
 * The API as a child process (`node <nodeArgs> <entry>`) on a free port, its log in `logFile`, on
 * the bench's database and Redis prefix with a rate limit that is never reached; resolves once ready.
 */
export async function startApi(o: {
  databaseUrl: string;
  prefix: string;
  logLevel: string;
  logFile: string;
  nodeArgs?: string[];
  entry?: string;
  env?: Record<string, string>;
}): Promise<{ child: ChildProcess; port: number; base: string }> {
  const port = await freePort();
  const child = spawnLogged([...(o.nodeArgs ?? []), o.entry ?? 'apps/api/src/main.ts'], o.logFile, {
    env: {
      DATABASE_URL: o.databaseUrl,
      REDIS_URL,
      PORT: String(port),
      QUEUE_PREFIX: o.prefix,
      API_RATE_LIMIT_PER_MINUTE: '100000000',
      LOG_LEVEL: o.logLevel,
      ...o.env,
    },
  });
  const base = `http://127.0.0.1:${port}`;
  await waitForApi(base, child, o.logFile);
  return { child, port, base };
}

/**
 * The API and one scraper worker as real processes (test/support/processes.ts `startApp`) on the
 * bench's database and Redis prefix, private network targets allowed, each with its own extra
 * environment; resolves once the API is ready and the worker has started.
 */
export async function startApiAndWorker(o: {
  databaseUrl: string;
  prefix: string;
  logLevel: string;
  api?: Record<string, string>;
  worker?: Record<string, string>;
}): Promise<{ api: Proc; worker: Proc; base: string }> {
  const port = await freePort();
  const common = {
    DATABASE_URL: o.databaseUrl,
    REDIS_URL,
    QUEUE_PREFIX: o.prefix,
    LOG_LEVEL: o.logLevel,
    ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
  };
  const api = startApp('api', {
    ...common,
    PORT: String(port),
    API_RATE_LIMIT_PER_MINUTE: '1000000',
    ...o.api,
  });
  track(api.child, 20_000);
  const worker = startApp('scraper-worker', { ...common, ...o.worker });
  track(worker.child, 20_000);
  const base = `http://127.0.0.1:${port}`;
  await waitForApi(base, api.child);
  // The worker logs its start at info; at a quieter LOG_LEVEL give it a few seconds instead.
  if (['info', 'debug', 'trace'].includes(o.logLevel))
    await worker.waitForLog((l) => l.msg === 'scraper worker started', 30_000);
  else await sleep(3000);
  return { api, worker, base };
}

/** Calls the API with a bearer token; the body is parsed JSON (null when empty). */
export function apiClient(base: string, token: string) {
  return async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
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
}

/** The Node flags of an app's production `start` script: `node <flags> src/main.ts` in apps/<app>/package.json. */
export function productionNodeFlags(app: string): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'apps', app, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const m = /^node\s+(.*?)\s*src\/main\.ts$/.exec(pkg.scripts.start);
  if (!m) throw new Error(`unexpected start script: ${pkg.scripts.start}`);
  return (m[1] ?? '').split(/\s+/).filter(Boolean);
}

/** The `--import` flag that preloads bench/fleet-memwatch.ts (it writes to $BENCH_MEMWATCH_FILE). */
export const memwatchFlag = () => `--import=${join(ROOT, 'bench/fleet-memwatch.ts')}`;

// ---------------------------------------------------------------- CPU profiles of child processes

/** The folder of the `--cpu-prof <dir>` option, created; undefined without the option. */
export function profileDir(option: string | undefined): string | undefined {
  if (!option) return undefined;
  const dir = resolve(option);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Node flags that write a CPU profile `<name>-<time>.cpuprofile` into `dir` when the process ends. */
export const cpuProfFlags = (dir: string, name: string) => [
  '--cpu-prof',
  `--cpu-prof-dir=${dir}`,
  `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`,
];

/** The summary of the latest `<name>-*.cpuprofile` in `dir`, or null when there is none. */
export function latestProfile(dir: string, name: string): ReturnType<typeof summarizeProfile> | null {
  const files = readdirSync(dir).filter((f) => f.startsWith(`${name}-`) && f.endsWith('.cpuprofile'));
  return files.length ? summarizeProfile(join(dir, files.sort().at(-1)!)) : null;
}

// ---------------------------------------------------------------- /proc

const CLK_TCK = 100; // USER_HZ on Linux

/** Name and CPU times (ms) of a process from /proc/<pid>/stat, or null once it has ended. */
function statOf(pid: number | string): { comm: string; ms: number; sysMs: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [utime, stime] = [Number(f[11]), Number(f[12])];
    return {
      comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      ms: ((utime + stime) * 1000) / CLK_TCK,
      sysMs: (stime * 1000) / CLK_TCK,
    };
  } catch {
    return null;
  }
}

/** VmRSS and VmHWM (peak RSS) of a process in MiB, or null once it has ended. */
export function memoryOf(pid: number): { rss: number; hwm: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))?.[1] ?? 0);
    return { rss: round2(kb('VmRSS') / 1024), hwm: round2(kb('VmHWM') / 1024) };
  } catch {
    return null;
  }
}

/** CPU time (user + system, ms) a process has used so far, or null once it has ended. */
export const cpuMsOf = (pid: number): number | null => statOf(pid)?.ms ?? null;

/** Name and CPU time (ms; `sysMs` the kernel's part) of every process, from /proc. */
export function processCpuTimes(): Map<number, { comm: string; ms: number; sysMs: number }> {
  const out = new Map<number, { comm: string; ms: number; sysMs: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = statOf(entry); // null: the process ended meanwhile
    if (stat) out.set(Number(entry), stat);
  }
  return out;
}

/** CPU time (ms) of every process whose name starts with one of `names` (postgres, redis-server). */
export function cpuMsByName(names: string[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  for (const { comm, ms } of processCpuTimes().values()) {
    const name = names.find((n) => comm.startsWith(n));
    if (name) out[name]! += ms;
  }
  return out;
}

/**
 * CPU time of the whole machine (ms, all cores) from /proc/stat: busy, idle (with I/O wait),
 * their total, and the parts of busy that are interrupts and hypervisor steal.
 */
export function machineCpu(): { busy: number; idle: number; total: number; irq: number; steal: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const ms = (n: number) => (n * 1000) / CLK_TCK;
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
  const busy = user + nice + system + irq + softirq + steal;
  return {
    busy: ms(busy),
    idle: ms(idle + iowait),
    total: ms(busy + idle + iowait),
    irq: ms(irq + softirq),
    steal: ms(steal),
  };
}

/** Samples a process's memory every `everyMs` until stopped; keeps the peak RSS seen and the last VmHWM. */
export function memorySampler(pid: number, everyMs = 100) {
  let peakRss = 0;
  let hwm = 0;
  let samples = 0;
  const sample = () => {
    const m = memoryOf(pid);
    if (!m) return;
    samples++;
    peakRss = Math.max(peakRss, m.rss);
    hwm = Math.max(hwm, m.hwm);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      sample();
      clearInterval(timer);
      return { peak_rss_mib: peakRss, vm_hwm_mib: hwm, samples };
    },
  };
}

/** Cores busy on the whole machine over the last `ms`. */
async function machineBusy(ms: number): Promise<number> {
  const a = machineCpu();
  await sleep(ms);
  const b = machineCpu();
  return round2((b.busy - a.busy) / ms);
}

/**
 * Other work on this machine (tests, builds of other sessions) skews every figure: wait until it
 * has been nearly idle (< `threshold` cores busy) for a second, giving up after `maxMs`.
 */
export async function waitForQuiet(threshold = 0.3, maxMs = 90_000): Promise<number> {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const busy = await machineBusy(1000);
    if (busy < threshold || Date.now() > deadline) {
      if (busy >= threshold) log(`the machine is still busy (${busy} cores); going on`);
      return busy;
    }
    log(`waiting for a quiet machine (${busy} cores busy)`);
  }
}

// ---------------------------------------------------------------- bench/fleet-memwatch.ts

/** One line of bench/fleet-memwatch.ts: memory in MiB, times in ms, over one 250 ms interval. */
interface MemwatchSample {
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

/** The lines a process wrote to `file` from `from` to `slackMs` after `to` (none when there is no file). */
export function memwatchSamples(file: string, from: number, to: number, slackMs: number): MemwatchSample[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as MemwatchSample)
      .filter((l) => l.t >= from && l.t <= to + slackMs);
  } catch {
    return [];
  }
}

/** Event-loop delay over those lines: the median of the intervals' p99, and the worst delay. */
export function eventLoopDelay(lines: readonly MemwatchSample[]) {
  const p99s = lines.map((l) => l.loop_p99_ms).sort((a, b) => a - b);
  return {
    median_of_interval_p99: p99s[Math.floor(p99s.length / 2)]!,
    max: Math.max(...lines.map((l) => l.loop_max_ms)),
  };
}

/** Seconds spent in garbage collection over those lines. */
export const gcSeconds = (lines: readonly MemwatchSample[]) =>
  round2(lines.reduce((n, l) => n + l.gc_ms, 0) / 1000);

// ---------------------------------------------------------------- statistics

/** The nearest-rank percentile `p` (0–100) of sorted values. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The sample at fraction `q` (0–1) of sorted samples, by index ⌊q·n⌋ (0 when there is none). */
export const sampleAt = (sorted: readonly number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

export function summarize(values: readonly number[]) {
  const s = [...values].sort((a, b) => a - b);
  return {
    n: s.length,
    min: s[0] ?? Number.NaN,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    max: s.at(-1) ?? Number.NaN,
  };
}

// ---------------------------------------------------------------- output

/** Prints a Markdown table; `align` has a letter per column, `l` (left) or `r` (right). */
export function printTable(
  header: readonly string[],
  align: string,
  rows: readonly (readonly unknown[])[],
): void {
  const line = (cells: readonly unknown[]) => `| ${cells.join(' | ')} |`;
  console.log(line(header));
  console.log(`|${[...align].map((a) => (a === 'r' ? '---:' : '---')).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

/** Also writes the JSON summary to `file` (the `--json-out` option), creating its folder. */
export function writeJsonOut(file: string | undefined, summary: unknown): void {
  if (!file) return;
  mkdirSync(resolve(file, '..'), { recursive: true });
  writeFileSync(resolve(file), `${JSON.stringify(summary, null, 2)}\n`);
}

export const cpuModel = () => os.cpus()[0]?.model ?? 'unknown';

/** This machine for a summary: cores, CPU, memory, Node, the load average now, and who shares it (`note`). */
export function machineInfo(note: string) {
  return {
    nproc: os.availableParallelism(),
    cpu: cpuModel(),
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadavg_at_end: os.loadavg().map(round2),
    note,
  };
}

/** The first rows of every catalogue page the benches build: `items` products with a link, a price and a description. */
export function productItems(items: number): string {
  const rows: string[] = [];
  for (let i = 0; i < items; i++) {
    rows.push(`<li class="product" data-id="${i}">
  <a class="title" href="/products/${i}">Product number ${i}</a>
  <span class="price">$${(i * 1.37).toFixed(2)}</span>
  <p class="desc">Short description of item ${i}, in stock.</p>
</li>`);
  }
  return rows.join('\n');
}

// ---------------------------------------------------------------- CPU profiles

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a file belongs: a package under node_modules, a workspace file, or Node itself. */
function ownerOf(url: string): string {
  if (!url) return '(native / V8)';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 14).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return 'node:internal';
  const root = `file://${ROOT}/`;
  return url.startsWith(root) ? url.slice(root.length) : url;
}

/**
 * Self time of a .cpuprofile by function and by owner (package or workspace file), and the
 * "inclusive" time spent under frames matching a few interesting names.
 */
function summarizeProfile(file: string, top = 25) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const totalUs = profile.endTime - profile.startTime;

  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame;
    if (f.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const owner = ownerOf(f.url);
    const key = `${f.functionName || '(anonymous)'} ${owner}${f.url ? `:${f.lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + us);
  }
  // Inclusive time under some frames: walk each sample's stack once.
  const marks: Record<string, RegExp> = {
    'extract (extraction package)': /packages\/extraction\//,
    fontoxpath: /node_modules\/fontoxpath\//,
    'css-select': /node_modules\/css-select\//,
    htmlparser2: /node_modules\/htmlparser2\//,
    'prisma / pg': /node_modules\/(@prisma|pg|pg-protocol|\.prisma)\//,
    'bullmq / ioredis': /node_modules\/(bullmq|ioredis)\//,
    '(garbage collector)': /^$/,
  };
  const inclusive = new Map<string, number>();
  const stackCache = new Map<number, Set<string>>();
  const marksOf = (id: number): Set<string> => {
    let set = stackCache.get(id);
    if (set) return set;
    set = new Set();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (f.functionName === '(garbage collector)') set.add('(garbage collector)');
      for (const [name, re] of Object.entries(marks))
        if (name !== '(garbage collector)' && re.test(f.url)) set.add(name);
    }
    stackCache.set(id, set);
    return set;
  };
  for (const [id, us] of selfUs) for (const m of marksOf(id)) inclusive.set(m, (inclusive.get(m) ?? 0) + us);

  const ms = (us: number) => Math.round(us / 1000);
  const sortDesc = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return {
    file,
    wall_ms: ms(totalUs),
    busy_ms: ms(totalUs - idleUs),
    idle_ms: ms(idleUs),
    inclusive_ms: Object.fromEntries(sortDesc(inclusive).map(([k, v]) => [k, ms(v)])),
    self_by_owner_ms: Object.fromEntries(
      sortDesc(byOwner)
        .slice(0, top)
        .map(([k, v]) => [k, ms(v)]),
    ),
    self_by_function_ms: Object.fromEntries(
      sortDesc(byFunction)
        .slice(0, top)
        .map(([k, v]) => [k, ms(v)]),
    ),
  };
}
