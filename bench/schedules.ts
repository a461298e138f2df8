/**
 * Schedules benchmark: N jobs (default 1,000) all due in the same minute, one API process (which
 * consumes the schedule ticks, apps/api/src/schedules/ticks.ts) and one scraper-worker process,
 * both real processes started with test/support/processes.ts `startApp`.
 *
 *   1. The jobs are created through the API (POST /jobs, 16 at a time, key from the keys CLI)
 *      with `scheduling: {minutes: [m], hours: [h]}` (UTC) for the first minute boundary at least
 *      --lead seconds ahead, rendering off, each on a page of an instant local site
 *      (test/support/site.ts, in this process). Every job's next_run_at must be that minute.
 *   2. Redis memory per scheduled job: the sum of MEMORY USAGE (SAMPLES 0) of every key under the
 *      bench's queue prefix before and after creating the N schedulers, divided by N, with a
 *      breakdown by key shape; also the server's INFO used_memory delta (noisy: the Redis server
 *      is shared with other work on this machine).
 *   3. Delay from the planned minute to each job's `job.started` event (events.created_at, which
 *      JobsService.run takes when it begins, before its transaction): p50/p90/p99/max, and
 *      whether all N started within 10 s. From the completed tick jobs: planned minute → tick
 *      picked up (processedOn), tick handling time (finishedOn − processedOn), and planned
 *      minute → tick handled (finishedOn: the run is committed and queued for the worker).
 *   4. Every run must end success (the worker scrapes the N one-page runs); each job has one run.
 *   5. A lone scheduled job: one job whose schedule covers the next --lone-samples minutes, after
 *      the burst has settled; the delay of each of its planned minutes (p99 of a handful of
 *      samples is their max).
 *
 * Own database (`scrapejobs_bench_schedules`), own Redis prefix, everything cleaned up at the end.
 *
 * The API runs with bench/fleet-memwatch.ts preloaded (event-loop delay, GC time); while the
 * ticks are handled, pg_stat_activity of the bench database is sampled every 100 ms (sessions
 * by state and wait event). `--cpu-prof <dir>` profiles the API and summarises the profile.
 *
 * Run: `pnpm exec node bench/schedules.ts [--jobs 1000] [--lone-samples 3] [--lead 60]
 *       [--log-level info] [--cpu-prof <dir>] [--json-out <file>]`
 * Env: BENCH_ADMIN_DATABASE_URL (postgresql://root@127.0.0.1:5432/postgres), REDIS_URL.
 * Prints a JSON summary, then a Markdown table.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createQueue } from '@scrapejobs/queues';
import { Redis } from 'ioredis';
import pg from 'pg';
import { TICK_CONCURRENCY } from '../apps/api/src/schedules/ticks.ts';
import { type Proc, startApp } from '../test/support/processes.ts';
import { startSite } from '../test/support/site.ts';
import {
  benchPrefix,
  cpuMsByName,
  cpuMsOf,
  createBenchDatabase,
  createKeyWithCli,
  deleteRedisKeys,
  freePort,
  machineCpu,
  memoryOf,
  REDIS_URL,
  ROOT,
  round2,
  scanKeys,
  sleep,
  summarize,
  summarizeProfile,
  waitForQuiet,
} from './support.ts';

const { values: args } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1000' },
    'lone-samples': { type: 'string', default: '3' },
    lead: { type: 'string', default: '60' },
    'log-level': { type: 'string', default: 'info' },
    'json-out': { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
const CPU_PROF_DIR = args['cpu-prof'] ? resolve(args['cpu-prof']) : undefined;
const N = Number(args.jobs);
const LONE_SAMPLES = Number(args['lone-samples']);
const LEAD_S = Number(args.lead);
const LOG_LEVEL = args['log-level']!;
const CREATE_CONCURRENCY = 16;
const DB_NAME = 'scrapejobs_bench_schedules';
const PREFIX = benchPrefix('sched');
const TARGET_S = 10;

const tmp = mkdtempSync(join(os.tmpdir(), 'bench-schedules-'));
const API_MEMWATCH = join(tmp, 'api-memwatch.jsonl');
const procs = new Set<Proc>();
let dropDb: (() => Promise<void>) | undefined;
let closeSite: (() => Promise<void>) | undefined;

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
  await closeSite?.().catch(() => {});
  if (dropDb)
    await dropDb().catch((err) => console.error(`bench: could not drop ${DB_NAME}: ${err.message}`));
  await deleteRedisKeys(PREFIX).catch((err) => console.error(`bench: Redis cleanup failed: ${err.message}`));
  rmSync(tmp, { recursive: true, force: true });
}

/** The API's own reports (bench/fleet-memwatch.ts) between two instants: event-loop delay and GC. */
function apiSelfReport(from: number, to: number) {
  let lines: { t: number; rss: number; loop_p99_ms: number; loop_max_ms: number; gc_ms: number }[] = [];
  try {
    lines = readFileSync(API_MEMWATCH, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((l) => l.t >= from && l.t <= to + 250);
  } catch {
    return null;
  }
  if (!lines.length) return null;
  const p99s = lines.map((l) => l.loop_p99_ms).sort((a, b) => a - b);
  return {
    samples: lines.length,
    event_loop_delay_ms: {
      median_of_interval_p99: p99s[Math.floor(p99s.length / 2)]!,
      max: Math.max(...lines.map((l) => l.loop_max_ms)),
    },
    gc_seconds: round2(lines.reduce((n, l) => n + l.gc_ms, 0) / 1000),
  };
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`bench: ${signal}, cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

const minuteAfter = (t: number) => Math.ceil(t / 60_000) * 60_000;
const log = (s: string) => process.stderr.write(`bench: ${s}\n`);

/** Sum of MEMORY USAGE of every key under the prefix, by key shape (ids and timestamps masked). */
async function prefixMemory(redis: Redis) {
  const keys = await scanKeys(redis, PREFIX);
  const byShape: Record<string, { keys: number; bytes: number }> = {};
  let total = 0;
  for (let i = 0; i < keys.length; i += 200) {
    const batch = keys.slice(i, i + 200);
    const pipe = redis.pipeline();
    for (const k of batch) pipe.call('MEMORY', 'USAGE', k, 'SAMPLES', '0');
    const res = (await pipe.exec()) ?? [];
    batch.forEach((k, j) => {
      const bytes = Number(res[j]?.[1] ?? 0);
      total += bytes;
      const shape = k
        .slice(PREFIX.length + 1)
        .replace(/job_[0-9A-Z]{26}/g, '<job_id>')
        .replace(/run_[0-9A-Z]{26}/g, '<run_id>')
        .replace(/\b\d{6,}\b/g, '<n>');
      byShape[shape] ??= { keys: 0, bytes: 0 };
      byShape[shape].keys++;
      byShape[shape].bytes += bytes;
    });
  }
  return { keys: keys.length, bytes: total, by_shape: byShape };
}
async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(info.match(/^used_memory:(\d+)/m)?.[1] ?? Number.NaN);
}

async function main() {
  log(`database ${DB_NAME}, Redis prefix ${PREFIX}, ${N} jobs, ${os.availableParallelism()} cores`);
  const database = await createBenchDatabase(DB_NAME);
  dropDb = database.drop;
  const site = await startSite();
  closeSite = site.close;
  const sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
  const redis = new Redis(REDIS_URL);
  const ticks = createQueue('scheduleTicks', redis, PREFIX);

  try {
    const token = await createKeyWithCli(database.url, 'bench-schedules@example.com');
    const port = await freePort();
    const common = {
      DATABASE_URL: database.url,
      REDIS_URL,
      QUEUE_PREFIX: PREFIX,
      LOG_LEVEL,
      ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
    };
    if (CPU_PROF_DIR) mkdirSync(CPU_PROF_DIR, { recursive: true });
    const api = startApp('api', {
      ...common,
      PORT: String(port),
      API_RATE_LIMIT_PER_MINUTE: '1000000',
      BENCH_MEMWATCH_FILE: API_MEMWATCH,
      NODE_OPTIONS: [
        `--import=${join(ROOT, 'bench/fleet-memwatch.ts')}`,
        ...(CPU_PROF_DIR
          ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`, `--cpu-prof-name=api-${Date.now()}.cpuprofile`]
          : []),
      ].join(' '),
    });
    procs.add(api);
    const worker = startApp('scraper-worker', common);
    procs.add(worker);
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    while (
      (await fetch(`${base}/ready`).then(
        (r) => r.status,
        () => 0,
      )) !== 200
    ) {
      if (Date.now() > deadline) throw new Error('the API did not become ready');
      await sleep(200);
    }
    if (['info', 'debug', 'trace'].includes(LOG_LEVEL))
      await worker.waitForLog((l) => l.msg === 'scraper worker started', 30_000);
    else await sleep(3000);
    await sleep(1000);

    const post = async (body: unknown) => {
      const res = await fetch(`${base}/jobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as { job_id: string; next_run_at: string | null };
      if (res.status !== 201) throw new Error(`POST /jobs answered ${res.status}: ${JSON.stringify(json)}`);
      return json;
    };
    const jobBody = (i: number, scheduling: { minutes: number[]; hours: number[] }) => ({
      name: `sched ${i}`,
      source: `${site.url}/page/${i}`,
      queries: [{ name: 'title', type: 'css', query: 'h1' }],
      scheduling,
      render_config: { enabled: false },
    });

    // ------------------------------------------------------------ the burst
    const busyBefore = await waitForQuiet();
    const memBefore = await prefixMemory(redis);
    const usedBefore = await usedMemory(redis);
    const planned = minuteAfter(Date.now() + LEAD_S * 1000);
    const when = new Date(planned);
    const scheduling = { minutes: [when.getUTCMinutes()], hours: [when.getUTCHours()] };
    log(`creating ${N} jobs due at ${when.toISOString()} …`);
    const createStart = performance.now();
    const created: { job_id: string; next_run_at: string | null }[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CREATE_CONCURRENCY }, async () => {
        while (next < N) {
          const i = next++;
          created.push(await post(jobBody(i, scheduling)));
        }
      }),
    );
    const createS = (performance.now() - createStart) / 1000;
    const badNext = created.filter((j) => new Date(j.next_run_at ?? 0).getTime() !== planned).length;
    const schedulers = await ticks.getJobSchedulersCount();
    const memAfter = await prefixMemory(redis);
    const usedAfter = await usedMemory(redis);
    const leftS = (planned - Date.now()) / 1000;
    log(
      `created in ${round2(createS)} s (${Math.round(N / createS)} jobs/s), ${schedulers} schedulers, ` +
        `${round2((memAfter.bytes - memBefore.bytes) / N)} bytes per job; ${round2(leftS)} s to the minute`,
    );
    if (leftS < 5)
      throw new Error(`creating the jobs took too long (${round2(createS)} s): rerun with a larger --lead`);

    // Watch both processes' CPU and memory around the minute.
    const cpu0 = { api: cpuMsOf(api.child.pid!) ?? 0, worker: cpuMsOf(worker.child.pid!) ?? 0 };
    let peakApiRss = 0;
    let peakWorkerRss = 0;
    const memTimer = setInterval(() => {
      peakApiRss = Math.max(peakApiRss, memoryOf(api.child.pid!)?.rss ?? 0);
      peakWorkerRss = Math.max(peakWorkerRss, memoryOf(worker.child.pid!)?.rss ?? 0);
    }, 100);

    // From the minute on: the machine's CPU, and what the bench database's sessions are doing.
    await sleep(Math.max(0, planned - Date.now()));
    const machine0 = machineCpu();
    const procs0 = {
      api: cpuMsOf(api.child.pid!) ?? 0,
      worker: cpuMsOf(worker.child.pid!) ?? 0,
      bench: cpuMsOf(process.pid) ?? 0,
      ...cpuMsByName(['postgres', 'redis-server']),
    };
    const waits: Record<string, number> = {};
    let waitSamples = 0;
    let sampling = true;
    const sampler = (async () => {
      const c = new pg.Client({ connectionString: database.url });
      await c.connect();
      try {
        while (sampling) {
          const r = await c.query<{ what: string; n: string }>(
            `SELECT CASE WHEN state = 'active' THEN 'active: ' || coalesce(wait_event_type || '/' || wait_event, 'on CPU')
                         ELSE coalesce(state, '?') END AS what, count(*) AS n
               FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() GROUP BY 1`,
            [DB_NAME],
          );
          for (const row of r.rows) waits[row.what] = (waits[row.what] ?? 0) + Number(row.n);
          waitSamples++;
          await sleep(100);
        }
      } finally {
        await c.end();
      }
    })();
    log('the minute has come; waiting for the job.started events …');
    const startedRows = async () =>
      (
        await sql.query<{ job_id: string; at: string }>(
          `SELECT e.job_id, (extract(epoch from e.created_at) * 1000)::float8 AS at
             FROM events e WHERE e.kind = 'job.started'`,
        )
      ).rows;
    let started = await startedRows();
    const waitUntil = planned + 180_000;
    while (started.length < N && Date.now() < waitUntil) {
      await sleep(250);
      started = await startedRows();
    }
    sampling = false;
    await sampler;
    const machine1 = machineCpu();
    const procs1 = {
      api: cpuMsOf(api.child.pid!) ?? 0,
      worker: cpuMsOf(worker.child.pid!) ?? 0,
      bench: cpuMsOf(process.pid) ?? 0,
      ...cpuMsByName(['postgres', 'redis-server']),
    };
    const burstWallMs = Date.now() - planned;
    const apiReport = apiSelfReport(planned, Date.now());
    const delays = started.map((r) => Number(r.at) - planned);
    const burst = summarize(delays);
    const within = delays.filter((d) => d >= 0 && d <= TARGET_S * 1000).length;
    log(`${started.length} started; p50 ${burst.p50} ms, p99 ${burst.p99} ms, max ${burst.max} ms`);

    // Runs: wait for the worker to finish them all.
    const runsState = async () =>
      (
        await sql.query<{ status: string; trigger: string; n: string; last: string | null }>(
          `SELECT status, trigger, count(*) AS n, (extract(epoch from max(finished_at)) * 1000)::float8 AS last
             FROM runs GROUP BY status, trigger`,
        )
      ).rows;
    let state = await runsState();
    const runsDeadline = Date.now() + 600_000;
    while (state.some((r) => r.status === 'running') && Date.now() < runsDeadline) {
      await sleep(500);
      state = await runsState();
    }
    clearInterval(memTimer);
    const cpu1 = { api: cpuMsOf(api.child.pid!) ?? 0, worker: cpuMsOf(worker.child.pid!) ?? 0 };
    const runsByStatus = Object.fromEntries(state.map((r) => [`${r.trigger}:${r.status}`, Number(r.n)]));
    const lastFinished = Math.max(...state.map((r) => Number(r.last ?? 0)));
    const perJob = await sql.query<{ n: string }>(
      'SELECT count(*) AS n FROM runs GROUP BY job_id HAVING count(*) > 1',
    );

    // BullMQ's side: when each tick was picked up, and how long the handler took.
    const done = await ticks.getJobs(['completed', 'failed'], 0, -1);
    const pickup = summarize(done.filter((j) => j.processedOn).map((j) => j.processedOn! - planned));
    const handling = summarize(
      done.filter((j) => j.processedOn && j.finishedOn).map((j) => j.finishedOn! - j.processedOn!),
    );
    // The event's created_at is taken when JobsService.run begins; the run is committed and
    // queued for the worker only when the tick handler returns.
    const tickDone = summarize(done.filter((j) => j.finishedOn).map((j) => j.finishedOn! - planned));
    const failedTicks = done.filter((j) => j.failedReason).length;
    const failedReasons: Record<string, number> = {};
    for (const j of done)
      if (j.failedReason) {
        const reason = j.failedReason.replace(/job_[0-9A-Z]{26}/g, '<job_id>').slice(0, 200);
        failedReasons[reason] = (failedReasons[reason] ?? 0) + 1;
      }
    const neverStarted = N - new Set(started.map((r) => r.job_id)).size;
    const memAfterFire = await prefixMemory(redis);

    // ------------------------------------------------------------ the lone job
    const lone: { planned: string; delay_ms: number | null }[] = [];
    if (LONE_SAMPLES > 0) {
      const first = minuteAfter(Date.now() + 20_000);
      const times = Array.from({ length: LONE_SAMPLES }, (_, i) => first + i * 60_000);
      const loneScheduling = {
        minutes: [...new Set(times.map((t) => new Date(t).getUTCMinutes()))],
        hours: [...new Set(times.map((t) => new Date(t).getUTCHours()))],
      };
      const job = await post(jobBody(N, loneScheduling));
      log(`lone job ${job.job_id}: ${LONE_SAMPLES} planned minutes from ${new Date(first).toISOString()} …`);
      for (const t of times) {
        await sleep(Math.max(0, t - Date.now()));
        let row: { at: string } | undefined;
        const until = t + 60_000;
        while (!row && Date.now() < until) {
          await sleep(100);
          row = (
            await sql.query<{ at: string }>(
              `SELECT (extract(epoch from created_at) * 1000)::float8 AS at FROM events
                WHERE kind = 'job.started' AND job_id = $1 AND created_at >= to_timestamp($2 / 1000.0) AT TIME ZONE 'UTC'
                ORDER BY created_at LIMIT 1`,
              [job.job_id, t],
            )
          ).rows[0];
        }
        lone.push({ planned: new Date(t).toISOString(), delay_ms: row ? round2(Number(row.at) - t) : null });
        log(`lone job: ${lone.at(-1)!.delay_ms} ms`);
      }
    }
    const loneDelays = lone.filter((l) => l.delay_ms !== null).map((l) => l.delay_ms!);

    let apiProfile: ReturnType<typeof summarizeProfile> | null = null;
    if (CPU_PROF_DIR) {
      await stopProc(api);
      const files = readdirSync(CPU_PROF_DIR).filter(
        (f) => f.startsWith('api-') && f.endsWith('.cpuprofile'),
      );
      if (files.length) apiProfile = summarizeProfile(join(CPU_PROF_DIR, files.sort().at(-1)!));
    }
    const perJobBytes = round2((memAfter.bytes - memBefore.bytes) / N);
    const shapes = Object.entries(memAfter.by_shape)
      .map(([shape, v]) => ({
        shape,
        keys: v.keys - (memBefore.by_shape[shape]?.keys ?? 0),
        bytes: v.bytes - (memBefore.by_shape[shape]?.bytes ?? 0),
      }))
      .filter((s) => s.bytes !== 0)
      .sort((a, b) => b.bytes - a.bytes);
    const allWithin = started.length === N && within === N;
    const summary = {
      benchmark: 'schedules',
      date: new Date().toISOString(),
      machine: {
        nproc: os.availableParallelism(),
        cpu: os.cpus()[0]?.model ?? 'unknown',
        node: process.version,
        loadavg_at_end: os.loadavg().map(round2),
        note: 'API, worker, PostgreSQL, Redis and this process share these cores; other work on the machine too',
      },
      machine_busy_before_creating: busyBefore,
      settings: {
        jobs: N,
        log_level: LOG_LEVEL,
        create_concurrency: CREATE_CONCURRENCY,
        tick_worker_concurrency: TICK_CONCURRENCY,
      },
      creation: {
        seconds: round2(createS),
        jobs_per_s: Math.round(N / createS),
        schedulers_in_redis: schedulers,
        next_run_at_wrong: badNext,
      },
      redis: {
        prefix_bytes_before: memBefore.bytes,
        prefix_bytes_after: memAfter.bytes,
        bytes_per_scheduled_job: perJobBytes,
        keys_per_scheduled_job: round2((memAfter.keys - memBefore.keys) / N),
        by_key_shape: shapes,
        used_memory_delta_per_job: round2((usedAfter - usedBefore) / N),
        prefix_bytes_after_firing: memAfterFire.bytes,
        note: 'used_memory is server-wide (shared Redis); the MEMORY USAGE sum covers only this prefix',
      },
      burst: {
        planned_minute: when.toISOString(),
        started: started.length,
        delay_ms: burst,
        within_10s: within,
        all_started_within_10s: allWithin,
        tick_pickup_ms: pickup,
        tick_handling_ms: handling,
        tick_finished_ms: tickDone,
        failed_ticks: failedTicks,
        failed_tick_reasons: failedReasons,
        jobs_never_started: neverStarted,
        runs: runsByStatus,
        jobs_with_more_than_one_run: perJob.rowCount,
        last_run_finished_after_minute_s: round2((lastFinished - planned) / 1000),
        cpu_seconds_from_minute_to_last_run: {
          api: round2((cpu1.api - cpu0.api) / 1000),
          worker: round2((cpu1.worker - cpu0.worker) / 1000),
        },
        peak_rss_mib: { api: peakApiRss, worker: peakWorkerRss },
        until_all_started: {
          seconds: round2(burstWallMs / 1000),
          machine_busy_cores: round2((machine1.busy - machine0.busy) / burstWallMs),
          cores: (() => {
            const c = Object.fromEntries(
              Object.entries(procs1).map(([k, v]) => [
                k,
                round2((v - (procs0[k as keyof typeof procs0] ?? 0)) / burstWallMs),
              ]),
            );
            const ours = Object.values(c).reduce((a, b) => a + b, 0);
            return {
              ...c,
              note: 'postgres and redis-server: all their processes (other databases included)',
              everything_else: round2((machine1.busy - machine0.busy) / burstWallMs - ours),
            };
          })(),
          api_self_report: apiReport,
          bench_db_sessions_avg: Object.fromEntries(
            Object.entries(waits)
              .sort((a, b) => b[1] - a[1])
              .map(([k, v]) => [k, round2(v / Math.max(1, waitSamples))]),
          ),
        },
      },
      api_profile: apiProfile,
      lone: { samples: lone, delay_ms: summarize(loneDelays) },
      targets: { all_started_within_10s: allWithin },
      valid:
        badNext === 0 &&
        schedulers === N &&
        started.length === N &&
        (runsByStatus['schedule:success'] ?? 0) === N &&
        perJob.rowCount === 0 &&
        failedTicks === 0 &&
        lone.every((l) => l.delay_ms !== null),
    };
    console.log(JSON.stringify(summary, null, 2));
    if (args['json-out']) {
      mkdirSync(resolve(args['json-out'], '..'), { recursive: true });
      writeFileSync(resolve(args['json-out']), `${JSON.stringify(summary, null, 2)}\n`);
    }
    console.log('');
    console.log('| measure | value |');
    console.log('|---|---|');
    console.log(`| jobs due in one minute | ${N} (created in ${round2(createS)} s through the API) |`);
    console.log(
      `| delay minute → job.started, p50 / p90 / p99 / max | ${burst.p50} / ${burst.p90} / ${burst.p99} / ${burst.max} ms |`,
    );
    console.log(
      `| started within ${TARGET_S} s | ${within} of ${N} (${allWithin ? 'target met' : 'target MISSED'}) |`,
    );
    console.log(
      `| tick picked up (BullMQ), p50 / p99 / max | ${pickup.p50} / ${pickup.p99} / ${pickup.max} ms |`,
    );
    console.log(
      `| tick handler time, p50 / p99 / max | ${handling.p50} / ${handling.p99} / ${handling.max} ms |`,
    );
    console.log(
      `| minute → tick handled (run committed and queued), p50 / p99 / max | ${tickDone.p50} / ${tickDone.p99} / ${tickDone.max} ms |`,
    );
    console.log(`| failed ticks / jobs that never started | ${failedTicks} / ${neverStarted} |`);
    console.log(
      `| runs | ${JSON.stringify(runsByStatus)}; last finished ${summary.burst.last_run_finished_after_minute_s} s after the minute |`,
    );
    console.log(
      `| lone job delay (${loneDelays.length} minutes), p50 / max | ${summary.lone.delay_ms.p50} / ${summary.lone.delay_ms.max} ms |`,
    );
    console.log(
      `| Redis per scheduled job | ${perJobBytes} bytes (MEMORY USAGE under the prefix), ${summary.redis.keys_per_scheduled_job} keys; used_memory delta ${summary.redis.used_memory_delta_per_job} bytes |`,
    );
    return summary;
  } finally {
    await ticks.close().catch(() => {});
    redis.disconnect();
    await sql.end().catch(() => {});
  }
}

try {
  const summary = await main();
  process.exitCode = summary.valid ? 0 : 1;
} catch (err) {
  console.error(`bench: ${(err as Error).stack ?? err}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
