/**
 * API benchmark: requests/s and p50/p99 latency of the real API process, measured from this
 * (separate) process with autocannon, next to a bare Express route as the ceiling.
 *
 *   1. `GET /jobs/status` of a user with 100 jobs (bearer token, 200)
 *   2. `POST /jobs` with a valid body (bearer token, 201), as another user so that 1 keeps 100 jobs
 *   3. `GET /bare` on bench/bare-server.ts, a bare Express 5 app in its own process answering the
 *      very list payload of 1, serialised per request: the ceiling for this machine
 *
 * The API runs as a child process (`node <production flags> apps/api/src/main.ts`) on its own
 * database (`scrapejobs_bench_api`, dropped and re-created) and Redis prefix (`bench-<random>`),
 * at LOG_LEVEL=info (the production default); 1 and 2 are then repeated with LOG_LEVEL=warn.
 * Every scenario has a warm-up, then a measured period; a scenario with any non-2xx answer,
 * socket error or timeout is flagged invalid. Everything is cleaned up at the end.
 *
 * The machine is shared by the API, PostgreSQL, Redis and this load generator, and often by
 * other work: each scenario waits for a quiet machine, reports the CPU each party used while it
 * was measured, and is measured again when other work disturbed it. The server's CPU time per
 * request is the figure that bounds one single-threaded API process and that others disturb least.
 *
 * Run: `pnpm exec node bench/api.ts [options]`
 *   --seconds 15, --warmup 3, --connections 32   measured and warm-up time per scenario, load
 *   --scenarios list,create,bare, --log-levels info,warn
 *   --json-out <file>    also write the JSON summary there
 *   --max-wait 120       seconds to wait for a quiet machine before each scenario
 *   --retries 2          measure again (up to this many times) when other work disturbed it
 *   --log-dir <dir>      keep the servers' logs there (default: a temporary directory, removed)
 *   --cpu-prof <dir>     run the API with `node --cpu-prof`; profiles are written when it stops
 *   --api-node-options="<flags>"  Node flags of the API process (default: those of the `start`
 *                        script of apps/api/package.json, as deployed; "" for none)
 *   --api-entry <file>   another entry point than apps/api/src/main.ts, to measure a candidate change
 * Env: BENCH_ADMIN_DATABASE_URL (postgresql://root@127.0.0.1:5432/postgres), REDIS_URL.
 * Prints a JSON summary, then a Markdown table; exits 1 when a scenario had failures.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { createDatabase } from '@scrapejobs/db';
import autocannon from 'autocannon';
import {
  admin,
  apiClient,
  backendPids,
  benchPrefix,
  cpuProfFlags,
  createBenchDatabase,
  createKey,
  freePort,
  log,
  machineCpu,
  machineInfo,
  parseOptions,
  percentile,
  printTable,
  processCpuTimes,
  productionNodeFlags,
  profileDir,
  ROOT,
  round2,
  runBench,
  spawnLogged,
  startApi,
  stopChild,
  tempDir,
  waitForLog,
  waitForQuiet,
  writeJsonOut,
} from './support.ts';

const args = parseOptions({
  seconds: '15',
  warmup: '3',
  connections: '32',
  'log-levels': 'info,warn',
  'cpu-prof': undefined,
  'json-out': undefined,
  scenarios: 'list,create,bare',
  'api-entry': 'apps/api/src/main.ts',
  'max-wait': '120',
  retries: '2',
  'log-dir': undefined,
  'api-node-options': undefined,
});
const MEASURE_S = Number(args.seconds);
const WARMUP_S = Number(args.warmup);
const CONNECTIONS = Number(args.connections);
const LOG_LEVELS = args['log-levels'].split(',').filter(Boolean);
/** The API's entry point; another file here measures a candidate change side by side. */
const API_ENTRY = resolve(args['api-entry']);
const SCENARIOS = new Set(args.scenarios.split(','));
/** Node options of the API process: by default those of its production start script, so it runs as deployed. */
const API_NODE_OPTIONS = (args['api-node-options'] ?? productionNodeFlags('api').join(' '))
  .split(' ')
  .filter(Boolean);
const MAX_WAIT_S = Number(args['max-wait']);
const RETRIES = Number(args.retries);
const CPU_PROF_DIR = profileDir(args['cpu-prof']);

const DB_NAME = 'scrapejobs_bench_api';
const PREFIX = benchPrefix('api');
const JOBS_OF_LIST_USER = 100;

const TARGETS = {
  list: { rps: 1500, p99: 30 },
  create: { rps: 800 },
};

/** The body of POST /jobs, as test/support/client.ts `validJob()`. */
const validJob = () => ({
  name: 'Example',
  source: 'https://example.com/items',
  queries: [{ name: 'title', type: 'css', query: 'h1' }],
});

// ---------------------------------------------------------------- processes

const tmp = tempDir('api');
/** Where the servers' logs go: kept with --log-dir, else a temporary directory removed at the end. */
const LOG_DIR = args['log-dir'] ? resolve(args['log-dir']) : tmp;
mkdirSync(LOG_DIR, { recursive: true });

interface Started {
  child: ChildProcess;
  port: number;
}

/** The API under test at `logLevel` (`node <API_NODE_OPTIONS> <API_ENTRY>`), its log in a file. */
function startApiAt(databaseUrl: string, logLevel: string) {
  // The log goes to a file, as a process manager would collect it; the load generator never reads it.
  return startApi({
    databaseUrl,
    prefix: PREFIX,
    logLevel,
    logFile: join(LOG_DIR, `api-${logLevel}.log`),
    nodeArgs: [...API_NODE_OPTIONS, ...(CPU_PROF_DIR ? cpuProfFlags(CPU_PROF_DIR, `api-${logLevel}`) : [])],
    entry: API_ENTRY,
  });
}

async function startBare(payloadFile: string): Promise<Started> {
  const port = await freePort();
  const logFile = join(LOG_DIR, 'bare.log');
  const child = spawnLogged(['bench/bare-server.ts', payloadFile, String(port)], logFile);
  await waitForLog(child, logFile, /listening/, 'the bare server');
  return { child, port };
}

// ---------------------------------------------------------------- CPU accounting

async function cpuSnapshot() {
  return {
    at: performance.now(),
    procs: processCpuTimes(),
    machine: machineCpu(),
    // PostgreSQL backends serving the bench database (other databases' backends belong to other work).
    backends: await admin((c) => backendPids(c, DB_NAME)),
  };
}
/**
 * Cores in use on average (1.0 = one core fully busy) between two snapshots: the server under test,
 * PostgreSQL (the bench database's backends plus the server's own background processes), Redis
 * (the one shared server), this load generator, kernel interrupt work (loopback networking is
 * mostly softirq), hypervisor steal, and everything else on the machine (including processes that
 * came and went in between), with its top consumers.
 */
function cpuCores(
  a: Awaited<ReturnType<typeof cpuSnapshot>>,
  b: Awaited<ReturnType<typeof cpuSnapshot>>,
  serverPid: number,
) {
  const wall = b.at - a.at;
  const cores = (ms: number) => Math.round((ms / wall) * 100) / 100;
  const backends = new Set([...a.backends, ...b.backends]);
  const sums = { server: 0, postgres: 0, redis: 0, loadgen: 0, other: 0 };
  let serverSys = 0;
  const others = new Map<string, number>();
  for (const [pid, after] of b.procs) {
    const delta = after.ms - (a.procs.get(pid)?.ms ?? 0);
    if (delta <= 0) continue;
    if (pid === serverPid) {
      sums.server += delta;
      serverSys += after.sysMs - (a.procs.get(pid)?.sysMs ?? 0);
    } else if (pid === process.pid) sums.loadgen += delta;
    else if (after.comm.startsWith('redis-server')) sums.redis += delta;
    else if (after.comm === 'postgres' && (backends.has(pid) || !/\(\d+\)|\[local\]/.test(cmdline(pid))))
      sums.postgres += delta;
    else {
      sums.other += delta;
      others.set(after.comm, (others.get(after.comm) ?? 0) + delta);
    }
  }
  const top = [...others].sort((x, y) => y[1] - x[1]).slice(0, 3);
  const machine = b.machine.busy - a.machine.busy;
  const irq = b.machine.irq - a.machine.irq;
  // Processes that started and ended between the snapshots (test runs, compilers) appear in no
  // snapshot: count whatever machine time the known parties do not explain as "other" too.
  const unexplained = machine - irq - sums.server - sums.postgres - sums.redis - sums.loadgen;
  return {
    server: cores(sums.server),
    /** The kernel's share of the server's CPU time (system calls). */
    server_kernel_share: sums.server > 0 ? round2(serverSys / sums.server) : 0,
    postgres: cores(sums.postgres),
    redis: cores(sums.redis),
    loadgen: cores(sums.loadgen),
    kernel_irq: cores(irq),
    steal: cores(b.machine.steal - a.machine.steal),
    other: cores(Math.max(sums.other, unexplained)),
    other_top: Object.fromEntries(top.map(([comm, ms]) => [comm, cores(ms)])),
    machine: cores(machine),
  };
}
function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------- load generation

interface HttpCall {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  expect: number;
}

interface Measured {
  requests: number;
  duration_s: number;
  rps: number;
  latency_ms: { p50: number; p90: number; p99: number; max: number; mean: number };
  non2xx: number;
  unexpected_status: number;
  errors: number;
  timeouts: number;
  status_codes: Record<string, number>;
}

/** One autocannon run of `seconds` with CONNECTIONS connections; latencies kept exactly (µs resolution). */
async function load(port: number, req: HttpCall, seconds: number): Promise<Measured> {
  let latencies = new Float64Array(1 << 16);
  let n = 0;
  let unexpected = 0;
  // Without a callback autocannon returns a promise that is also the instance (an event emitter).
  const instance = autocannon({
    url: `http://127.0.0.1:${port}${req.path}`,
    method: req.method,
    headers: req.headers,
    ...(req.body !== undefined && { body: req.body }),
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10,
  }) as unknown as autocannon.Instance & Promise<autocannon.Result>;
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    if (statusCode !== req.expect) unexpected++;
    if (n === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[n++] = responseTime;
  });
  const result = await instance;
  const sorted = latencies.slice(0, n).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats as Record<string, { count: number }>).map(([k, v]) => [k, v.count]),
  );
  return {
    requests: n,
    duration_s: result.duration,
    rps: Math.round(n / result.duration),
    latency_ms: {
      p50: round2(percentile(sorted, 50)),
      p90: round2(percentile(sorted, 90)),
      p99: round2(percentile(sorted, 99)),
      max: round2(sorted[n - 1] ?? Number.NaN),
      mean: round2(sum / n),
    },
    non2xx: result.non2xx,
    unexpected_status: unexpected,
    errors: result.errors,
    timeouts: result.timeouts,
    status_codes: statusCodes,
  };
}

interface ScenarioResult extends Measured {
  scenario: string;
  server: string;
  log_level: string | null;
  connections: number;
  valid: boolean;
  warmup: { requests: number; failures: number };
  cpu_cores: ReturnType<typeof cpuCores>;
  /** CPU time of the server process per request: the cost that bounds one single-threaded process. */
  server_cpu_ms_per_request: number;
  /** Cores busy on this machine just before the scenario (idle API included). */
  machine_busy_before: number;
  /** Other work used at least DISTURBED_CORES cores during the measurement (after every retry). */
  disturbed: boolean;
  attempt: number;
  target: string | null;
  target_met: boolean | null;
}

const failuresOf = (m: Measured) => m.non2xx + m.errors + m.timeouts + m.unexpected_status;

/** Other work using more than this many cores during a measurement disturbs it: measure again. */
const DISTURBED_CORES = 0.25;

async function scenario(
  name: string,
  server: Started,
  logLevel: string | null,
  req: HttpCall,
  target: ScenarioResult['target'],
  meets: (m: Measured) => boolean,
): Promise<ScenarioResult> {
  let best: ScenarioResult | undefined;
  for (let attempt = 1; attempt <= 1 + RETRIES; attempt++) {
    // Other work on this machine (tests, builds) skews every figure: wait for a quiet one first.
    const busyBefore = await waitForQuiet(0.25, MAX_WAIT_S * 1000);
    process.stderr.write(`bench: ${name}: warm-up ${WARMUP_S} s, measuring ${MEASURE_S} s … `);
    const warm = await load(server.port, req, WARMUP_S);
    const before = await cpuSnapshot();
    const m = await load(server.port, req, MEASURE_S);
    const after = await cpuSnapshot();
    const valid = failuresOf(m) === 0 && failuresOf(warm) === 0;
    const cores = cpuCores(before, after, server.child.pid!);
    const disturbed = cores.other >= DISTURBED_CORES;
    process.stderr.write(
      `${m.rps} req/s, p50 ${m.latency_ms.p50} ms, p99 ${m.latency_ms.p99} ms` +
        `${valid ? '' : ' (INVALID: failures)'}${disturbed ? ` (disturbed: other work used ${cores.other} cores)` : ''}\n`,
    );
    if (!valid) process.stderr.write(`bench: status codes ${JSON.stringify(m.status_codes)}\n`);
    const result: ScenarioResult = {
      scenario: name,
      server: name.startsWith('GET /bare') ? 'bench/bare-server.ts' : relative(ROOT, API_ENTRY),
      log_level: logLevel,
      connections: CONNECTIONS,
      ...m,
      valid,
      warmup: { requests: warm.requests, failures: failuresOf(warm) },
      cpu_cores: cores,
      server_cpu_ms_per_request: round2((cores.server * 1000) / m.rps),
      machine_busy_before: busyBefore,
      disturbed,
      attempt,
      target,
      target_met: target === null ? null : valid && meets(m),
    };
    // An invalid run is reported as it is; of the valid ones, the least disturbed is kept.
    if (!valid) return result;
    if (!best || cores.other < best.cpu_cores.other) best = result;
    if (!disturbed) break;
  }
  return best!;
}

/** The commit measured, and whether the API's sources differ from it. */
function codeState() {
  const git = (...a: string[]) => execFileSync('git', a, { cwd: ROOT, encoding: 'utf8' }).trim();
  try {
    const dirty = git('status', '--porcelain', '--', 'apps/api', 'packages');
    return { commit: git('rev-parse', 'HEAD'), api_sources_modified: dirty.split('\n').filter(Boolean) };
  } catch {
    return { commit: 'unknown', api_sources_modified: [] };
  }
}

// ---------------------------------------------------------------- the run

async function main() {
  log(`database ${DB_NAME}, Redis prefix ${PREFIX}`);
  const databaseUrl = await createBenchDatabase(DB_NAME);

  const db = createDatabase({ url: databaseUrl, max: 2 });
  const listKey = await createKey(db, 'bench@example.com', ['jobs:read', 'jobs:write']);
  const creatorKey = await createKey(db, 'bench-create@example.com', ['jobs:read', 'jobs:write']);
  await db.$disconnect();
  await db.pool.end();

  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const listReq: HttpCall = {
    method: 'GET',
    path: '/jobs/status',
    headers: auth(listKey.token),
    expect: 200,
  };
  const createReq: HttpCall = {
    method: 'POST',
    path: '/jobs',
    headers: { ...auth(creatorKey.token), 'content-type': 'application/json' },
    body: JSON.stringify(validJob()),
    expect: 201,
  };

  const results: ScenarioResult[] = [];
  let payloadFile: string | undefined;
  let payloadBytes = 0;

  for (const [i, logLevel] of LOG_LEVELS.entries()) {
    const api = await startApiAt(databaseUrl, logLevel);
    try {
      if (i === 0) {
        // Seed the list user's 100 jobs through the API itself.
        const call = apiClient(api.base, listKey.token);
        for (let j = 0; j < JOBS_OF_LIST_USER; j++) {
          const job = { ...validJob(), name: `Bench job ${j}`, source: `https://example.com/p/${j}` };
          const res = await call('POST', '/jobs', job);
          if (res.status !== 201)
            throw new Error(`seeding: POST /jobs answered ${res.status}: ${JSON.stringify(res.body)}`);
        }
        const res = await fetch(`${api.base}/jobs/status`, { headers: auth(listKey.token) });
        const text = await res.text();
        const body = JSON.parse(text) as { count: number };
        if (res.status !== 200 || body.count !== JOBS_OF_LIST_USER)
          throw new Error(`GET /jobs/status answered ${res.status} with ${body.count} jobs`);
        payloadBytes = Buffer.byteLength(text);
        payloadFile = join(tmp, 'list-payload.json');
        writeFileSync(payloadFile, text);
      }
      const lvl = `LOG_LEVEL=${logLevel}`;
      if (SCENARIOS.has('list'))
        results.push(
          await scenario(
            `GET /jobs/status (100 jobs), ${lvl}`,
            api,
            logLevel,
            listReq,
            `>= ${TARGETS.list.rps} req/s, p99 < ${TARGETS.list.p99} ms`,
            (m) => m.rps >= TARGETS.list.rps && m.latency_ms.p99 < TARGETS.list.p99,
          ),
        );
      if (SCENARIOS.has('create'))
        results.push(
          await scenario(
            `POST /jobs, ${lvl}`,
            api,
            logLevel,
            createReq,
            `>= ${TARGETS.create.rps} req/s`,
            (m) => m.rps >= TARGETS.create.rps,
          ),
        );
    } finally {
      await stopChild(api.child);
    }
    if (i === 0 && SCENARIOS.has('bare')) {
      // The ceiling runs alone too, after the first API process has stopped.
      const bare = await startBare(payloadFile!);
      try {
        results.push(
          await scenario(
            'GET /bare (bare Express 5, same payload)',
            bare,
            null,
            { method: 'GET', path: '/bare', headers: {}, expect: 200 },
            null,
            () => true,
          ),
        );
      } finally {
        await stopChild(bare.child);
      }
    }
  }

  const summary = {
    benchmark: 'api',
    date: new Date().toISOString(),
    machine: machineInfo('API, PostgreSQL, Redis and the load generator share these cores'),
    settings: {
      connections: CONNECTIONS,
      warmup_s: WARMUP_S,
      measured_s: MEASURE_S,
      list_payload_bytes: payloadBytes,
      jobs_of_list_user: JOBS_OF_LIST_USER,
      api_db_pool: 20,
      api_entry: relative(ROOT, API_ENTRY),
      api_node_options: API_NODE_OPTIONS,
    },
    code: codeState(),
    targets: TARGETS,
    results,
    all_valid: results.every((r) => r.valid),
    any_disturbed: results.some((r) => r.disturbed),
    targets_met: results.filter((r) => r.target_met !== null).every((r) => r.target_met),
  };
  console.log(JSON.stringify(summary, null, 2));
  writeJsonOut(args['json-out'], summary);

  const yesNo = (v: boolean | null) => (v === null ? '–' : v ? 'yes' : 'no');
  console.log('');
  printTable(
    [
      'scenario',
      'req/s',
      'p50 ms',
      'p99 ms',
      'errors',
      'server CPU ms/req',
      'CPU cores: server / postgres / redis / load gen / kernel irq / other',
      'target',
      'met',
    ],
    'lrrrrrlll',
    results.map((r) => {
      const c = r.cpu_cores;
      return [
        r.scenario,
        r.rps,
        r.latency_ms.p50,
        r.latency_ms.p99,
        `${failuresOf(r)}${r.valid ? '' : ' (invalid)'}${r.disturbed ? ' (disturbed)' : ''}`,
        r.server_cpu_ms_per_request,
        `${c.server} / ${c.postgres} / ${c.redis} / ${c.loadgen} / ${c.kernel_irq} / ${c.other}`,
        r.target ?? 'ceiling',
        yesNo(r.target_met),
      ];
    }),
  );
  console.log('');
  console.log(
    `${summary.machine.nproc} cores (${summary.machine.cpu}), Node ${process.version}, ${CONNECTIONS} connections, ` +
      `${WARMUP_S} s warm-up + ${MEASURE_S} s measured per scenario; list payload ${payloadBytes} bytes.`,
  );
  return summary;
}

await runBench(async () => (await main()).all_valid);
