/**
 * Companion of bench/fleet.ts: the cost of storing records, the worker's hottest path in that
 * benchmark, for the results layouts of issue 17 side by side. Stores the same pages (400
 * records of {title, links, price}, as one fleet page gives) on a private database and reports
 * records/s, CPU ms per 1,000 records (this process and PostgreSQL's backends, which share the
 * machine with the worker in bench/fleet.ts) and bytes per record on disk (table, indexes and
 * TOAST, pg_total_relation_size after VACUUM):
 *
 *   1. a row per record with four indexes (the layout up to commit 59deac2)
 *   2. a row per record, primary key (run_id, seq) only (commit 0c037d5)
 *   3. a row per page, its records one jsonb array (result_pages, as the worker stores them)
 *   4. a row per page, its records one JSON text (not validated by PostgreSQL)
 *   5. the worker's own `RunStore.saveBatch`: layout 3 plus the page's URL outcome in its
 *      frontier row and the run's counts, in one transaction
 *
 * Layouts 1–4 are one `INSERT … SELECT FROM unnest(…)` per page, in tables of their own.
 *
 * Run: `pnpm exec node bench/fleet-insert.ts [--batches 200] [--rows 400]`
 */
import { createDatabase, type Database, newId, newRecordIdBase } from '@scrapejobs/db';
import { RunStore } from '@scrapejobs/domain';
import { cpuMsOf, createBenchDatabase, parseOptions, printTable, round2, runBench } from './support.ts';

const args = parseOptions({
  batches: '200',
  rows: '400',
});
const BATCHES = Number(args.batches);
const ROWS = Number(args.rows);

/** One page's records as the worker has them: JSON text each. */
const recordsOf = (batch: number) =>
  Array.from({ length: ROWS }, (_, i) =>
    JSON.stringify({
      title: i === 0 ? `Catalogue j0, page ${batch}` : null,
      links: `/p/j0/${batch}/item/${i}`,
      price: `$${(i * 1.37).toFixed(2)}`,
    }),
  );
const urlOf = (batch: number) => `http://127.0.0.1:40000/p/j0/${batch}`;

const PER_RECORD = `(seq BIGSERIAL, id TEXT NOT NULL, run_id TEXT NOT NULL, job_id TEXT NOT NULL, url TEXT NOT NULL,
  url_index INT NOT NULL, row_index INT NOT NULL, data JSONB NOT NULL, scraped_at TIMESTAMP(3) NOT NULL`;
const PER_PAGE = (
  type: string,
) => `(run_id TEXT NOT NULL, seq BIGSERIAL, url_index INT NOT NULL, url TEXT NOT NULL,
  scraped_at TIMESTAMP(3) NOT NULL, records INT NOT NULL, id_base TEXT NOT NULL, ids TEXT[],
  data ${type} COMPRESSION lz4 NOT NULL, PRIMARY KEY (run_id, seq))`;

interface Layout {
  name: string;
  table: string;
  create: string[];
  insert(db: Database, runId: string, jobId: string, batch: number): Promise<unknown>;
}

const perRecordInsert = (table: string) => (db: Database, runId: string, jobId: string, batch: number) => {
  const records = recordsOf(batch);
  const at = new Date();
  return db.pool.query(
    `INSERT INTO ${table} (id, run_id, job_id, url, url_index, row_index, data, scraped_at)
     SELECT t.id, $1, $2, $3, $4, t.row_index, t.data, $5
       FROM unnest($6::text[], $7::int[], $8::jsonb[]) AS t(id, row_index, data)`,
    [
      runId,
      jobId,
      urlOf(batch),
      batch,
      at.toISOString(),
      records.map(() => newId('res', at.getTime())),
      records.map((_, i) => i),
      records,
    ],
  );
};
const perPageInsert =
  (table: string, type: string) => (db: Database, runId: string, _: string, batch: number) =>
    db.pool.query(
      `INSERT INTO ${table} (run_id, url_index, url, scraped_at, records, id_base, data)
     VALUES ($1, $2, $3, $4, $5, $6, $7::${type})`,
      [
        runId,
        batch,
        urlOf(batch),
        new Date().toISOString(),
        ROWS,
        newRecordIdBase(),
        `[${recordsOf(batch).join(',')}]`,
      ],
    );

const LAYOUTS: Layout[] = [
  {
    name: 'row per record, four indexes (59deac2)',
    table: 'records_four_indexes',
    create: [
      `CREATE TABLE records_four_indexes ${PER_RECORD}, PRIMARY KEY (seq))`,
      'CREATE UNIQUE INDEX ON records_four_indexes (id)',
      'CREATE UNIQUE INDEX ON records_four_indexes (run_id, url_index, row_index)',
      'CREATE INDEX ON records_four_indexes (run_id, seq)',
    ],
    insert: perRecordInsert('records_four_indexes'),
  },
  {
    name: 'row per record, one index (0c037d5)',
    table: 'records_one_index',
    create: [`CREATE TABLE records_one_index ${PER_RECORD}, PRIMARY KEY (run_id, seq))`],
    insert: perRecordInsert('records_one_index'),
  },
  {
    name: 'row per page, jsonb array (result_pages)',
    table: 'pages_jsonb',
    create: [`CREATE TABLE pages_jsonb ${PER_PAGE('jsonb')}`],
    insert: perPageInsert('pages_jsonb', 'jsonb'),
  },
  {
    name: 'row per page, JSON text',
    table: 'pages_text',
    create: [`CREATE TABLE pages_text ${PER_PAGE('text')}`],
    insert: perPageInsert('pages_text', 'text'),
  },
];

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
  const store = new RunStore(db, 'http://localhost');
  const layouts: Layout[] = [
    ...LAYOUTS,
    {
      name: 'RunStore.saveBatch (result_pages and the URL outcome)',
      table: 'result_pages',
      create: [],
      insert: (_, runId, __, batch) =>
        store.saveBatch(runId, {
          pages: [
            {
              url: urlOf(batch),
              urlIndex: batch,
              scrapedAt: new Date(),
              records: ROWS,
              json: `[${recordsOf(batch).join(',')}]`,
            },
          ],
          outcomes: [
            {
              seq: batch,
              claims: 1,
              status: 'success',
              httpStatus: 200,
              records: ROWS,
              durationMs: 1,
              fetchedAt: new Date(),
              failure: null,
            },
          ],
          found: [],
        }),
    },
  ];
  for (const layout of LAYOUTS) for (const sql of layout.create) await db.pool.query(sql);

  // Open every pool connection now, so the backends measured below are all there is.
  await Promise.all(Array.from({ length: 4 }, () => db.pool.query('SELECT pg_sleep(0.05)')));
  const backends = (
    await db.pool.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
    )
  ).rows.map((r) => r.pid);
  const backendCpuMs = () => backends.reduce((ms, pid) => ms + (cpuMsOf(pid) ?? 0), 0);

  const results = [];
  for (const layout of layouts) {
    const run = await db.run.create({
      data: { id: newId('run'), jobId: job.id, trigger: 'manual', seeded: true },
    });
    // Each page claimed by this worker, as the frontier leaves it before its outcome is stored.
    await db.pool.query(
      `INSERT INTO run_urls (run_id, seq, url, url_key, status, claims)
       SELECT $1, g, 'p' || g, decode(md5(g::text), 'hex'), 'active', 1 FROM generate_series(-1, $2) AS g`,
      [run.id, BATCHES],
    );
    await layout.insert(db, run.id, job.id, -1); // warm-up
    const cpu0 = cpuMsOf(process.pid)!;
    const pg0 = backendCpuMs();
    const t0 = performance.now();
    for (let b = 0; b < BATCHES; b++) await layout.insert(db, run.id, job.id, b);
    const ms = performance.now() - t0;
    const cpu = cpuMsOf(process.pid)! - cpu0;
    const pgCpu = backendCpuMs() - pg0;
    await db.pool.query(`VACUUM ANALYZE ${layout.table}`);
    const { rows } = await db.pool.query<{ bytes: string }>(
      `SELECT pg_total_relation_size('${layout.table}')::text AS bytes`,
    );
    const records = (BATCHES + 1) * ROWS;
    results.push({
      layout: layout.name,
      records_per_s: Math.round((BATCHES * ROWS) / (ms / 1000)),
      this_process_cpu_ms_per_1000_records: round2((cpu / (BATCHES * ROWS)) * 1000),
      postgres_cpu_ms_per_1000_records: round2((pgCpu / (BATCHES * ROWS)) * 1000),
      bytes_per_record: round2(Number(rows[0]!.bytes) / records),
    });
  }
  console.log(JSON.stringify({ batches: BATCHES, records_per_batch: ROWS, results }, null, 2));
  console.log('');
  printTable(
    ['layout', 'records/s', 'CPU ms per 1,000 records: this process', 'PostgreSQL', 'bytes per record'],
    'lrrrr',
    results.map((r) => [
      r.layout,
      r.records_per_s,
      r.this_process_cpu_ms_per_1000_records,
      r.postgres_cpu_ms_per_1000_records,
      r.bytes_per_record,
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
