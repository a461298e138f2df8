/**
 * Shared pieces of bench/fleet.ts and bench/schedules.ts: a private database, a private Redis
 * prefix, API keys through the keys CLI, /proc readings (memory and CPU time of a process,
 * machine-wide CPU), percentiles, and a CPU-profile summary.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { applyMigrations } from '@scrapejobs/db';
import { Redis } from 'ioredis';
import pg from 'pg';

export const ROOT = resolve(import.meta.dirname, '..');
export const ADMIN_URL = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgresql://root@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export const round2 = (n: number) => Math.round(n * 100) / 100;
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export { freePort } from '../test/support/processes.ts';

// ---------------------------------------------------------------- database and Redis

export async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database of that name (dropped first if a crashed run left it). */
export async function createBenchDatabase(name: string): Promise<{ url: string; drop(): Promise<void> }> {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${name}"`);
  });
  await applyMigrations(url);
  return {
    url,
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => {}),
  };
}

export const benchPrefix = (what: string) => `bench-${what}-${randomBytes(4).toString('hex')}`;

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

export async function deleteRedisKeys(prefix: string): Promise<number> {
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

// ---------------------------------------------------------------- /proc

const CLK_TCK = 100; // USER_HZ on Linux

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
export function cpuMsOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return null;
  }
}

/** Busy and total CPU time of the whole machine (ms, all cores), from /proc/stat. */
export function machineCpu(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const busy = user + nice + system + irq + softirq + steal;
  return { busy: (busy * 1000) / CLK_TCK, total: ((busy + idle + iowait) * 1000) / CLK_TCK };
}

/** CPU time (ms) of every process whose name starts with one of `names` (postgres, redis-server). */
export function cpuMsByName(names: string[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const name = names.find((n) => comm.startsWith(n));
      if (!name) continue;
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out[name]! += ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
    } catch {
      // ended meanwhile
    }
  }
  return out;
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
export async function machineBusy(ms: number): Promise<number> {
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
      if (busy >= threshold)
        process.stderr.write(`bench: the machine is still busy (${busy} cores); going on\n`);
      return busy;
    }
    process.stderr.write(`bench: waiting for a quiet machine (${busy} cores busy)\n`);
  }
}

// ---------------------------------------------------------------- statistics

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

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
export function summarizeProfile(file: string, top = 25) {
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
