/**
 * Companion of bench/fleet.ts: the cost of storing result rows, the worker's hottest path in
 * that benchmark. Stores the same batches (400 rows of {title, links, price}, as one fleet page
 * gives) four ways on a private database and reports rows/s and CPU ms per 1,000 rows:
 *
 *   1. `prisma createMany` as the worker's `saveResults` did before commit 84a6de4
 *      (skipDuplicates, ids from `newId`)
 *   2. one `INSERT … SELECT FROM unnest($1::text[], …) ON CONFLICT DO NOTHING` on the same pg
 *      pool (`db.pool.query`), bypassing Prisma's query compiler
 *   3. the same as 2 with ids made from one random prefix plus a counter instead of
 *      `randomBytes(16)` per row
 *   4. the worker's own `RunStore.saveBatch` (the unnest INSERT, rows as JSON text per page, and
 *      the page's URL outcome in its frontier row and the run's counts, in one transaction)
 *
 * (COPY FROM STDIN through pg-copy-streams, falling back to 4 on a duplicate, was measured this
 * way and lost on every count; see bench/README.md.) "ms per duplicate batch" stores the first
 * batches a second time, as a run taken over after a crash does. Besides this process's CPU it
 * reports the CPU of the pool's PostgreSQL backends, which share the machine with the worker in
 * bench/fleet.ts.
 *
 * Run: `pnpm exec node bench/fleet-insert.ts [--batches 100] [--rows 400]`
 */
import { randomBytes } from 'node:crypto';
import { createDatabase, type Database, newId } from '@scrapejobs/db';
import { type PageRows, RunStore } from '@scrapejobs/domain';
import { cpuMsOf, createBenchDatabase, parseOptions, printTable, round2, runBench } from './support.ts';

const args = parseOptions({
  batches: '100',
  rows: '400',
});
const BATCHES = Number(args.batches);
const ROWS = Number(args.rows);

async function main(db: Database) {
  const user = await db.user.create({ data: { id: newId('usr'), email: 'insert@example.com' } });
  const job = await db.job.create({
    data: {
      id: newId('job'),
      userId: user.id,
      mode: 'test',
      name: 'insert',
      source: 'http://127.0.0.1/p/[1-100]',
      queries: [],
      rateLimit: 6000,
    },
  });

  const rowsOf = (batch: number) =>
    Array.from({ length: ROWS }, (_, i) => ({
      url: `http://127.0.0.1:40000/p/j0/${batch}`,
      urlIndex: batch,
      rowIndex: i,
      data: {
        title: i === 0 ? `Catalogue j0, page ${batch}` : null,
        links: `/p/j0/${batch}/item/${i}`,
        price: `$${(i * 1.37).toFixed(2)}`,
      },
      scrapedAt: new Date(),
    }));

  const SQL = `INSERT INTO results (id, run_id, job_id, url, url_index, row_index, data, scraped_at)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[], $7::jsonb[], $8::timestamp(3)[])
    ON CONFLICT DO NOTHING`;
  const viaPool = async (
    runId: string,
    rows: ReturnType<typeof rowsOf>,
    id: (r: (typeof rows)[number]) => string,
  ) => {
    await db.pool.query(SQL, [
      rows.map(id),
      rows.map(() => runId),
      rows.map(() => job.id),
      rows.map((r) => r.url),
      rows.map((r) => r.urlIndex),
      rows.map((r) => r.rowIndex),
      rows.map((r) => JSON.stringify(r.data)),
      rows.map((r) => r.scrapedAt.toISOString()),
    ]);
  };

  const store = new RunStore(db, 'http://localhost');
  const pageOf = (rows: ReturnType<typeof rowsOf>): PageRows[] => [
    {
      url: rows[0]!.url,
      urlIndex: rows[0]!.urlIndex,
      scrapedAt: rows[0]!.scrapedAt,
      rows: rows.map((r) => JSON.stringify(r.data)),
    },
  ];
  const ways: Record<string, (runId: string, rows: ReturnType<typeof rowsOf>) => Promise<void>> = {
    'prisma createMany (the worker before 84a6de4)': async (runId, rows) => {
      await db.result.createMany({
        data: rows.map((r) => ({
          id: newId('res', r.scrapedAt.getTime()),
          runId,
          jobId: job.id,
          url: r.url,
          urlIndex: r.urlIndex,
          rowIndex: r.rowIndex,
          data: r.data,
          scrapedAt: r.scrapedAt,
        })),
        skipDuplicates: true,
      });
    },
    'pg unnest INSERT (db.pool.query)': (runId, rows) =>
      viaPool(runId, rows, (r) => newId('res', r.scrapedAt.getTime())),
    'pg unnest INSERT, counter ids': async (runId, rows) => {
      const base = newId('res').slice(0, 4 + 10 + 8);
      let n = 0;
      const salt = randomBytes(2).toString('hex');
      await viaPool(runId, rows, () => `${base}${salt}${(n++).toString(36).padStart(4, '0')}`.slice(0, 30));
    },
    'RunStore.saveBatch (unnest, JSON text per page, with the URL outcome)': async (runId, rows) => {
      await store.saveBatch(runId, job.id, {
        pages: pageOf(rows),
        outcomes: [
          {
            seq: rows[0]!.urlIndex,
            claims: 1,
            status: 'success',
            httpStatus: 200,
            records: rows.length,
            durationMs: 1,
            fetchedAt: rows[0]!.scrapedAt,
            failure: null,
          },
        ],
        found: [],
      });
    },
  };
  // Open every pool connection now, so the backends measured below are all there is.
  await Promise.all(Array.from({ length: 4 }, () => db.pool.query('SELECT pg_sleep(0.05)')));
  const backends = (
    await db.pool.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
    )
  ).rows.map((r) => r.pid);
  const backendCpuMs = () => backends.reduce((ms, pid) => ms + (cpuMsOf(pid) ?? 0), 0);

  const results = [];
  for (const [name, insert] of Object.entries(ways)) {
    const run = await db.run.create({
      data: { id: newId('run'), jobId: job.id, trigger: 'manual', seeded: true },
    });
    // Each page claimed by this worker, as the frontier leaves it before its outcome is stored.
    await db.pool.query(
      `INSERT INTO run_urls (run_id, seq, url, url_key, status, claims)
       SELECT $1, g, 'p' || g, decode(md5(g::text), 'hex'), 'active', 1 FROM generate_series(-1, $2) AS g`,
      [run.id, BATCHES],
    );
    await insert(run.id, rowsOf(-1)); // warm-up
    const cpu0 = cpuMsOf(process.pid)!;
    const pg0 = backendCpuMs();
    const t0 = performance.now();
    for (let b = 0; b < BATCHES; b++) await insert(run.id, rowsOf(b));
    const ms = performance.now() - t0;
    const cpu = cpuMsOf(process.pid)! - cpu0;
    const pgCpu = backendCpuMs() - pg0;
    // Storing the same rows again (a run taken over): every row is a duplicate.
    const d0 = performance.now();
    for (let b = 0; b < Math.min(BATCHES, 10); b++) await insert(run.id, rowsOf(b));
    const duplicateMs = (performance.now() - d0) / Math.min(BATCHES, 10);
    const stored = await db.result.count({ where: { runId: run.id } });
    results.push({
      way: name,
      rows: BATCHES * ROWS,
      stored: stored - ROWS,
      seconds: round2(ms / 1000),
      rows_per_s: Math.round((BATCHES * ROWS) / (ms / 1000)),
      this_process_cpu_ms_per_1000_rows: round2((cpu / (BATCHES * ROWS)) * 1000),
      postgres_cpu_ms_per_1000_rows: round2((pgCpu / (BATCHES * ROWS)) * 1000),
      ms_per_duplicate_batch: round2(duplicateMs),
    });
  }
  console.log(JSON.stringify({ batches: BATCHES, rows_per_batch: ROWS, results }, null, 2));
  console.log('');
  printTable(
    ['way', 'rows', 'rows/s', 'CPU ms per 1,000 rows: this process', 'PostgreSQL', 'ms per duplicate batch'],
    'lrrrrr',
    results.map((r) => [
      r.way,
      r.stored,
      r.rows_per_s,
      r.this_process_cpu_ms_per_1000_rows,
      r.postgres_cpu_ms_per_1000_rows,
      r.ms_per_duplicate_batch,
    ]),
  );
}

await runBench(async () => {
  const db = createDatabase({ url: await createBenchDatabase('scrapejobs_bench_insert'), max: 4 });
  try {
    await main(db);
  } finally {
    await db.$disconnect();
    await db.pool.end();
  }
  return true;
});
