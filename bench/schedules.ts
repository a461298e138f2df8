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
import os from 'node:os';
import { join } from 'node:path';
import { createQueue } from '@scrapejobs/queues';
import { Redis } from 'ioredis';
import pg from 'pg';
import { TICK_CONCURRENCY } from '../apps/api/src/schedules/ticks.ts';
import { startSite } from '../test/support/site.ts';
import {
  apiClient,
  atCleanup,
  benchPrefix,
  cpuMsByName,
  cpuMsOf,
  cpuProfFlags,
  createBenchDatabase,
  createKeyWithCli,
  eventLoopDelay,
  gcSeconds,
  latestProfile,
  log,
  machineCpu,
  machineInfo,
  memorySampler,
  memwatchFlag,
  memwatchSamples,
  parseOptions,
  printTable,
  profileDir,
  REDIS_URL,
  round2,
  runBench,
  scanKeys,
  sleep,
  startApiAndWorker,
  stopChild,
  summarize,
  tempDir,
  waitForQuiet,
  writeJsonOut,
} from './support.ts';

const args = parseOptions({
  jobs: '1000',
  'lone-samples': '3',
  lead: '60',
  'log-level': 'info',
  'json-out': undefined,
  'cpu-prof': undefined,
});
const CPU_PROF_DIR = profileDir(args['cpu-prof']);
const N = Number(args.jobs);
const LONE_SAMPLES = Number(args['lone-samples']);
const LEAD_S = Number(args.lead);
const LOG_LEVEL = args['log-level'];
const CREATE_CONCURRENCY = 16;
const DB_NAME = 'scrapejobs_bench_schedules';
const PREFIX = benchPrefix('sched');
const TARGET_S = 10;

const tmp = tempDir('schedules');
const API_MEMWATCH = join(tmp, 'api-memwatch.jsonl');

/** The API's own reports (bench/fleet-memwatch.ts) between two instants: event-loop delay and GC. */
function apiSelfReport(from: number, to: number) {
  const lines = memwatchSamples(API_MEMWATCH, from, to, 250);
  if (!lines.length) return null;
  return { samples: lines.length, event_loop_delay_ms: eventLoopDelay(lines), gc_seconds: gcSeconds(lines) };
}

const minuteAfter = (t: number) => Math.ceil(t / 60_000) * 60_000;

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
  const databaseUrl = await createBenchDatabase(DB_NAME);
  const site = await startSite();
  atCleanup(() => site.close().catch(() => {}));
  const sql = new pg.Client({ connectionString: databaseUrl });
  await sql.connect();
  const redis = new Redis(REDIS_URL);
  const ticks = createQueue('scheduleTicks', redis, PREFIX);

  try {
    const token = await createKeyWithCli(databaseUrl, 'bench-schedules@example.com');
    const { api, worker, base } = await startApiAndWorker({
      databaseUrl,
      prefix: PREFIX,
      logLevel: LOG_LEVEL,
      api: {
        BENCH_MEMWATCH_FILE: API_MEMWATCH,
        NODE_OPTIONS: [memwatchFlag(), ...(CPU_PROF_DIR ? cpuProfFlags(CPU_PROF_DIR, 'api') : [])].join(' '),
      },
    });
    await sleep(1000);

    const call = apiClient(base, token);
    const post = async (body: unknown) => {
      const res = await call<{ job_id: string; next_run_at: string | null }>('POST', '/jobs', body);
      if (res.status !== 201)
        throw new Error(`POST /jobs answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body;
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
    const apiMemory = memorySampler(api.child.pid!);
    const workerMemory = memorySampler(worker.child.pid!);

    // From the minute on: the machine's CPU, and what the bench database's sessions are doing.
    /** CPU time (ms) so far of both processes, this one, and every PostgreSQL and Redis process. */
    const processesCpu = () => ({
      api: cpuMsOf(api.child.pid!) ?? 0,
      worker: cpuMsOf(worker.child.pid!) ?? 0,
      bench: cpuMsOf(process.pid) ?? 0,
      ...cpuMsByName(['postgres', 'redis-server']),
    });
    await sleep(Math.max(0, planned - Date.now()));
    const machine0 = machineCpu();
    const procs0 = processesCpu();
    const waits: Record<string, number> = {};
    let waitSamples = 0;
    let sampling = true;
    const sampler = (async () => {
      const c = new pg.Client({ connectionString: databaseUrl });
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
    const procs1 = processesCpu();
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
    const peakApiRss = apiMemory.stop().peak_rss_mib;
    const peakWorkerRss = workerMemory.stop().peak_rss_mib;
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

    let apiProfile: ReturnType<typeof latestProfile> = null;
    if (CPU_PROF_DIR) {
      await stopChild(api.child); // the profile is written when the API stops
      apiProfile = latestProfile(CPU_PROF_DIR, 'api');
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
      machine: machineInfo(
        'API, worker, PostgreSQL, Redis and this process share these cores; other work on the machine too',
      ),
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
    writeJsonOut(args['json-out'], summary);
    console.log('');
    printTable(['measure', 'value'], 'll', [
      ['jobs due in one minute', `${N} (created in ${round2(createS)} s through the API)`],
      [
        'delay minute → job.started, p50 / p90 / p99 / max',
        `${burst.p50} / ${burst.p90} / ${burst.p99} / ${burst.max} ms`,
      ],
      [`started within ${TARGET_S} s`, `${within} of ${N} (${allWithin ? 'target met' : 'target MISSED'})`],
      ['tick picked up (BullMQ), p50 / p99 / max', `${pickup.p50} / ${pickup.p99} / ${pickup.max} ms`],
      ['tick handler time, p50 / p99 / max', `${handling.p50} / ${handling.p99} / ${handling.max} ms`],
      [
        'minute → tick handled (run committed and queued), p50 / p99 / max',
        `${tickDone.p50} / ${tickDone.p99} / ${tickDone.max} ms`,
      ],
      ['failed ticks / jobs that never started', `${failedTicks} / ${neverStarted}`],
      [
        'runs',
        `${JSON.stringify(runsByStatus)}; last finished ${summary.burst.last_run_finished_after_minute_s} s after the minute`,
      ],
      [
        `lone job delay (${loneDelays.length} minutes), p50 / max`,
        `${summary.lone.delay_ms.p50} / ${summary.lone.delay_ms.max} ms`,
      ],
      [
        'Redis per scheduled job',
        `${perJobBytes} bytes (MEMORY USAGE under the prefix), ${summary.redis.keys_per_scheduled_job} keys; used_memory delta ${summary.redis.used_memory_delta_per_job} bytes`,
      ],
    ]);
    return summary;
  } finally {
    await ticks.close().catch(() => {});
    redis.disconnect();
    await sql.end().catch(() => {});
  }
}

await runBench(async () => (await main()).valid);
