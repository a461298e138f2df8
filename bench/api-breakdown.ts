/**
 * Where the API's time goes, one step at a time: each step a request of bench/api.ts makes is run
 * in this process alone, many times with 32 in flight (as with 32 connections), against its own
 * database (`scrapejobs_bench_breakdown`, dropped at the end) and Redis prefix. For each step:
 * operations per second and CPU time of this Node process per operation (the figure that bounds a
 * single API process), next to hand-written `pg` equivalents of the Prisma queries.
 *
 * Run: `pnpm exec node bench/api-breakdown.ts [--ops 4000]`. Prints a JSON summary, then a Markdown table.
 */
import { createRequire } from 'node:module';
import { listJobsQuerySchema } from '@scrapejobs/contracts';
import { createDatabase, type Database, newId } from '@scrapejobs/db';
import { hashToken, JobsService, toDetail, toJob, toListItem } from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';
import { DEVELOPMENT_SECRET_KEY, SecretBox } from '@scrapejobs/outbound';
import { Redis } from 'ioredis';
import { parseCreateJob } from '../apps/api/src/jobs/input.ts';
import { QueryCompiler } from '../apps/api/src/jobs/query-compiler.ts';
import {
  benchPrefix,
  createBenchDatabase,
  createKey,
  parseOptions,
  printTable,
  REDIS_URL,
  runBench,
} from './support.ts';

const requireFromLogging = createRequire(new URL('../packages/logging/package.json', import.meta.url));
const args = parseOptions({
  ops: '4000',
});
const OPS = Number(args.ops);
const CONCURRENCY = 32;
const PREFIX = benchPrefix('breakdown');

interface Step {
  step: string;
  ops_per_s: number;
  cpu_us_per_op: number;
  wall_us_per_op: number;
}

/** Runs `fn` OPS times, CONCURRENCY at once (synchronous steps: one after the other). */
async function measure(step: string, fn: () => unknown, concurrency = CONCURRENCY): Promise<Step> {
  for (let i = 0; i < Math.min(500, OPS); i++) await fn(); // warm-up (JIT, pool connections)
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < OPS) await fn();
    }),
  );
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const result = {
    step,
    ops_per_s: Math.round((OPS / wall) * 1000),
    cpu_us_per_op: Math.round((cpu.user + cpu.system) / OPS),
    wall_us_per_op: Math.round((wall * 1000) / OPS),
  };
  process.stderr.write(`${JSON.stringify(result)}\n`);
  return result;
}

async function main(): Promise<boolean> {
  // The pool size of apps/api/src/main.ts.
  const db = createDatabase({
    url: await createBenchDatabase('scrapejobs_bench_breakdown'),
    max: 20,
    queryTimeoutMs: 5_000,
  });
  const redis = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  await new Promise((r) => redis.once('ready', r));
  try {
    const steps = await measureSteps(db, redis);
    console.log(
      JSON.stringify({ benchmark: 'api-breakdown', ops: OPS, concurrency: CONCURRENCY, steps }, null, 2),
    );
    console.log('');
    printTable(
      ['step', 'ops/s', 'CPU µs/op (this process)', 'wall µs/op'],
      'lrrr',
      steps.map((s) => [s.step, s.ops_per_s, s.cpu_us_per_op, s.wall_us_per_op]),
    );
    return true;
  } finally {
    await db.$disconnect();
    await db.pool.end();
    redis.disconnect();
  }
}

async function measureSteps(db: Database, redis: Redis): Promise<Step[]> {
  const steps: Step[] = [];
  const { token, userId, key } = await createKey(db, 'bench@example.com', ['jobs:read', 'jobs:write']);
  const owner = { userId, mode: 'test' as const };
  // The row JobsService.create writes for a job without schedule.
  const compiler = new QueryCompiler();
  const rules = { proxies: [], compiler, model: false };
  const parse = (raw: unknown) => parseCreateJob(raw, rules, userId);
  const jobRow = (who: typeof owner, input: Awaited<ReturnType<typeof parseCreateJob>>) => {
    const now = new Date();
    return {
      id: newId('job', now.getTime()),
      userId: who.userId,
      mode: who.mode,
      name: input.name,
      source: input.source,
      queries: input.queries,
      rateLimit: input.rate_limit,
      status: 'scheduled' as const,
      createdAt: now,
      updatedAt: now,
    };
  };
  const body = {
    name: 'Example',
    source: 'https://example.com/items',
    queries: [{ name: 'title', type: 'css', query: 'h1' }],
  };
  for (let i = 0; i < 100; i++)
    await db.job.create({ data: jobRow(owner, await parse({ ...body, name: `Job ${i}` })) });
  const otherUser = await createKey(db, 'bench-create@example.com', ['jobs:write']);
  const creator = { userId: otherUser.userId, mode: 'test' as const };
  const hash = hashToken(token);
  // Neither is called: the measured jobs have no schedule and are never run.
  const unused = () => Promise.reject(new Error('not used by this benchmark'));
  const jobs = new JobsService(
    db,
    { started: unused, cancel: unused },
    { arm: unused, disarm: unused },
    { box: new SecretBox(DEVELOPMENT_SECRET_KEY), publicBaseUrl: 'https://scrape.example.com' },
  );
  const detail = await db.job.findFirstOrThrow({ where: { userId } });
  // The API's logger (packages/logging), with its stdout sent to /dev/null for this measurement.
  const pino = requireFromLogging('pino') as {
    pino: (opts: object, dest: unknown) => Logger;
    stdTimeFunctions: { isoTime: () => string };
    destination: (opts: object) => unknown;
  };
  const sink = pino.pino(
    {
      level: 'info',
      base: { service: 'api' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label: string) => ({ level: label }) },
    },
    pino.destination({ dest: '/dev/null', sync: true }),
  );
  const rateScript = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

  // Shared by both scenarios.
  steps.push(await measure('noop (await only)', async () => {}));
  steps.push(await measure('sha256 of the token', () => hashToken(token), 1));
  steps.push(
    await measure('auth: prisma apiKey.findUnique', () =>
      db.apiKey.findUnique({
        where: { tokenHash: hash },
        select: { id: true, userId: true, mode: true, scopes: true, revokedAt: true },
      }),
    ),
  );
  steps.push(
    await measure('auth: pg pool.query (same SELECT)', () =>
      db.pool.query(
        'SELECT id, user_id, mode, scopes, revoked_at FROM api_keys WHERE token_hash = $1 LIMIT 1',
        [hash],
      ),
    ),
  );
  // One at a time: Prisma batches concurrent findUnique calls of one tick into one query, which a
  // server whose requests arrive one by one rarely benefits from.
  steps.push(
    await measure(
      'auth: prisma apiKey.findUnique, 1 in flight',
      () =>
        db.apiKey.findUnique({
          where: { tokenHash: hash },
          select: { id: true, userId: true, mode: true, scopes: true, revokedAt: true },
        }),
      1,
    ),
  );
  steps.push(
    await measure(
      'auth: pg prepared statement, 1 in flight',
      () =>
        db.pool.query({
          name: 'bench-key-by-hash',
          text: 'SELECT id, user_id, mode::text, scopes, revoked_at FROM api_keys WHERE token_hash = $1',
          values: [hash],
          rowMode: 'array',
        }),
      1,
    ),
  );
  steps.push(
    await measure('rate limit: redis EVAL', () =>
      redis.eval(rateScript, 1, `${PREFIX}:ratelimit:key:${key.key_id}:1`, 61_000),
    ),
  );
  steps.push(await measure('redis PING (round trip floor)', () => redis.ping()));
  steps.push(await measure('pg SELECT 1 (round trip floor)', () => db.pool.query('SELECT 1')));

  // GET /jobs/status
  steps.push(await measure('list: zod query parse', () => listJobsQuerySchema.parse({}), 1));
  steps.push(
    await measure('list: prisma job.findMany + toListItem + JSON.stringify (before)', async () => {
      const rows = await db.job.findMany({
        where: { userId, mode: 'test' },
        orderBy: { id: 'desc' },
        take: 101,
      });
      return JSON.stringify({
        jobs: rows.slice(0, 100).map((row) => toListItem(toJob(row))),
        count: 100,
        next_cursor: null,
      });
    }),
  );
  steps.push(
    await measure('list: JobsService.list + JSON.stringify (prepared pg, rows as arrays)', async () => {
      const page = await jobs.list(owner, { limit: 100 });
      return JSON.stringify({ jobs: page.items, count: page.items.length, next_cursor: page.nextCursor });
    }),
  );
  // The alternative not taken: PostgreSQL writes the JSON, which moves the work to the database.
  const iso = (col: string) => `to_char(${col}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  steps.push(
    await measure('list: json_agg in SQL, text passed through', async () => {
      const r = await db.pool.query<[string, number]>({
        name: 'bench-list-json',
        text: `SELECT coalesce(json_agg(json_build_object('job_id', id, 'name', name, 'source', source,
                 'status', status, 'created_at', ${iso('created_at')}, 'last_run', ${iso('last_run_at')},
                 'results_count', results_count, 'next_run_at', ${iso('next_run_at')}) ORDER BY id DESC), '[]')::text,
                 count(*)
                 FROM (SELECT * FROM jobs WHERE user_id = $1 AND mode = 'test' ORDER BY id DESC LIMIT 100) j`,
        values: [userId],
        rowMode: 'array',
      });
      const [items, count] = r.rows[0]!;
      return `{"jobs":${items},"count":${count},"next_cursor":null}`;
    }),
  );
  steps.push(
    await measure(
      'request log line (pino, info)',
      () =>
        sink.info(
          { req_id: 'x', method: 'GET', path: '/jobs/status', status: 200, duration_ms: 1 },
          'request',
        ),
      1,
    ),
  );

  // POST /jobs
  steps.push(await measure('create: parseCreateJob (zod + compile css in a thread)', () => parse(body), 1));
  steps.push(
    await measure('create: prisma $transaction(job.create) (before)', async () => {
      const input = await parse(body);
      return db.$transaction((tx) => tx.job.create({ data: jobRow(creator, input) }));
    }),
  );
  steps.push(
    await measure('create: JobsService.create (prepared pg INSERT, no schedule)', async () =>
      jobs.create(creator, await parse(body)),
    ),
  );
  await compiler.close();
  steps.push(
    await measure('create: toDetail + JSON.stringify', () => JSON.stringify(toDetail(toJob(detail))), 1),
  );
  return steps;
}

await runBench(main);
