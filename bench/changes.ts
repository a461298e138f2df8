/**
 * Change-tracking benchmark (issue 15): how long the comparison of two large runs takes, in the
 * real scraper-worker process and in-process, and what the real API then serves of its changes.
 *
 *   - Data: its own database (`scrapejobs_bench_changes`, dropped and re-created), one user with
 *     an API key, one job with `change_tracking: {key: ['sku']}` and three queries (sku, title,
 *     price). A base run of --records records (20 per page URL, titles of 25–95 characters,
 *     prices like `123.45 EUR`) and a second run in which a --changed share of the items differ:
 *     half of it a changed price, a quarter removed, a quarter added (at the end). Both are
 *     inserted with `INSERT … SELECT … FROM generate_series`, then VACUUM ANALYZE.
 *   - The base run is analysed in-process first (`RunAnalysis.analyze`; a first run: every
 *     record `added`), timed as the "first run" figure.
 *   - (a) One real scraper worker (production Node flags) starts and idles; then the second run
 *     gets `analysis_due = true` and the clock runs until its `changes` column is set (polled
 *     every 20 ms; this includes up to 1 s until the worker's next look for due runs). The worker's
 *     own `ms` from its `run analysed` log line is the comparison's time. Peak RSS: VmHWM of the
 *     worker over its whole life and VmRSS sampled every 20 ms.
 *   - (b) --rounds times in-process: the run's run_changes and job.changed event are deleted and
 *     the run set due again, then `RunAnalysis.analyze` is timed (min, median, max).
 *   - (c) The real API (production Node flags): GET /jobs/{id}/runs/{run_id}/changes (first page
 *     of 100) and the downloads `?changes=added,changed,removed` in csv and json, timed from this
 *     process; peak RSS: VmHWM of the API over its whole life.
 *   Every comparison must find exactly the added, removed, changed and unchanged items generated,
 *   and every download exactly those rows; else the bench fails.
 *
 * Targets: the comparison of two runs of 200,000 records with 1 % changed under 5 s; the API and
 * the worker under 300 MB.
 *
 * Run: `pnpm exec node bench/changes.ts [--records 200000] [--changed 0.01] [--rounds 3]
 *       [--work-mem 64MB] [--keep-db] [--json-out <file>]`
 * `--work-mem` sets `work_mem` on the bench database (ALTER DATABASE) before anything connects.
 * Env: BENCH_ADMIN_DATABASE_URL (postgresql://root@127.0.0.1:5432/postgres), REDIS_URL.
 * Prints a JSON summary, then a Markdown table.
 */
import { join } from 'node:path';
import { createDatabase, type Database, newId } from '@scrapejobs/db';
import { type ChangeCounts, RunAnalysis } from '@scrapejobs/domain';
import { startApp } from '../test/support/processes.ts';
import * as support from './support.ts';

const args = support.parseOptions({
  records: '200000',
  changed: '0.01',
  rounds: '3',
  'work-mem': undefined,
  'keep-db': false,
  'json-out': undefined,
});
const RECORDS = Number(args.records);
const CHANGED = Number(args.changed);
const ROUNDS = Math.max(1, Number(args.rounds));
const DB_NAME = 'scrapejobs_bench_changes';
const PREFIX = support.benchPrefix('changes');
const PER_PAGE = 20;
const TARGETS = { compare_ms: 5_000, rss_mib: 300 };

if (!(RECORDS >= 100) || !(CHANGED > 0 && CHANGED <= 1))
  throw new Error('--records ≥ 100, 0 < --changed ≤ 1');

/** What the second run differs in: `touched` base items change or go, every third of them goes. */
function planOf(records: number, share: number) {
  const touched = Math.round(records * share * 0.75);
  const removed = Math.floor(touched / 3);
  const added = Math.round(records * share * 0.25);
  const expected: ChangeCounts = {
    added,
    removed,
    changed: touched - removed,
    unchanged: records - touched,
    duplicate_keys: 0,
  };
  return { touched, expected, secondRecords: records - removed + added };
}
const PLAN = planOf(RECORDS, CHANGED);

interface Seeded {
  jobId: string;
  baseRunId: string;
  runId: string;
  token: string;
  firstRunMs: number;
}

/**
 * Records of a run: items 0…records−1 of the base, plus `added` new ones after them. Of the base
 * items, `touched` spread evenly (Bresenham) are changed or removed: the j-th touched item is
 * removed when j % 3 = 2, else its price goes up by 1.00.
 */
const INSERT_RESULTS = `
  WITH stored AS (
    INSERT INTO result_pages (run_id, url_index, url, scraped_at, records, id_base, data)
    SELECT $1, i / ${PER_PAGE}, 'https://shop.example/catalogue?page=' || (i / ${PER_PAGE} + 1),
           ($3::timestamptz AT TIME ZONE 'UTC') + (i / ${PER_PAGE}) * interval '1 ms', count(*),
           lpad(($2::bigint + i / ${PER_PAGE})::text, 23, '0'),
           jsonb_agg(jsonb_build_object(
             'sku', 'SKU-' || lpad(i::text, 8, '0'),
             'title', 'Product ' || i || ' – ' || left('Stainless steel chef''s knife, "Pro" series, 20 cm '
               || 'blade, ergonomic handle, dishwasher safe, gift box', 10 + i % 70),
             'price', to_char(((i::bigint * 7919) % 100000 + CASE WHEN touched THEN 100 ELSE 0 END) / 100.0,
                              'FM99990.00') || ' EUR') ORDER BY i)
      FROM (SELECT i, i < $5 AND (i + 1) * $4::bigint / $5 > i * $4::bigint / $5 AS touched,
                   ((i + 1) * $4::bigint / $5 - 1) % 3 AS j
              FROM generate_series(0, $5::int + $6::int - 1) i) items
     WHERE NOT (touched AND j = 2)
     GROUP BY i / ${PER_PAGE}
    RETURNING records)
  SELECT sum(records)::int AS records FROM stored`;

async function insertRun(
  db: Database,
  o: { jobId: string; finishedAt: Date; idOffset: number; touched: number; added: number; due: boolean },
): Promise<string> {
  const runId = newId('run', o.finishedAt.getTime());
  const scrapedAt = new Date(o.finishedAt.getTime() - 600_000);
  await db.run.create({
    data: {
      id: runId,
      jobId: o.jobId,
      trigger: 'manual',
      status: 'success',
      startedAt: scrapedAt,
      finishedAt: o.finishedAt,
      durationMs: 600_000,
      resultsCount: 0,
      analysisDue: o.due,
    },
  });
  const { rows } = await db.pool.query<{ records: number }>(INSERT_RESULTS, [
    runId,
    o.idOffset,
    scrapedAt.toISOString(),
    o.touched,
    RECORDS,
    o.added,
  ]);
  const pages = Math.ceil((RECORDS + o.added) / PER_PAGE);
  await db.run.update({
    where: { id: runId },
    data: { resultsCount: rows[0]?.records ?? 0, successfulUrls: pages, totalUrls: pages },
  });
  return runId;
}

/** The database, the job, both runs (the base analysed, the second not yet due). */
async function seed(databaseUrl: string): Promise<Seeded> {
  const db = createDatabase({ url: databaseUrl, max: 2, queryTimeoutMs: 600_000 });
  try {
    const { token, userId } = await support.createKey(db, 'changes-bench@example.com', ['jobs:read']);
    const jobId = newId('job');
    const now = Date.now();
    await db.job.create({
      data: {
        id: jobId,
        userId,
        mode: 'test',
        name: 'Catalogue watch',
        source: `https://shop.example/catalogue?page=[1-${Math.ceil(RECORDS / PER_PAGE)}]`,
        queries: ['sku', 'title', 'price'].map((name) => ({
          name,
          type: 'css',
          query: `.${name}`,
          join: false,
        })),
        rateLimit: 600,
        status: 'success',
        changeTracking: { key: ['sku'] },
      },
    });
    const base = { jobId, idOffset: 0, touched: 0, added: 0 };
    const baseRunId = await insertRun(db, { ...base, finishedAt: new Date(now - 3_600_000), due: true });
    const runId = await insertRun(db, {
      jobId,
      finishedAt: new Date(now - 60_000),
      idOffset: 10 * RECORDS,
      touched: PLAN.touched,
      added: PLAN.expected.added,
      due: false,
    });
    const counts = await db.run.findMany({ where: { jobId }, select: { id: true, resultsCount: true } });
    const of = (id: string) => counts.find((r) => r.id === id)?.resultsCount;
    if (of(baseRunId) !== RECORDS || of(runId) !== PLAN.secondRecords)
      throw new Error(
        `seeded ${of(baseRunId)} and ${of(runId)} records, expected ${RECORDS}, ${PLAN.secondRecords}`,
      );
    await db.job.update({
      where: { id: jobId },
      data: { lastRunId: runId, lastRunAt: new Date(now - 60_000), resultsCount: PLAN.secondRecords },
    });
    await db.pool.query('VACUUM ANALYZE results');
    await db.pool.query('VACUUM ANALYZE runs');
    // The base run is a first run: every record added, all of them written to run_changes.
    support.log('analysing the base run in-process (a first run)');
    const started = performance.now();
    const first = await new RunAnalysis(db, 'https://scrape.example.com').analyze(baseRunId);
    const firstRunMs = Math.round(performance.now() - started);
    expectCounts('first run', first?.changes, { ...zero(), added: RECORDS });
    await db.pool.query('VACUUM ANALYZE run_changes');
    return { jobId, baseRunId, runId, token, firstRunMs };
  } finally {
    await db.$disconnect();
    await db.pool.end();
  }
}

const zero = (): ChangeCounts => ({ added: 0, removed: 0, changed: 0, unchanged: 0, duplicate_keys: 0 });

/** Throws unless the counts are exactly those expected. */
function expectCounts(what: string, got: unknown, expected: ChangeCounts): void {
  const counts = (got ?? {}) as Record<string, unknown>;
  const keys = Object.keys(expected) as (keyof ChangeCounts)[];
  if (Object.keys(counts).length !== keys.length || keys.some((k) => counts[k] !== expected[k]))
    throw new Error(`${what}: counts ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
}

/** Makes the second run due again as if it had just ended: its changes and job.changed event gone. */
async function makeDue(db: Database, s: Seeded): Promise<void> {
  await db.pool.query('DELETE FROM run_changes WHERE run_id = $1', [s.runId]);
  await db.pool.query(`DELETE FROM events WHERE job_id = $1 AND data->>'run_id' = $2`, [s.jobId, s.runId]);
  await db.pool.query(
    `UPDATE runs SET changes = NULL, base_run_id = NULL, health = NULL, query_matches = NULL
      WHERE id = $1`,
    [s.runId],
  );
  await db.pool.query('VACUUM ANALYZE run_changes');
}

/** The stored changes of the run by type, against the expected counts. */
async function expectStored(db: Database, s: Seeded): Promise<void> {
  const { rows } = await db.pool.query<{ type: string; n: number }>(
    'SELECT type::text, count(*)::int AS n FROM run_changes WHERE run_id = $1 GROUP BY 1',
    [s.runId],
  );
  const got = Object.fromEntries(rows.map((r) => [r.type, r.n]));
  const { added, removed, changed } = PLAN.expected;
  if ((got.added ?? 0) !== added || (got.removed ?? 0) !== removed || (got.changed ?? 0) !== changed)
    throw new Error(
      `run_changes holds ${JSON.stringify(got)}, expected ${JSON.stringify({ added, removed, changed })}`,
    );
}

/** (a) The real worker analyses the run once it is due; wall time, its own ms, its memory. */
async function inWorker(db: Database, databaseUrl: string, s: Seeded) {
  const worker = startApp('scraper-worker', {
    DATABASE_URL: databaseUrl,
    REDIS_URL: support.REDIS_URL,
    QUEUE_PREFIX: PREFIX,
    LOG_LEVEL: 'info',
    METRICS_PORT: '0',
    NODE_OPTIONS: support.productionNodeFlags('scraper-worker').join(' '),
  });
  support.track(worker.child, 20_000);
  await worker.waitForLog((l) => l.msg === 'scraper worker started', 30_000);
  const pid = worker.child.pid!;
  await support.sleep(2_000); // settle after start
  const idleMib = support.memoryOf(pid)!.rss;
  const busy = await support.waitForQuiet(0.3, 60_000);
  const sampler = support.memorySampler(pid, 20);
  const started = performance.now();
  await db.pool.query('UPDATE runs SET analysis_due = true WHERE id = $1', [s.runId]);
  let changes: unknown = null;
  while (changes === null) {
    if (performance.now() - started > 600_000)
      throw new Error('the worker did not analyse the run in 10 min');
    if (worker.child.exitCode !== null) throw new Error(`the worker exited (${worker.child.exitCode})`);
    const failed = worker.logs.find(
      (l) => l.msg === 'could not analyse a run; it stays due' && l.run_id === s.runId,
    );
    if (failed) throw new Error(`the worker could not analyse the run: ${failed.err}`);
    await support.sleep(20);
    const { rows } = await db.pool.query('SELECT changes FROM runs WHERE id = $1', [s.runId]);
    changes = rows[0]?.changes ?? null;
  }
  const wallMs = Math.round(performance.now() - started);
  const line = await worker.waitForLog((l) => l.msg === 'run analysed' && l.run_id === s.runId, 10_000);
  const memory = sampler.stop();
  await support.stopChild(worker.child);
  expectCounts('worker', changes, PLAN.expected);
  expectCounts('worker log', line.changes, PLAN.expected);
  await expectStored(db, s);
  return {
    wall_ms: wallMs,
    logged_ms: line.ms as number,
    idle_rss_mib: idleMib,
    peak_rss_mib: Math.max(memory.peak_rss_mib, memory.vm_hwm_mib),
    machine_busy_before: busy,
  };
}

/** (b) `RunAnalysis.analyze` in this process, --rounds times. */
async function inProcess(db: Database, s: Seeded) {
  const analysis = new RunAnalysis(db, 'https://scrape.example.com');
  const ms: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await makeDue(db, s);
    await db.pool.query('UPDATE runs SET analysis_due = true WHERE id = $1', [s.runId]);
    await support.waitForQuiet(0.3, 60_000);
    const started = performance.now();
    const done = await analysis.analyze(s.runId);
    ms.push(Math.round(performance.now() - started));
    expectCounts(`in-process round ${round + 1}`, done?.changes, PLAN.expected);
    if (done?.baseRunId !== s.baseRunId)
      throw new Error(`base run ${done?.baseRunId}, expected ${s.baseRunId}`);
    await expectStored(db, s);
    support.log(`in-process round ${round + 1}: ${ms.at(-1)} ms`);
  }
  const sorted = [...ms].sort((a, b) => a - b);
  return { ms, min: sorted[0]!, median: sorted[Math.floor(sorted.length / 2)]!, max: sorted.at(-1)! };
}

/** A GET of the API, timed, its body as text. */
async function timedGet(base: string, token: string, path: string) {
  const started = performance.now();
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 500)}`);
  return { ms: Math.round(performance.now() - started), text, bytes: Buffer.byteLength(text) };
}

/** Throws unless a download has exactly the expected rows of each kind. */
function expectRows(what: string, kinds: string[]): void {
  const got: Record<string, number> = {};
  for (const k of kinds) got[k] = (got[k] ?? 0) + 1;
  const { added, removed, changed } = PLAN.expected;
  if (
    kinds.length !== added + removed + changed ||
    got.added !== added ||
    got.removed !== removed ||
    got.changed !== changed
  )
    throw new Error(
      `${what}: rows ${JSON.stringify(got)}, expected ${JSON.stringify({ added, removed, changed })}`,
    );
}

/** (c) The real API serves the changes: the first page of the list and two downloads. */
async function inApi(databaseUrl: string, s: Seeded, logFile: string) {
  const api = await support.startApi({
    databaseUrl,
    prefix: PREFIX,
    logLevel: 'warn',
    logFile,
    nodeArgs: support.productionNodeFlags('api'),
  });
  const pid = api.child.pid!;
  const sampler = support.memorySampler(pid, 20);
  const idleMib = support.memoryOf(pid)!.rss;
  const page = await timedGet(api.base, s.token, `/jobs/${s.jobId}/runs/${s.runId}/changes?limit=100`);
  const body = JSON.parse(page.text) as { summary: unknown; count: number; changes: { type: string }[] };
  expectCounts('GET changes summary', body.summary, PLAN.expected);
  const firstPage = Math.min(100, PLAN.expected.added + PLAN.expected.removed + PLAN.expected.changed);
  if (body.count !== firstPage) throw new Error(`GET changes: ${body.count} changes, expected ${firstPage}`);
  const download = `/jobs/${s.jobId}/download?run_id=${s.runId}&changes=added,changed,removed&format=`;
  const csv = await timedGet(api.base, s.token, `${download}csv`);
  const csvLines = csv.text.trimEnd().split(/\r?\n/);
  if (!csvLines[0]!.startsWith('change,')) throw new Error(`csv header: ${csvLines[0]}`);
  expectRows(
    'csv',
    csvLines.slice(1).map((l) => l.slice(0, l.indexOf(','))),
  );
  const json = await timedGet(api.base, s.token, `${download}json`);
  expectRows(
    'json',
    (JSON.parse(json.text) as { change: string }[]).map((r) => r.change),
  );
  const memory = sampler.stop();
  await support.stopChild(api.child);
  return {
    changes_page_ms: page.ms,
    csv_ms: csv.ms,
    csv_bytes: csv.bytes,
    json_ms: json.ms,
    json_bytes: json.bytes,
    idle_rss_mib: idleMib,
    peak_rss_mib: Math.max(memory.peak_rss_mib, memory.vm_hwm_mib),
  };
}

async function main(): Promise<boolean> {
  const tmp = support.tempDir('changes');
  const databaseUrl = await support.createBenchDatabase(DB_NAME, { keep: args['keep-db'] });
  if (args['work-mem'])
    await support.admin((c) => c.query(`ALTER DATABASE "${DB_NAME}" SET work_mem = '${args['work-mem']}'`));
  support.log(`seeding two runs of ${RECORDS} records (${JSON.stringify(PLAN.expected)}) …`);
  const seeded = await seed(databaseUrl);
  const db = createDatabase({ url: databaseUrl, max: 2, queryTimeoutMs: 600_000 });
  try {
    support.log('(a) the worker analyses the second run');
    const worker = await inWorker(db, databaseUrl, seeded);
    support.log(`(a) ${JSON.stringify(worker)}`);
    support.log(`(b) ${ROUNDS} in-process rounds`);
    const local = await inProcess(db, seeded);
    support.log('(c) the API serves the changes');
    const api = await inApi(databaseUrl, seeded, join(tmp, 'api.log'));
    const met = {
      compare: worker.logged_ms < TARGETS.compare_ms && local.median < TARGETS.compare_ms,
      worker_rss: worker.peak_rss_mib < TARGETS.rss_mib,
      api_rss: api.peak_rss_mib < TARGETS.rss_mib,
    };
    const summary = {
      date: new Date().toISOString(),
      machine: support.machineInfo('changes benchmark'),
      records: RECORDS,
      changed_share: CHANGED,
      second_run_records: PLAN.secondRecords,
      expected: PLAN.expected,
      work_mem: args['work-mem'] ?? 'server default',
      targets: TARGETS,
      first_run_ms: seeded.firstRunMs,
      worker,
      in_process: local,
      api,
      met,
    };
    console.log(JSON.stringify(summary, null, 2));
    console.log('');
    printFigures(summary);
    support.writeJsonOut(args['json-out'], summary);
    return Object.values(met).every(Boolean);
  } finally {
    await db.$disconnect();
    await db.pool.end();
  }
}

function printFigures(s: {
  first_run_ms: number;
  worker: Awaited<ReturnType<typeof inWorker>>;
  in_process: Awaited<ReturnType<typeof inProcess>>;
  api: Awaited<ReturnType<typeof inApi>>;
}): void {
  const yes = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const kb = (bytes: number) => `${Math.round(bytes / 1024)} KB`;
  const { worker, in_process: local, api } = s;
  support.printTable(['measurement', 'figure', 'target'], 'lrl', [
    [
      'comparison in the worker (its logged `ms`)',
      `${worker.logged_ms} ms`,
      yes(worker.logged_ms < TARGETS.compare_ms),
    ],
    ['due → `changes` set (wall, incl. ≤ 1 s poll)', `${worker.wall_ms} ms`, '–'],
    [
      `comparison in-process, min / median / max of ${local.ms.length}`,
      `${local.min} / ${local.median} / ${local.max} ms`,
      yes(local.median < TARGETS.compare_ms),
    ],
    [`first run analysed in-process (${RECORDS} added)`, `${s.first_run_ms} ms`, '–'],
    [
      'worker RSS idle / peak',
      `${worker.idle_rss_mib} / ${worker.peak_rss_mib} MiB`,
      yes(worker.peak_rss_mib < TARGETS.rss_mib),
    ],
    ['GET …/runs/{run_id}/changes, first 100', `${api.changes_page_ms} ms`, '–'],
    [
      `download csv, ${PLAN.expected.added + PLAN.expected.removed + PLAN.expected.changed} changes`,
      `${api.csv_ms} ms (${kb(api.csv_bytes)})`,
      '–',
    ],
    ['download json, same changes', `${api.json_ms} ms (${kb(api.json_bytes)})`, '–'],
    [
      'API RSS idle / peak',
      `${api.idle_rss_mib} / ${api.peak_rss_mib} MiB`,
      yes(api.peak_rss_mib < TARGETS.rss_mib),
    ],
  ]);
}

await support.runBench(main);
process.exit();
