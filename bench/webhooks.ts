/**
 * Webhook delivery benchmark: sustained deliveries/s of ONE webhook-worker process to a local
 * receiver, and the latency from the event (the outbox row's created_at) to the request
 * arriving at the receiver, next to a bare HTTP POST loop to the same receiver as the ceiling.
 *
 *   1. sustained: outbox events are inserted at a steady rate (as the services write them, one
 *      `job.completed` row each, spread over 10 users with one subscribed webhook each), for
 *      `--seconds` after a warm-up; every event must arrive exactly once. Reported: deliveries/s
 *      over the window, p50/p99/max latency, the worker's CPU use.
 *   2. backlog: `--backlog` events inserted at once; deliveries/s while the worker drains them
 *      (the most one worker process does here).
 *   3. bare: a separate process POSTs the same body to the same receiver with keep-alive
 *      sockets and the worker's concurrency, no database, no queue: the ceiling for the machine.
 *
 * The worker runs as a child process (`node apps/webhook-worker/src/main.ts`) with its log in a
 * file, LOG_LEVEL=info (the production default, one line per attempt), on its own database
 * (`scrapejobs_bench_webhooks`, dropped and re-created) and Redis prefix. The receiver runs in
 * this process on 127.0.0.1 and answers 200 at once; it reads the event time from the body's
 * `timestamp`, which is the outbox row's created_at. Everything is cleaned up at the end.
 *
 * Run: `pnpm exec node bench/webhooks.ts [--seconds 20] [--warmup 3] [--rates 500,800]
 *       [--backlog 10000] [--concurrency 100] [--log-level info] [--cpu-prof <dir>]`
 * Env: BENCH_ADMIN_DATABASE_URL (postgresql://root@127.0.0.1:5432/postgres), REDIS_URL.
 * Prints a JSON summary, then a Markdown table.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { createDatabase, newId } from '@scrapejobs/db';
import { WebhooksService } from '@scrapejobs/domain';
import { SecretBox } from '@scrapejobs/outbound';
import type pg from 'pg';
import {
  benchPrefix,
  cpuMsOf,
  cpuProfFlags,
  createBenchDatabase,
  parseOptions,
  percentile,
  profileDir,
  REDIS_URL,
  ROOT,
  runBench,
  sleep,
  spawnLogged,
  stopChild,
  tempDir,
  track,
  waitForLog,
} from './support.ts';

const args = parseOptions({
  role: 'main',
  url: undefined,
  body: undefined,
  seconds: '20',
  warmup: '3',
  rates: '500,800',
  backlog: '10000',
  concurrency: '100',
  'log-level': 'info',
  'cpu-prof': undefined,
});
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);

// ---------------------------------------------------------------- role: bare POST loop

/** The ceiling: POSTs as fast as `concurrency` keep-alive loops can, prints {requests, rps, p50, p99}. */
async function bareClient(): Promise<void> {
  const body = readFileSync(args.body!, 'utf8');
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + SECONDS * 1000;
  const post = () =>
    new Promise<void>((done) => {
      const started = performance.now();
      const req = http.request(
        args.url!,
        {
          method: 'POST',
          agent,
          headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) latencies.push(performance.now() - started);
            else errors++;
            done();
          });
        },
      );
      req.on('error', () => {
        errors++;
        done();
      });
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) await post();
    }),
  );
  latencies.sort((a, b) => a - b);
  process.stdout.write(
    `${JSON.stringify({
      requests: latencies.length,
      errors,
      rps: Math.round(latencies.length / SECONDS),
      p50_ms: +percentile(latencies, 50).toFixed(2),
      p99_ms: +percentile(latencies, 99).toFixed(2),
    })}\n`,
  );
  agent.destroy();
}

if (args.role === 'bare') {
  await bareClient();
  process.exit(0);
}

// ---------------------------------------------------------------- main

const DB_NAME = 'scrapejobs_bench_webhooks';
const PREFIX = benchPrefix('webhooks');
const KEY = randomBytes(32);
const USERS = 10;
const TARGET = { rate: 500, p99: 500 };
const tmp = tempDir('webhooks');

interface Sustained {
  offered_per_s: number;
  deliveries_per_s: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  worker_cpu_pct: number;
  complete: boolean;
}

/** The receiver: records, per event id, when its delivery arrived; `/bare` only answers. */
function startReceiver() {
  const arrivals = new Map<string, { at: number; latency: number }>();
  let duplicates = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url !== '/bare') {
        const at = Date.now();
        const { id, timestamp } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          id: string;
          timestamp: string;
        };
        if (arrivals.has(id)) duplicates++;
        else arrivals.set(id, { at, latency: at - Date.parse(timestamp) });
      }
      res.writeHead(200, { 'Content-Length': 0 }).end();
    });
  });
  server.keepAliveTimeout = 65_000;
  return { server, arrivals, duplicates: () => duplicates };
}

/** CPU seconds (user + system) a process has used so far (NaN once it has ended). */
const cpuSeconds = (pid: number) => (cpuMsOf(pid) ?? Number.NaN) / 1000;

const completedData = (jobId: string) => ({
  job_id: jobId,
  job_name: 'Nightly price list',
  run_id: newId('run'),
  status: 'success',
  results_count: 400,
  duration_ms: 5321,
  download_url: `https://scrape.example.com/jobs/${jobId}/download`,
});

/** Inserts `n` outbox rows now, as RunStore.finish writes them; returns their ids. */
async function insertEvents(pool: pg.Pool, users: string[], n: number): Promise<string[]> {
  const now = new Date();
  const ids = Array.from({ length: n }, () => newId('evt', now.getTime()));
  const jobIds = ids.map(() => newId('job', now.getTime()));
  await pool.query(
    `INSERT INTO events (id, user_id, mode, job_id, kind, data, created_at)
     SELECT e.id, e.user_id, 'test', e.job_id, 'job.completed', e.data::jsonb, $5::timestamptz AT TIME ZONE 'UTC'
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS e(id, user_id, job_id, data)`,
    [
      ids,
      ids.map((_, i) => users[i % users.length]!),
      jobIds,
      jobIds.map((j) => JSON.stringify(completedData(j))),
      now,
    ],
  );
  return ids;
}

/** Inserts events at `rate` per second for `seconds`, in 10 ms slices. */
async function produce(pool: pg.Pool, users: string[], rate: number, seconds: number): Promise<string[]> {
  const ids: string[] = [];
  const start = performance.now();
  const total = Math.round(rate * seconds);
  while (ids.length < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
    if (due > ids.length) ids.push(...(await insertEvents(pool, users, due - ids.length)));
    await sleep(10);
  }
  return ids;
}

/** Where the time goes: outbox → delivery row (fan-out), delivery row → attempt start (queue). */
async function stageLatencies(pool: pg.Pool, ids: string[]) {
  const { rows } = await pool.query<Record<string, number>>(
    `SELECT
       percentile_cont(0.5) WITHIN GROUP (ORDER BY fan) AS fan_out_p50_ms,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY fan) AS fan_out_p99_ms,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY q) AS queue_p50_ms,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY q) AS queue_p99_ms,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY post) AS post_p50_ms,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY post) AS post_p99_ms
     FROM (
       SELECT extract(epoch FROM d.created_at - e.created_at) * 1000 AS fan,
              extract(epoch FROM a.created_at - d.created_at) * 1000 AS q,
              a.duration_ms AS post
       FROM events e JOIN deliveries d ON d.event_id = e.id JOIN delivery_attempts a ON a.delivery_id = d.id
       WHERE e.id = ANY($1)) t`,
    [ids],
  );
  return Object.fromEntries(Object.entries(rows[0] ?? {}).map(([k, v]) => [k, Math.round(Number(v))]));
}

async function drained(arrivals: Map<string, unknown>, ids: string[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (ids.every((id) => arrivals.has(id))) return true;
    await sleep(50);
  }
  return false;
}

async function main() {
  const DATABASE_URL = await createBenchDatabase(DB_NAME);
  const db = createDatabase({ url: DATABASE_URL, max: 4 });
  const receiver = startReceiver();
  receiver.server.listen(0, '127.0.0.1');
  await once(receiver.server, 'listening');
  const port = (receiver.server.address() as AddressInfo).port;

  // Users and webhooks through the API's own create path (loopback allowed, as in development).
  const service = new WebhooksService(db, { box: new SecretBox(KEY), allowPrivate: true });
  const users: string[] = [];
  for (let i = 0; i < USERS; i++) {
    const user = await db.user.create({ data: { id: newId('usr'), email: `bench${i}@example.com` } });
    users.push(user.id);
    await service.create(
      { userId: user.id, mode: 'test' },
      {
        url: `http://127.0.0.1:${port}/hook`,
        events: ['job.completed'],
        secret: 'bench-secret-0123456789',
        description: null,
      },
    );
  }

  const logFile = join(tmp, 'webhook-worker.log');
  const profiles = profileDir(args['cpu-prof']);
  const profile = profiles ? cpuProfFlags(profiles, 'webhook-worker') : [];
  const worker = spawnLogged([...profile, 'apps/webhook-worker/src/main.ts'], logFile, {
    env: {
      DATABASE_URL,
      REDIS_URL,
      QUEUE_PREFIX: PREFIX,
      ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
      WEBHOOK_SECRET_KEY: KEY.toString('hex'),
      WEBHOOK_CONCURRENCY: String(CONCURRENCY),
      METRICS_PORT: '0',
      LOG_LEVEL: args['log-level'],
    },
  });
  await waitForLog(worker, logFile, /webhook worker started/, 'the webhook worker', 30_000);

  const summary: Record<string, unknown> = {
    node: process.version,
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model,
    loadavg_before: os.loadavg().map((l) => +l.toFixed(2)),
    worker_concurrency: CONCURRENCY,
    log_level: args['log-level'],
    seconds: SECONDS,
  };

  const pool = db.pool;
  const warm = await produce(pool, users, 200, Number(args.warmup));
  if (!(await drained(receiver.arrivals, warm, 20_000))) throw new Error('warm-up did not drain');

  const sustained: Record<string, unknown>[] = [];
  for (const rate of args.rates.split(',').map(Number)) {
    const cpu0 = cpuSeconds(worker.pid!);
    const t0 = Date.now();
    const ids = await produce(pool, users, rate, SECONDS);
    const t1 = Date.now();
    const cpu1 = cpuSeconds(worker.pid!);
    const complete = await drained(receiver.arrivals, ids, 30_000);
    const got = ids.map((id) => receiver.arrivals.get(id)).filter((a) => a !== undefined);
    const inWindow = got.filter((a) => a.at <= t1).length;
    const lat = got.map((a) => a.latency).sort((a, b) => a - b);
    const stages = await stageLatencies(pool, ids);
    sustained.push({
      offered_per_s: rate,
      events: ids.length,
      delivered: got.length,
      missing: ids.length - got.length,
      complete,
      deliveries_per_s: Math.round(inWindow / ((t1 - t0) / 1000)),
      p50_ms: percentile(lat, 50),
      p99_ms: percentile(lat, 99),
      max_ms: lat.at(-1),
      worker_cpu_pct: Math.round(((cpu1 - cpu0) / ((t1 - t0) / 1000)) * 100),
      ...stages,
    });
  }
  summary.sustained = sustained;

  // Backlog: everything at once; the drain rate is the most this worker process delivers.
  const backlogN = Number(args.backlog);
  const b0 = Date.now();
  const backlogIds: string[] = [];
  for (let i = 0; i < backlogN; i += 1000)
    backlogIds.push(...(await insertEvents(pool, users, Math.min(1000, backlogN - i))));
  const drainedAll = await drained(receiver.arrivals, backlogIds, 120_000);
  const last = Math.max(...backlogIds.map((id) => receiver.arrivals.get(id)?.at ?? 0));
  summary.backlog = {
    events: backlogN,
    complete: drainedAll,
    seconds: +((last - b0) / 1000).toFixed(2),
    deliveries_per_s: Math.round(backlogN / ((last - b0) / 1000)),
  };
  summary.duplicates = receiver.duplicates();

  // Bare ceiling: same receiver, same body, same concurrency, from another process.
  const sample = await db.delivery.findFirstOrThrow();
  const bodyFile = join(tmp, 'body.json');
  writeFileSync(bodyFile, sample.body);
  const bare = spawn(
    process.execPath,
    [
      'bench/webhooks.ts',
      '--role',
      'bare',
      '--url',
      `http://127.0.0.1:${port}/bare`,
      '--body',
      bodyFile,
      '--seconds',
      String(Math.min(SECONDS, 10)),
      '--concurrency',
      String(CONCURRENCY),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  track(bare);
  let bareOut = '';
  bare.stdout!.on('data', (c: Buffer) => {
    bareOut += c.toString();
  });
  await once(bare, 'exit');
  summary.bare = JSON.parse(bareOut);
  summary.body_bytes = Buffer.byteLength(sample.body);

  const attempts = await db.deliveryAttempt.count();
  const deliveries = await db.delivery.count();
  summary.attempts_per_delivery = +(attempts / deliveries).toFixed(3);
  summary.loadavg_after = os.loadavg().map((l) => +l.toFixed(2));

  await stopChild(worker);
  receiver.server.closeAllConnections();
  receiver.server.close();
  await db.$disconnect();
  await db.pool.end().catch(() => {});
  return summary;
}

/** Prints the summary and its table. */
function report(s: Awaited<ReturnType<typeof main>>): void {
  process.stdout.write(`${JSON.stringify(s, null, 2)}\n\n`);
  const rows = (s.sustained as Sustained[]).map(
    (r) =>
      `| sustained, ${r.offered_per_s}/s offered | ${r.deliveries_per_s} | ${r.p50_ms} | ${r.p99_ms} | ${r.max_ms} | ${r.worker_cpu_pct}% | ${
        r.offered_per_s === TARGET.rate
          ? r.deliveries_per_s >= TARGET.rate * 0.98 && r.p99_ms < TARGET.p99 && r.complete
            ? 'met'
            : 'NOT met'
          : '—'
      } |`,
  );
  const backlog = s.backlog as Record<string, number>;
  const bare = s.bare as Record<string, number>;
  process.stdout.write(
    [
      '| scenario | deliveries/s | p50 ms | p99 ms | max ms | worker CPU | target (≥ 500/s, p99 < 500 ms) |',
      '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
      ...rows,
      `| backlog of ${backlog.events}, drained | ${backlog.deliveries_per_s} | | | | | — |`,
      `| bare POST loop (ceiling) | ${bare.rps} | ${bare.p50_ms} | ${bare.p99_ms} | | | — |`,
      '',
      `duplicates: ${s.duplicates}; attempts per delivery: ${s.attempts_per_delivery}`,
      '',
    ].join('\n'),
  );
}

await runBench(async () => {
  report(await main());
  return true;
});
process.exit();
