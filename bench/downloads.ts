/**
 * Download benchmark: rows/s and peak memory of the real API process while it streams one large
 * run in each format to a client in this (separate) process.
 *
 *   - The API runs as a child (`node apps/api/src/main.ts`) on its own database
 *     (`scrapejobs_bench_downloads`, dropped and re-created) and its own Redis prefix.
 *   - One job with six queries; one run of `--rows` records (default 200,000) seeded with SQL.
 *   - Each format gets a fresh API process and is downloaded `--repeat` times (default 2; the best time is kept); the client
 *     reads the body as a stream and counts bytes and lines, never holding the file.
 *   - Memory: the API's VmRSS is polled every 10 ms from /proc/<pid>/status; its VmHWM (peak)
 *     is reset before each format by writing 5 to /proc/<pid>/clear_refs, so it is per format.
 *   - `slow-csv`: a client that reads 1 MiB/s for 3 s then hangs up; the API's memory must
 *     stay flat (backpressure) and its cursor must be gone afterwards.
 *
 * Targets: every format under 256 MB peak RSS; json and csv at least 50,000 rows/s.
 *
 * Run: `pnpm exec node bench/downloads.ts [--rows 200000] [--repeat 2] [--formats json,csv,xlsx,sql]
 *       [--json-out <file>] [--keep-db] [--reuse] [--paging] [--api-node-options=--max-semi-space-size=16]`
 * `--api-node-options` is passed to the API process as NODE_OPTIONS. V8 sizes the young generation
 * from the machine's memory (up to 2 × 64 MB semi-spaces on this 24 GB machine), and any allocation-
 * heavy work fills it: that, not the download, is most of the peak above the idle RSS.
 * `--paging` also times GET results pages at the start, the middle and the end of the run (keyset).
 * `--keep-db` keeps the seeded database; `--reuse` then uses it instead of seeding again.
 * Env: BENCH_ADMIN_DATABASE_URL (postgresql://root@127.0.0.1:5432/postgres), REDIS_URL.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createDatabase, newId } from '@scrapejobs/db';
import pg from 'pg';
import {
  benchPrefix,
  createBenchDatabase,
  createKey,
  databaseUrl,
  dropAtCleanup,
  memoryOf,
  memorySampler,
  parseOptions,
  printTable,
  runBench,
  sleep,
  startApi,
  stopChild,
  tempDir,
  writeJsonOut,
} from './support.ts';

const args = parseOptions({
  rows: '200000',
  repeat: '2',
  formats: 'json,csv,xlsx,sql,slow-csv',
  'json-out': undefined,
  'keep-db': false,
  reuse: false,
  'api-node-options': '',
  paging: false,
});
const ROWS = Number(args.rows);
const REPEAT = Math.max(1, Number(args.repeat));
const FORMATS = args.formats.split(',').filter(Boolean);
const DB_NAME = 'scrapejobs_bench_downloads';
const DATABASE_URL = databaseUrl(DB_NAME);
const PREFIX = benchPrefix('downloads');
const QUERIES = ['title', 'price', 'sku', 'description', 'category', 'rating'];
const TARGETS = { peakRssMb: 256, rowsPerSecond: { json: 50_000, csv: 50_000 } as Record<string, number> };

const tmp = tempDir('downloads');
if (!args['keep-db']) dropAtCleanup(DB_NAME);

/** The API on the bench's database, its log in the temporary directory, NODE_OPTIONS from --api-node-options. */
const startDownloadsApi = () =>
  startApi({
    databaseUrl: DATABASE_URL,
    prefix: PREFIX,
    logLevel: 'warn',
    logFile: join(tmp, 'api.log'),
    env: { NODE_OPTIONS: [process.env.NODE_OPTIONS, args['api-node-options']].filter(Boolean).join(' ') },
  });

/** A database with one job of six queries and one finished run of ROWS records; returns the ids. */
async function seed(): Promise<{ token: string; jobId: string; runId: string }> {
  if (args.reuse) {
    const reused = await reuseSeed().catch(() => undefined);
    if (reused) return reused;
  }
  await createBenchDatabase(DB_NAME, { keep: true }); // dropped at the end unless --keep-db
  const db = createDatabase({ url: DATABASE_URL, max: 2, queryTimeoutMs: 600_000 });
  try {
    const { token, userId } = await createKey(db, 'bench@example.com', ['jobs:read', 'jobs:write']);
    const jobId = newId('job');
    const runId = newId('run');
    const now = new Date();
    await db.job.create({
      data: {
        id: jobId,
        userId,
        mode: 'test',
        name: 'Download bench',
        source: 'https://shop.example/items?page=[1-1000]',
        queries: QUERIES.map((name) => ({ name, type: 'css', query: `.${name}`, join: false })),
        rateLimit: 10,
        status: 'success',
        createdAt: now,
        updatedAt: now,
        lastRunAt: now,
        lastRunId: runId,
        resultsCount: ROWS,
      },
    });
    await db.run.create({
      data: {
        id: runId,
        jobId,
        status: 'success',
        trigger: 'manual',
        startedAt: now,
        finishedAt: now,
        durationMs: 1,
        resultsCount: ROWS,
      },
    });
    // Realistic text: 20–120 characters per value, with commas, quotes and the odd missing value.
    await db.pool.query(
      `INSERT INTO result_pages (run_id, url_index, url, scraped_at, records, id_base, data)
       SELECT $1, p, 'https://shop.example/items?page=' || (p + 1), now() - (p || ' s')::interval, count(*),
              lpad(p::text, 23, '0'),
              jsonb_agg(jsonb_build_object(
                'title', 'Product ' || g || ' – "Deluxe" edition, size ' || (g % 7),
                'price', to_char((g % 10000) / 100.0, 'FM9999.00') || ' EUR',
                'sku', 'SKU-' || lpad(g::text, 8, '0'),
                'description', repeat('Lorem ipsum, dolor sit amet. ', 1 + g % 4),
                'category', CASE WHEN g % 11 = 0 THEN NULL ELSE 'Category ' || (g % 37) END,
                'rating', ((g % 50) / 10.0)::text) ORDER BY g)
       FROM generate_series(1, $2::int) g, LATERAL (SELECT g / 200 AS p) page
       GROUP BY p ORDER BY p`,
      [runId, ROWS],
    );
    await db.pool.query('VACUUM ANALYZE result_pages');
    return { token, jobId, runId };
  } finally {
    await db.$disconnect();
    await db.pool.end();
  }
}

/** The data of an earlier `--keep-db` run, when it has the same number of records. */
async function reuseSeed() {
  const db = createDatabase({ url: DATABASE_URL, max: 1 });
  try {
    const run = await db.run.findFirst({ where: { resultsCount: ROWS }, include: { job: true } });
    if (!run) return undefined;
    const { token } = await createKey(db, 'bench@example.com', ['jobs:read']);
    return { token, jobId: run.jobId, runId: run.id };
  } finally {
    await db.$disconnect();
    await db.pool.end();
  }
}

/** Resets VmHWM so the next reading is the peak of what follows (Linux clear_refs). */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

interface Run {
  seconds: number;
  firstByteMs: number;
  bytes: number;
  lines: number;
  tailText: string;
}

async function download(base: string, path: string, token: string, bytesPerSecond?: number, maxMs?: number) {
  const started = performance.now();
  const controller = new AbortController();
  const res = await fetch(`${base}${path}`, {
    headers: { Authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  const firstByteMs = performance.now() - started;
  let bytes = 0;
  let lines = 0;
  let last = Buffer.alloc(0);
  const reader = res.body!.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.length;
      for (let i = value.indexOf(10); i !== -1; i = value.indexOf(10, i + 1)) lines++;
      last = Buffer.from(value.subarray(Math.max(0, value.length - 32)));
      const elapsed = performance.now() - started;
      if (maxMs && elapsed > maxMs) {
        controller.abort();
        break;
      }
      if (bytesPerSecond) {
        const due = (bytes / bytesPerSecond) * 1000 - elapsed;
        if (due > 0) await sleep(due);
      }
    }
  } catch (err) {
    if (!controller.signal.aborted) throw err;
  }
  return {
    seconds: (performance.now() - started) / 1000,
    firstByteMs,
    bytes,
    lines,
    tailText: last.toString('latin1'),
  } satisfies Run;
}

/** Checks the end of each file, so a cut stream is never counted as a result. */
function complete(format: string, run: Run): boolean {
  if (format === 'json') return run.tailText.endsWith('\n]') && run.lines === ROWS + 1;
  if (format === 'csv') return run.lines === ROWS + 1;
  if (format === 'sql') return run.tailText.endsWith('COMMIT;\n') && run.lines === ROWS + 3;
  // xlsx: the zip ends with its end-of-central-directory record (PK\x05\x06 …).
  return run.tailText.includes('PK\x05\x06');
}

const tenth = (n: number) => Math.round(n * 10) / 10;
const mb = (bytes: number) => tenth(bytes / 1024 / 1024);

async function fetchingSessions(): Promise<number> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    const res = await client.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'FETCH % FROM download'",
    );
    return res.rows[0].n as number;
  } finally {
    await client.end();
  }
}

async function main() {
  console.error(`seeding ${ROWS} records …`);
  const seeded = await seed();
  const results: Record<string, unknown>[] = [];
  // A fresh API process per format, so no format inherits another's heap growth.
  for (const name of FORMATS) {
    const started = await startDownloadsApi();
    const pid = started.child.pid!;
    // One small request first, so the idle figure includes the code paths of a download.
    await download(started.base, `/jobs/${seeded.jobId}/results?limit=1`, seeded.token);
    const idleMib = memoryOf(pid)!.rss;
    const slow = name === 'slow-csv';
    const format = slow ? 'csv' : name;
    const path = `/jobs/${seeded.jobId}/download?format=${format}`;
    const runs: Run[] = [];
    const hwmReset = resetPeak(pid);
    const rss = memorySampler(pid, 10);
    for (let i = 0; i < (slow ? 1 : REPEAT); i++) {
      const run = slow
        ? await download(started.base, path, seeded.token, 1024 * 1024, 3_000)
        : await download(started.base, path, seeded.token);
      if (!slow && !complete(format, run)) throw new Error(`${format}: incomplete file (${run.lines} lines)`);
      runs.push(run);
    }
    const peakMib = Math.max(rss.stop().peak_rss_mib, hwmReset ? memoryOf(pid)!.hwm : 0);
    const best = runs.reduce((a, b) => (a.seconds <= b.seconds ? a : b));
    let leftOpen: number | undefined;
    if (slow) {
      for (let i = 0; i < 50; i++) {
        leftOpen = await fetchingSessions();
        if (leftOpen === 0) break;
        await sleep(100);
      }
    }
    await stopChild(started.child);
    const row = {
      format: name,
      rows: slow ? undefined : ROWS,
      seconds: Math.round(best.seconds * 100) / 100,
      rows_per_s: slow ? undefined : Math.round(ROWS / best.seconds),
      mb_per_s: Math.round((best.bytes / 1024 / 1024 / best.seconds) * 10) / 10,
      file_mb: mb(best.bytes),
      first_byte_ms: Math.round(best.firstByteMs),
      idle_rss_mb: tenth(idleMib),
      peak_rss_mb: tenth(peakMib),
      peak_from: hwmReset
        ? 'VmHWM (reset before the download) and 10 ms VmRSS samples'
        : '10 ms VmRSS samples',
      cursor_left_open: leftOpen,
      meets_targets:
        tenth(peakMib) < TARGETS.peakRssMb &&
        (slow ||
          TARGETS.rowsPerSecond[format] === undefined ||
          ROWS / best.seconds >= TARGETS.rowsPerSecond[format]!) &&
        (!slow || leftOpen === 0),
    };
    results.push(row);
    console.error(JSON.stringify(row));
  }
  const paging = args.paging ? await pagingLatency(seeded) : undefined;
  const summary = {
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
    rows: ROWS,
    paging,
    columns: 2 + QUERIES.length,
    api_node_options: args['api-node-options'] || null,
    targets: TARGETS,
    results,
  };
  console.log(JSON.stringify(summary, null, 2));
  console.log('');
  printTable(
    ['format', 'rows/s', 'MB/s', 'file MB', 'first byte ms', 'idle RSS MB', 'peak RSS MB', 'targets'],
    'llllllll',
    results.map((r) => [
      r.format,
      r.rows_per_s ?? '-',
      r.mb_per_s,
      r.file_mb,
      r.first_byte_ms,
      r.idle_rss_mb,
      r.peak_rss_mb,
      r.meets_targets ? 'met' : 'MISSED',
    ]),
  );
  if (paging) {
    console.log('');
    printTable(
      ['position', 'p50 ms', 'p90 ms'],
      'lrr',
      paging.map((p) => [p.position, p.p50_ms, p.p90_ms]),
    );
  }
  writeJsonOut(args['json-out'], summary);
  return results.every((r) => r.meets_targets);
}

/**
 * GET results (100 records a page) at the start, the middle and near the end of the run: the
 * cursors are found by walking the run with limit 1000, then each is read 30 times.
 */
async function pagingLatency(seeded: { token: string; jobId: string }) {
  const started = await startDownloadsApi();
  try {
    const get = async (cursor: string | null, limit: number) => {
      const res = await fetch(
        `${started.base}/jobs/${seeded.jobId}/results?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
        { headers: { Authorization: `Bearer ${seeded.token}` } },
      );
      if (res.status !== 200) throw new Error(`results: ${res.status} ${await res.text()}`);
      return (await res.json()) as { next_cursor: string | null; count: number };
    };
    const cursors: (string | null)[] = [null];
    for (let cursor: string | null = null, seen = 0; ; ) {
      const page = await get(cursor, 1000);
      seen += page.count;
      if (page.next_cursor === null) break;
      cursor = page.next_cursor;
      if (seen === Math.floor(ROWS / 2000) * 1000) cursors.push(cursor);
      if (seen === ROWS - 1000) cursors.push(cursor);
    }
    const positions = ['start', 'middle', 'end'];
    const latency = [];
    for (const [i, cursor] of cursors.entries()) {
      const ms: number[] = [];
      for (let n = 0; n < 30; n++) {
        const t0 = performance.now();
        await get(cursor, 100);
        ms.push(performance.now() - t0);
      }
      ms.sort((a, b) => a - b);
      latency.push({ position: positions[i], p50_ms: tenth(ms[15]!), p90_ms: tenth(ms[27]!) });
    }
    return latency;
  } finally {
    await stopChild(started.child);
  }
}

await runBench(main);
process.exit();
