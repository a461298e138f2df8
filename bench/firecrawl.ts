/**
 * Firecrawl-compatible API benchmark, end to end (docs/api.md §18): scrape latency through the real
 * API process and scraper fleet against the floor of one process fetching and converting the same
 * page, and crawls of a linked site through `/v2/crawl` against the same crawl through the native
 * API, alternated in one sitting.
 *
 *   - Site: bench/firecrawl-site.ts in its own process: an article page (~25 KB) and the fleet
 *     benchmark's catalogue page (~80 KB) to scrape, and a site of --pages pages (~13 KB, `/`
 *     linking to ten children each, every page within four links) to crawl; every page is built
 *     once before anything is measured.
 *   - Processes: `apps/api/src/main.ts` and `apps/scraper-worker/src/main.ts` (support's
 *     startApiAndWorker: default SCRAPER_CONCURRENCY, RUN_URL_CONCURRENCY, EXTRACTION_THREADS),
 *     both with their production Node flags; the API's LOG_LEVEL from --log-level (default warn),
 *     the workers' from --worker-log-level (default info, which logs each run's end); a second
 *     worker with the same environment for the two-worker crawls. Key from the keys CLI.
 *   - Scrape, per page kind (--page): the floor first, `fetch` of the page then `htmlDocument`
 *     (markdown + metadata, main content) in this process, --warmup then --scrapes one after the
 *     other; then `POST /v2/scrape {url, formats: ['markdown']}` the same way (one caller); then
 *     --callers callers each scraping in a loop for --seconds. Every answer must be 200 with the
 *     page's markdown and `metadata.statusCode` 200. CPU per scrape of the API, the worker and
 *     PostgreSQL (the backends serving the bench database). Where one caller's time goes: this
 *     process's clock, the timestamps the service stored (runs.started_at, run_urls.fetched_at
 *     and duration_ms, runs.finished_at) and the worker's log lines ("run finished"; "claimed
 *     URLs" at debug), the scrapes matched to their runs in order.
 *   - Crawl, with --workers 1 and then 2: `POST /v2/crawl {url, limit, scrapeOptions: {formats:
 *     ['markdown']}, sitemap: 'skip'}` polled with `GET /v2/crawl/{id}` every --poll-ms until
 *     `completed` (the time from POST to the status seen completed, and to the run's stored
 *     `finished_at`), and the native job `{queries: [], formats: ['markdown', 'metadata'],
 *     rate_limit: 6000, crawl: {follow: [css a::attr(href)], max_depth: 50, max_pages, same_origin:
 *     true}}` from `POST /jobs/{id}/run` to its `finished_at` (polling the run every --poll-ms),
 *     alternated (1 worker: compatible first; 2 workers: native first; --rounds repeats). Then the
 *     documents are read back, `next` after `next` (compatible) or `next_cursor` (native), 100 a
 *     page, timed on their own. Every crawl must fetch all --pages pages and end completed/success.
 *
 * A crawl job's rate_limit of 6000 a minute caps it at 100 pages/s however many workers share it
 * (docs/api.md §8), on both paths alike.
 *
 * Own database (`scrapejobs_bench_firecrawl`), own Redis prefix, everything cleaned up at the end.
 * Before each measurement it waits for other benchmarks (`pgrep -af bench/`) to end and for the
 * machine to be quiet, unless --no-wait.
 *
 * Run: `pnpm exec node bench/firecrawl.ts [--quick] [--page article,catalog] [--scrapes 300]
 *       [--warmup 20] [--callers 20] [--seconds 30] [--pages 10000] [--workers 1,2] [--rounds 1]
 *       [--poll-ms 500] [--parts scrape,crawl] [--log-level warn] [--worker-log-level info]
 *       [--cpu-prof <dir>] [--node-options=<more Node flags for the API and the workers>]
 *       [--no-wait] [--json-out <file>]`
 * `--cpu-prof <dir>` profiles the API and the workers (written when they end) and prints where
 * their CPU went.
 * `--quick`: 50 scrapes (warm-up 5), 5 s of callers, the article page, a crawl of 1,000 pages.
 * Env: BENCH_ADMIN_DATABASE_URL (postgresql://root@127.0.0.1:5432/postgres), REDIS_URL.
 * Prints a JSON summary, then Markdown tables.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { htmlDocument } from '../packages/content/src/index.ts';
import { type Proc, startApp } from '../test/support/processes.ts';
import * as support from './support.ts';

const args = support.parseOptions({
  quick: false,
  page: undefined,
  scrapes: undefined,
  warmup: undefined,
  callers: '20',
  seconds: undefined,
  pages: undefined,
  workers: '1,2',
  rounds: '1',
  'poll-ms': '500',
  parts: 'scrape,crawl',
  'log-level': 'warn',
  'worker-log-level': 'info',
  'cpu-prof': undefined,
  'node-options': '',
  'no-wait': false,
  'json-out': undefined,
});
const QUICK = args.quick;
const PAGE_KINDS = (args.page ?? (QUICK ? 'article' : 'article,catalog')).split(',').filter(Boolean) as (
  | 'article'
  | 'catalog'
)[];
const SCRAPES = Number(args.scrapes ?? (QUICK ? 50 : 300));
const WARMUP = Number(args.warmup ?? (QUICK ? 5 : 20));
const CALLERS = Number(args.callers);
const SECONDS = Number(args.seconds ?? (QUICK ? 5 : 30));
const CRAWL_PAGES = Number(args.pages ?? (QUICK ? 1000 : 10_000));
const WORKER_COUNTS = args.workers.split(',').map(Number);
const ROUNDS = Number(args.rounds);
const POLL_MS = Number(args['poll-ms']);
const PARTS = new Set(args.parts.split(','));
const LOG_LEVEL = args['log-level'];
/** The workers log each run's end at info ("run finished"), which dates the end's commit. */
const WORKER_LOG_LEVEL = args['worker-log-level'];
const CPU_PROF_DIR = support.profileDir(args['cpu-prof']);

const DB_NAME = 'scrapejobs_bench_firecrawl';
const PREFIX = support.benchPrefix('firecrawl');
const TARGETS = { p50_ms_one_caller: 100, scrapes_per_s_at_20: 100, crawl_overhead: 0.1 };
const CONTENT = {
  formats: ['markdown', 'metadata'] as const,
  onlyMainContent: true,
  includeTags: [],
  excludeTags: [],
};

type Call = ReturnType<typeof support.apiClient>;

// ---------------------------------------------------------------- the machine

/** Waits until no other benchmark runs (`pgrep -af bench/`, this one and its children left out). */
async function waitForOtherBenches(): Promise<void> {
  for (let logged = false; ; logged = true) {
    const { stdout } = await promisify(execFile)('pgrep', ['-af', 'bench/']).catch(() => ({ stdout: '' }));
    const others = stdout
      .split('\n')
      .filter((l) => l.trim() && !l.includes('bench/firecrawl') && !/^\d+ (p?grep|rg) /.test(l));
    if (others.length === 0) return;
    if (!logged) support.log(`waiting for another benchmark to end: ${others[0]!.slice(0, 160)}`);
    await support.sleep(10_000);
  }
}

/** Waits for other benchmarks and a quiet machine (unless --no-wait); the cores busy then. */
async function settle(): Promise<number> {
  if (args['no-wait']) return -1;
  await waitForOtherBenches();
  return support.waitForQuiet();
}

/** CPU time (ms) so far of each watched process (`<name>_sys`: its kernel part), and of the machine. */
function cpuMark(pids: Record<string, number | undefined>) {
  const out: Record<string, number> = {};
  const times = support.processCpuTimes();
  for (const [name, pid] of Object.entries(pids)) {
    const t = pid ? times.get(pid) : undefined;
    out[name] = t?.ms ?? 0;
    out[`${name}_sys`] = t?.sysMs ?? 0;
  }
  out.machine = support.machineCpu().busy;
  return out;
}

/**
 * Watches the CPU time of processes from now until `stop()`, which answers the ms each used, with
 * `postgres`: the backends serving the bench database (looked up every 500 ms as pools open and
 * close them; one first seen meanwhile counts from 0).
 */
async function cpuWatch(pids: Record<string, number | undefined>) {
  const client = new pg.Client({ connectionString: support.ADMIN_URL });
  await client.connect();
  const seen = new Map<number, { first: number; last: number }>();
  const poll = async (initial: boolean) => {
    for (const pid of await support.backendPids(client, DB_NAME)) {
      const ms = support.cpuMsOf(pid);
      if (ms === null) continue;
      const entry = seen.get(pid);
      if (entry) entry.last = ms;
      else seen.set(pid, { first: initial ? ms : 0, last: ms });
    }
  };
  await poll(true);
  const a = cpuMark(pids);
  let running = true;
  const loop = (async () => {
    while (running) {
      await support.sleep(500);
      await poll(false).catch(() => {});
    }
  })();
  return {
    async stop(): Promise<Record<string, number>> {
      const b = cpuMark(pids);
      running = false;
      await loop;
      await poll(false).catch(() => {});
      await client.end();
      const out: Record<string, number> = {};
      for (const name of Object.keys(b)) out[name] = b[name]! - (a[name] ?? 0);
      out.postgres = [...seen.values()].reduce((n, { first, last }) => n + last - first, 0);
      return out;
    },
  };
}

/** Each of `used` (ms) per unit of work. */
function cpuPer(used: Record<string, number>, units: number) {
  const out: Record<string, number> = {};
  for (const [name, ms] of Object.entries(used)) out[name] = support.round2(ms / units);
  return out;
}

// ---------------------------------------------------------------- scrapes

interface Latencies {
  n: number;
  mean: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function latencies(values: readonly number[]): Latencies {
  const s = support.summarize(values);
  const mean = values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  const r = support.round2;
  return { n: s.n, mean: r(mean), min: r(s.min), p50: r(s.p50), p90: r(s.p90), p99: r(s.p99), max: r(s.max) };
}

/** The floor: fetch the page and convert it here, one after the other. */
async function floor(url: string) {
  const once = async () => {
    const res = await fetch(url);
    const html = await res.text();
    const page = {
      sourceUrl: url,
      url: res.url,
      statusCode: res.status,
      contentType: res.headers.get('content-type'),
    };
    const doc = htmlDocument(html, page, CONTENT);
    if (!doc.markdown || doc.metadata?.title === null) throw new Error('the floor made no document');
  };
  for (let i = 0; i < WARMUP; i++) await once();
  const times: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < SCRAPES; i++) {
    const t = performance.now();
    await once();
    times.push(performance.now() - t);
  }
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return {
    latency_ms: latencies(times),
    scrapes_per_s: support.round2((SCRAPES * 1000) / wall),
    cpu_ms_per_scrape: { bench: support.round2((cpu.user + cpu.system) / 1000 / SCRAPES) },
  };
}

interface ScrapeBody {
  success: boolean;
  data?: { markdown?: string; metadata?: { statusCode?: number; title?: string } };
  error?: string;
}

/** One POST /v2/scrape: its latency, when it was sent (epoch ms), and what was wrong with it. */
async function scrapeOnce(call: Call, url: string, title: string) {
  const sentAt = Date.now();
  const t = performance.now();
  const r = await call<ScrapeBody>('POST', '/v2/scrape', { url, formats: ['markdown'] });
  const ms = performance.now() - t;
  let problem: string | null = null;
  if (r.status !== 200 || !r.body.success) problem = `${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
  else if (!r.body.data?.markdown?.includes(title)) problem = 'markdown without the title';
  else if (r.body.data.metadata?.statusCode !== 200)
    problem = `statusCode ${r.body.data.metadata?.statusCode}`;
  return { ms, sentAt, receivedAt: Date.now(), problem };
}

/** The stored timestamps of the compatible API's runs started in [from, to], by start. */
async function storedScrapes(databaseUrl: string, from: number, to: number) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{
      id: string;
      started: string;
      fetched: string | null;
      finished: string | null;
      duration_ms: number | null;
    }>(
      `SELECT r.id, extract(epoch FROM r.started_at) * 1000 AS started, extract(epoch FROM u.fetched_at) * 1000 AS fetched,
              extract(epoch FROM r.finished_at) * 1000 AS finished, u.duration_ms
         FROM runs r JOIN jobs j ON j.id = r.job_id
         JOIN run_urls u ON u.run_id = r.id AND u.kind = 'page'
        WHERE j.origin = 'firecrawl' AND r.started_at BETWEEN to_timestamp($1 / 1000.0) AND to_timestamp($2 / 1000.0)
        ORDER BY r.started_at`,
      [from, to],
    );
    return rows.map((row) => ({
      id: row.id,
      started: Number(row.started),
      fetched: row.fetched === null ? null : Number(row.fetched),
      finished: row.finished === null ? null : Number(row.finished),
      durationMs: row.duration_ms,
    }));
  } finally {
    await client.end();
  }
}

/** When the worker logged `msg` for each run (the first time), from its log lines (LOG_LEVEL permitting). */
function loggedAt(logs: readonly Record<string, unknown>[], msg: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of logs)
    if (l.msg === msg && typeof l.run_id === 'string' && !out.has(l.run_id))
      out.set(l.run_id, new Date(l.time as string).getTime());
  return out;
}

/**
 * Where the time of one caller's scrapes went: POST sent → run started (API: parse, job and run
 * made), run started → page fetched (announce, a worker's look, seed, claim, open, fetch), fetched
 * → run finished (conversion, the batch stored, the next look, the run ended), finished → answer
 * received (the end's transaction, the API's next look, reading the document, the answer); and the
 * URL's own duration (fetch + convert). With the worker's log at debug, run started → fetched is
 * split at its claim ("claimed URLs"); at info or debug, finished → answer at "run finished" (the
 * end committed; `finished_at` is taken as the end's transaction starts).
 */
function breakdown(
  calls: { sentAt: number; receivedAt: number }[],
  stored: Awaited<ReturnType<typeof storedScrapes>>,
  workerLogs: readonly Record<string, unknown>[],
) {
  if (stored.length !== calls.length) return { matched: false, stored: stored.length, calls: calls.length };
  const claimed = loggedAt(workerLogs, 'claimed URLs');
  const ended = loggedAt(workerLogs, 'run finished');
  const parts: Record<string, number[]> = {
    sent_to_run_started: [],
    run_started_to_fetched: [],
    run_started_to_claimed: [],
    claimed_to_fetched: [],
    fetched_to_run_finished: [],
    run_finished_to_answer: [],
    end_transaction: [],
    end_committed_to_answer: [],
    url_duration_fetch_and_convert: [],
  };
  const add = (k: string, v: number | undefined) => {
    if (v !== undefined && Number.isFinite(v)) parts[k]!.push(v);
  };
  calls.forEach((c, i) => {
    const s = stored[i]!;
    if (s.fetched === null || s.finished === null) return;
    const claim = claimed.get(s.id);
    const end = ended.get(s.id);
    add('sent_to_run_started', s.started - c.sentAt);
    add('run_started_to_fetched', s.fetched - s.started);
    add('run_started_to_claimed', claim && claim - s.started);
    add('claimed_to_fetched', claim && s.fetched - claim);
    add('fetched_to_run_finished', s.finished - s.fetched);
    add('run_finished_to_answer', c.receivedAt - s.finished);
    add('end_transaction', end && end - s.finished);
    add('end_committed_to_answer', end && c.receivedAt - end);
    add('url_duration_fetch_and_convert', s.durationMs ?? undefined);
  });
  return {
    matched: true,
    ms: Object.fromEntries(
      Object.entries(parts)
        .filter(([, v]) => v.length > 0)
        .map(([k, v]) => {
          const l = latencies(v);
          return [k, { mean: l.mean, p50: l.p50, p90: l.p90, p99: l.p99 }];
        }),
    ),
  };
}

/**
 * The runs that ended but wait for the worker's analysis (changes, extraction health) when the
 * callers stop, how long the worker takes to drain them (polled every 250 ms, at most 120 s), the
 * CPU the worker and PostgreSQL spend meanwhile, and the worker's own time per analysis ("run
 * analysed" lines, LOG_LEVEL permitting).
 */
async function analysisBacklog(
  databaseUrl: string,
  pids: Record<string, number | undefined>,
  workerLogs: readonly Record<string, unknown>[],
) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const due = async () =>
    Number(
      (await client.query<{ n: string }>('SELECT count(*) AS n FROM runs WHERE analysis_due')).rows[0]!.n,
    );
  try {
    const watch = await cpuWatch({ worker1: pids.worker1 });
    const t0 = performance.now();
    const atStart = await due();
    let left = atStart;
    while (left > 0 && performance.now() - t0 < 120_000) {
      await support.sleep(250);
      left = await due();
    }
    const seconds = (performance.now() - t0) / 1000;
    const used = await watch.stop();
    const ms = workerLogs
      .filter((l) => l.msg === 'run analysed' && typeof l.ms === 'number')
      .map((l) => l.ms as number);
    return {
      due_when_the_callers_stop: atStart,
      due_after: left,
      drained_in_s: support.round2(seconds),
      cpu_ms_meanwhile: { worker: Math.round(used.worker1 ?? 0), postgres: Math.round(used.postgres ?? 0) },
      worker_ms_per_analysis: ms.length ? latencies(ms) : null,
    };
  } finally {
    await client.end();
  }
}

/** One caller, then --callers callers, through the API and the fleet. */
async function scrapesThroughApi(
  call: Call,
  url: string,
  title: string,
  pids: Record<string, number | undefined>,
  databaseUrl: string,
  workerLogs: readonly Record<string, unknown>[],
) {
  for (let i = 0; i < WARMUP; i++) {
    const r = await scrapeOnce(call, url, title);
    if (r.problem) throw new Error(`warm-up scrape: ${r.problem}`);
  }
  const problems: string[] = [];
  const seq: Awaited<ReturnType<typeof scrapeOnce>>[] = [];
  let watch = await cpuWatch(pids);
  const from = Date.now();
  let t0 = performance.now();
  for (let i = 0; i < SCRAPES; i++) seq.push(await scrapeOnce(call, url, title));
  let wall = performance.now() - t0;
  let used = await watch.stop();
  const to = Date.now();
  for (const r of seq) if (r.problem) problems.push(r.problem);
  const one = {
    latency_ms: latencies(seq.map((r) => r.ms)),
    scrapes_per_s: support.round2((SCRAPES * 1000) / wall),
    cpu_ms_per_scrape: cpuPer(used, SCRAPES),
    where_the_time_goes: breakdown(seq, await storedScrapes(databaseUrl, from, to), workerLogs),
  };
  support.log(`  1 caller: p50 ${one.latency_ms.p50} ms, p99 ${one.latency_ms.p99} ms`);

  await settle();
  const many: Awaited<ReturnType<typeof scrapeOnce>>[] = [];
  watch = await cpuWatch(pids);
  const manyFrom = Date.now();
  t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (performance.now() < deadline) many.push(await scrapeOnce(call, url, title));
    }),
  );
  wall = performance.now() - t0;
  used = await watch.stop();
  const stored = await storedScrapes(databaseUrl, manyFrom, Date.now());
  const backlog = await analysisBacklog(databaseUrl, pids, workerLogs);
  for (const r of many) if (r.problem) problems.push(r.problem);
  const storedParts = (pick: (s: (typeof stored)[number]) => number | null) =>
    latencies(stored.map(pick).filter((v): v is number => v !== null));
  const concurrent = {
    callers: CALLERS,
    seconds: support.round2(wall / 1000),
    scrapes: many.length,
    latency_ms: latencies(many.map((r) => r.ms)),
    scrapes_per_s: support.round2((many.length * 1000) / wall),
    cpu_ms_per_scrape: cpuPer(used, many.length),
    cores_busy: cpuPer(used, wall),
    analysis_after_the_callers: backlog,
    stored_ms: {
      run_started_to_fetched: storedParts((s) => s.fetched && s.fetched - s.started),
      fetched_to_run_finished: storedParts((s) => s.finished && s.fetched && s.finished - s.fetched),
      url_duration_fetch_and_convert: storedParts((s) => s.durationMs),
    },
  };
  support.log(
    `  ${CALLERS} callers: ${concurrent.scrapes_per_s} scrapes/s, p50 ${concurrent.latency_ms.p50} ms, p99 ${concurrent.latency_ms.p99} ms`,
  );
  return { one_caller: one, concurrent, problems: problems.slice(0, 10), invalid: problems.length };
}

// ---------------------------------------------------------------- crawls

interface CrawlResult {
  path: 'compatible' | 'native';
  workers: number;
  round: number;
  pages: number;
  /** Compatible: POST /v2/crawl → status seen completed. Native: POST run → the run seen ended. */
  observed_s: number;
  /** POST (/v2/crawl, or /jobs/{id}/run) → the run's stored finished_at: the figure compared. */
  to_finished_s: number;
  /** The run's own started_at → finished_at. */
  run_s: number;
  pages_per_s: number;
  read_back: { documents: number; seconds: number; documents_per_s: number; mib: number };
  cpu_ms_per_page: Record<string, number>;
  polls: number;
  machine_busy_before: number;
  valid: boolean;
  problems: string[];
}

interface RunView {
  run_id: string;
  status: string;
  started_at: string;
  finished_at: string | null;
  successful_urls: number;
  failed_urls: number;
  skipped_urls: number;
  error: unknown;
}

interface CrawlStatusBody {
  success: boolean;
  status: string;
  total: number;
  completed: number;
  next: string | null;
  data: { markdown?: string }[];
}

/** Every document of a finished crawl, page after page: how many, how long, how many bytes. */
async function readBack(
  firstPath: string,
  token: string,
  base: string,
  nextOf: (body: unknown) => string | null,
) {
  let url: string | null = `${base}${firstPath}`;
  let documents = 0;
  let bytes = 0;
  let withMarkdown = 0;
  const t0 = performance.now();
  while (url) {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${text.slice(0, 200)}`);
    bytes += text.length;
    const body = JSON.parse(text) as { data?: { markdown?: string }[]; documents?: { markdown?: string }[] };
    const docs = body.data ?? body.documents ?? [];
    documents += docs.length;
    withMarkdown += docs.filter((d) => (d.markdown ?? '').length > 0).length;
    url = nextOf(body);
  }
  const seconds = (performance.now() - t0) / 1000;
  return {
    documents,
    withMarkdown,
    seconds: support.round2(seconds),
    documents_per_s: support.round2(documents / seconds),
    mib: support.round2(bytes / 2 ** 20),
  };
}

async function finishedAtOf(databaseUrl: string, runId: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ started: string; finished: string | null }>(
      `SELECT extract(epoch FROM started_at) * 1000 AS started, extract(epoch FROM finished_at) * 1000 AS finished
         FROM runs WHERE id = $1`,
      [runId],
    );
    return { started: Number(rows[0]!.started), finished: Number(rows[0]!.finished) };
  } finally {
    await client.end();
  }
}

async function crawlCompatible(ctx: CrawlContext, round: number): Promise<CrawlResult> {
  const busy = await settle();
  support.log(`crawl: compatible, ${ctx.workers.length} worker(s), round ${round}`);
  const watch = await cpuWatch(ctx.pids());
  const t0 = Date.now();
  const started = await ctx.call<{ success: boolean; id: string }>('POST', '/v2/crawl', {
    url: `${ctx.site}/`,
    limit: CRAWL_PAGES,
    scrapeOptions: { formats: ['markdown'] },
    sitemap: 'skip',
  });
  if (started.status !== 200) throw new Error(`POST /v2/crawl answered ${started.status}`);
  const id = started.body.id;
  let status: CrawlStatusBody;
  let polls = 0;
  for (;;) {
    await support.sleep(POLL_MS);
    polls++;
    const r = await ctx.call<CrawlStatusBody>('GET', `/v2/crawl/${id}`);
    if (r.status !== 200) throw new Error(`GET /v2/crawl answered ${r.status}`);
    status = r.body;
    if (status.status !== 'scraping') break;
    if (Date.now() - t0 > 30 * 60_000) throw new Error('the crawl did not end within 30 minutes');
  }
  const observed = Date.now() - t0;
  const used = await watch.stop();
  const run = await finishedAtOf(ctx.databaseUrl, id);
  // `next` is absolute on PUBLIC_BASE_URL (its default here: the API is not told its port); same path here.
  const back = await readBack(`/v2/crawl/${id}`, ctx.token, ctx.base, (body) => {
    const next = (body as CrawlStatusBody).next;
    return next && `${ctx.base}${new URL(next).pathname}${new URL(next).search}`;
  });
  const problems: string[] = [];
  if (status.status !== 'completed') problems.push(`status ${status.status}`);
  if (status.completed !== CRAWL_PAGES || status.total !== CRAWL_PAGES)
    problems.push(`completed ${status.completed} of total ${status.total}`);
  if (back.documents !== CRAWL_PAGES || back.withMarkdown !== CRAWL_PAGES)
    problems.push(`${back.documents} documents read back, ${back.withMarkdown} with markdown`);
  return crawlResult('compatible', ctx, round, {
    pages: status.completed,
    observed,
    toFinished: run.finished - t0,
    run: run.finished - run.started,
    back,
    cpu: cpuPer(used, Math.max(1, status.completed)),
    polls,
    busy,
    problems,
  });
}

async function crawlNative(ctx: CrawlContext, round: number): Promise<CrawlResult> {
  const busy = await settle();
  support.log(`crawl: native, ${ctx.workers.length} worker(s), round ${round}`);
  const created = await ctx.call<{ job_id: string }>('POST', '/jobs', {
    name: `native crawl ${ctx.workers.length}w ${round}`,
    source: `${ctx.site}/`,
    queries: [],
    formats: ['markdown', 'metadata'],
    rate_limit: 6000,
    crawl: {
      follow: [{ type: 'css', query: 'a::attr(href)' }],
      max_depth: 50,
      max_pages: CRAWL_PAGES,
      same_origin: true,
    },
  });
  if (created.status !== 201)
    throw new Error(`POST /jobs answered ${created.status}: ${JSON.stringify(created.body)}`);
  const jobId = created.body.job_id;
  const watch = await cpuWatch(ctx.pids());
  const t0 = Date.now();
  const started = await ctx.call<{ run_id: string }>('POST', `/jobs/${jobId}/run`);
  if (started.status !== 202) throw new Error(`POST run answered ${started.status}`);
  const runId = started.body.run_id;
  let run: RunView;
  let polls = 0;
  for (;;) {
    await support.sleep(POLL_MS);
    polls++;
    const r = await ctx.call<RunView>('GET', `/jobs/${jobId}/runs/${runId}`);
    if (r.status !== 200) throw new Error(`GET run answered ${r.status}`);
    run = r.body;
    if (run.status !== 'running') break;
    if (Date.now() - t0 > 30 * 60_000) throw new Error('the crawl did not end within 30 minutes');
  }
  const observed = Date.now() - t0;
  const used = await watch.stop();
  const finished = new Date(run.finished_at!).getTime();
  const back = await readBack(
    `/jobs/${jobId}/runs/${runId}/documents?limit=100`,
    ctx.token,
    ctx.base,
    (body) => {
      const cursor = (body as { next_cursor: string | null }).next_cursor;
      return (
        cursor &&
        `${ctx.base}/jobs/${jobId}/runs/${runId}/documents?limit=100&cursor=${encodeURIComponent(cursor)}`
      );
    },
  );
  const problems: string[] = [];
  if (run.status !== 'success') problems.push(`status ${run.status} ${JSON.stringify(run.error)}`);
  if (run.successful_urls !== CRAWL_PAGES) problems.push(`${run.successful_urls} successful URLs`);
  if (back.documents !== CRAWL_PAGES || back.withMarkdown !== CRAWL_PAGES)
    problems.push(`${back.documents} documents read back, ${back.withMarkdown} with markdown`);
  return crawlResult('native', ctx, round, {
    pages: run.successful_urls,
    observed,
    toFinished: finished - t0,
    run: finished - new Date(run.started_at).getTime(),
    back,
    cpu: cpuPer(used, Math.max(1, run.successful_urls)),
    polls,
    busy,
    problems,
  });
}

function crawlResult(
  path: CrawlResult['path'],
  ctx: CrawlContext,
  round: number,
  m: {
    pages: number;
    observed: number;
    toFinished: number;
    run: number;
    back: Awaited<ReturnType<typeof readBack>>;
    cpu: Record<string, number>;
    polls: number;
    busy: number;
    problems: string[];
  },
): CrawlResult {
  const r = support.round2;
  const { withMarkdown: _, ...back } = m.back;
  const result: CrawlResult = {
    path,
    workers: ctx.workers.length,
    round,
    pages: m.pages,
    observed_s: r(m.observed / 1000),
    to_finished_s: r(m.toFinished / 1000),
    run_s: r(m.run / 1000),
    pages_per_s: r((m.pages * 1000) / m.toFinished),
    read_back: back,
    cpu_ms_per_page: m.cpu,
    polls: m.polls,
    machine_busy_before: m.busy,
    valid: m.problems.length === 0,
    problems: m.problems,
  };
  support.log(
    `  ${result.pages} pages, ${result.to_finished_s} s to finished_at (${result.pages_per_s} pages/s), ` +
      `seen ended after ${result.observed_s} s; read back in ${back.seconds} s${result.valid ? '' : ` INVALID: ${m.problems.join('; ')}`}`,
  );
  return result;
}

interface CrawlContext {
  call: Call;
  base: string;
  token: string;
  site: string;
  databaseUrl: string;
  workers: Proc[];
  pids: () => Record<string, number | undefined>;
}

// ---------------------------------------------------------------- the run

async function startSite(): Promise<{ url: string; pid: number }> {
  const logFile = join(support.tempDir('firecrawl'), 'site.log');
  const child = support.spawnLogged(['bench/firecrawl-site.ts'], logFile, {
    stderr: 'inherit',
    env: { CRAWL_PAGES: String(CRAWL_PAGES) },
  });
  const [, port] = await support.waitForLog(child, logFile, /listening (\d+)/, 'the site');
  return { url: `http://127.0.0.1:${port}`, pid: child.pid! };
}

/** Builds every page once, so that no measurement pays for the site's first render. */
async function warmSite(site: string): Promise<void> {
  const paths = ['/article/1', '/catalog/1', '/'];
  for (let n = 1; n < CRAWL_PAGES; n++) paths.push(`/page/${n}`);
  for (let i = 0; i < paths.length; i += 50)
    await Promise.all(paths.slice(i, i + 50).map((p) => fetch(`${site}${p}`).then((r) => r.arrayBuffer())));
}

/** The production Node flags of an app, and with --cpu-prof the flags that profile it. */
const nodeOptions = (app: string, name: string) => ({
  NODE_OPTIONS: [
    ...support.productionNodeFlags(app),
    ...(CPU_PROF_DIR ? support.cpuProfFlags(CPU_PROF_DIR, name) : []),
    ...args['node-options'].split(' ').filter(Boolean),
  ].join(' '),
});
const workerEnv = () => ({ ...nodeOptions('scraper-worker', 'worker'), LOG_LEVEL: WORKER_LOG_LEVEL });

async function main(): Promise<boolean> {
  support.log(`database ${DB_NAME}, Redis prefix ${PREFIX}`);
  const databaseUrl = await support.createBenchDatabase(DB_NAME);
  const site = await startSite();
  await warmSite(site.url);
  const token = await support.createKeyWithCli(databaseUrl, 'bench-firecrawl@example.com');
  const { api, worker, base } = await support.startApiAndWorker({
    databaseUrl,
    prefix: PREFIX,
    logLevel: LOG_LEVEL,
    api: nodeOptions('api', 'api'),
    worker: workerEnv(),
  });
  const call = support.apiClient(base, token);
  const workers: Proc[] = [worker];
  const pids = () => ({
    api: api.child.pid,
    ...Object.fromEntries(workers.map((w, i) => [`worker${i + 1}`, w.child.pid])),
    site: site.pid,
    bench: process.pid,
  });

  const scrapes: Record<string, unknown>[] = [];
  if (PARTS.has('scrape'))
    for (const kind of PAGE_KINDS) {
      const url = `${site.url}/${kind}/1`;
      const html = await (await fetch(url)).text();
      const title = kind === 'article' ? '# Notes on' : 'Product 0 of page 1';
      const busy = await settle();
      support.log(`scrape: ${kind} page (${html.length} bytes): the floor`);
      const floorResult = await floor(url);
      support.log(`  floor: p50 ${floorResult.latency_ms.p50} ms`);
      await settle();
      support.log(`scrape: ${kind} page through the API and the fleet`);
      const ours = await scrapesThroughApi(call, url, title, pids(), databaseUrl, worker.logs);
      scrapes.push({
        page: kind,
        page_bytes: html.length,
        machine_busy_before: busy,
        floor: floorResult,
        ours,
      });
    }

  const crawls: CrawlResult[] = [];
  if (PARTS.has('crawl')) {
    const ctx: CrawlContext = { call, base, token, site: site.url, databaseUrl, workers, pids };
    for (const count of WORKER_COUNTS) {
      while (workers.length < count) {
        const more = startApp('scraper-worker', {
          DATABASE_URL: databaseUrl,
          REDIS_URL: support.REDIS_URL,
          QUEUE_PREFIX: PREFIX,
          ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
          ...workerEnv(),
        });
        support.track(more.child, 20_000);
        await support.sleep(3000);
        workers.push(more);
      }
      while (workers.length > count) await support.stopChild(workers.pop()!.child);
      for (let round = 1; round <= ROUNDS; round++) {
        // Alternate which path goes first: compatible first on odd worker counts' odd rounds.
        const compatibleFirst = (count + round) % 2 === 0;
        if (compatibleFirst) {
          crawls.push(await crawlCompatible(ctx, round));
          crawls.push(await crawlNative(ctx, round));
        } else {
          crawls.push(await crawlNative(ctx, round));
          crawls.push(await crawlCompatible(ctx, round));
        }
      }
    }
  }
  const siteStats = await (await fetch(`${site.url}/__stats`)).json();
  let profiles = null;
  if (CPU_PROF_DIR) {
    // The profiles are written when the processes end.
    for (const w of workers) await support.stopChild(w.child);
    await support.stopChild(api.child);
    profiles = {
      api: support.latestProfile(CPU_PROF_DIR, 'api'),
      worker: support.latestProfile(CPU_PROF_DIR, 'worker'),
    };
  }
  return report(scrapes, crawls, siteStats, profiles);
}

function report(
  scrapes: Record<string, unknown>[],
  crawls: CrawlResult[],
  siteStats: unknown,
  profiles: unknown,
): boolean {
  type Scrape = {
    page: string;
    page_bytes: number;
    floor: Awaited<ReturnType<typeof floor>>;
    ours: Awaited<ReturnType<typeof scrapesThroughApi>>;
  };
  const s = scrapes as Scrape[];
  const overhead = WORKER_COUNTS.map((workers) => {
    const mean = (path: string, pick: (c: CrawlResult) => number) => {
      const xs = crawls.filter((c) => c.workers === workers && c.path === path && c.valid).map(pick);
      return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN;
    };
    const native = mean('native', (c) => c.to_finished_s);
    return {
      workers,
      native_s: support.round2(native),
      compatible_to_finished_s: support.round2(mean('compatible', (c) => c.to_finished_s)),
      compatible_observed_s: support.round2(mean('compatible', (c) => c.observed_s)),
      ratio_to_finished: support.round2(mean('compatible', (c) => c.to_finished_s) / native),
      ratio_observed: support.round2(mean('compatible', (c) => c.observed_s) / native),
    };
  });
  const targets = {
    p50_at_one_caller_le_100_ms: s.map((x) => ({
      page: x.page,
      met: x.ours.one_caller.latency_ms.p50 <= 100,
    })),
    at_least_100_scrapes_per_s_at_20: s.map((x) => ({
      page: x.page,
      met: x.ours.concurrent.scrapes_per_s >= TARGETS.scrapes_per_s_at_20,
    })),
    crawl_overhead_under_10_percent: overhead.map((o) => ({
      workers: o.workers,
      met: o.ratio_observed < 1 + TARGETS.crawl_overhead,
    })),
  };
  const valid = s.every((x) => x.ours.invalid === 0) && crawls.every((c) => c.valid);
  const summary = {
    benchmark: 'firecrawl',
    date: new Date().toISOString(),
    machine: support.machineInfo('API, workers, site, PostgreSQL, Redis and this process share these cores'),
    settings: {
      quick: QUICK,
      scrapes: SCRAPES,
      warmup: WARMUP,
      callers: CALLERS,
      seconds: SECONDS,
      crawl_pages: CRAWL_PAGES,
      workers: WORKER_COUNTS,
      rounds: ROUNDS,
      poll_ms: POLL_MS,
      log_level: { api: LOG_LEVEL, workers: WORKER_LOG_LEVEL },
    },
    scrapes,
    crawls,
    crawl_overhead: overhead,
    site_requests: siteStats,
    profiles,
    targets,
    all_valid: valid,
  };
  console.log(JSON.stringify(summary, null, 2));
  support.writeJsonOut(args['json-out'], summary);

  if (s.length) {
    console.log('');
    support.printTable(
      [
        'page',
        'path',
        'callers',
        'scrapes',
        'p50 ms',
        'p90 ms',
        'p99 ms',
        'scrapes/s',
        'CPU ms/scrape api / worker / postgres',
      ],
      'lllrrrrrl',
      s.flatMap((x) => {
        const cpu = (c: Record<string, number>) => `${c.api} / ${c.worker1} / ${c.postgres}`;
        return [
          [
            x.page,
            'floor: fetch + htmlDocument here',
            1,
            x.floor.latency_ms.n,
            x.floor.latency_ms.p50,
            x.floor.latency_ms.p90,
            x.floor.latency_ms.p99,
            x.floor.scrapes_per_s,
            `${x.floor.cpu_ms_per_scrape.bench} (this process)`,
          ],
          [
            x.page,
            'POST /v2/scrape',
            1,
            x.ours.one_caller.latency_ms.n,
            x.ours.one_caller.latency_ms.p50,
            x.ours.one_caller.latency_ms.p90,
            x.ours.one_caller.latency_ms.p99,
            x.ours.one_caller.scrapes_per_s,
            cpu(x.ours.one_caller.cpu_ms_per_scrape),
          ],
          [
            x.page,
            'POST /v2/scrape',
            CALLERS,
            x.ours.concurrent.latency_ms.n,
            x.ours.concurrent.latency_ms.p50,
            x.ours.concurrent.latency_ms.p90,
            x.ours.concurrent.latency_ms.p99,
            x.ours.concurrent.scrapes_per_s,
            cpu(x.ours.concurrent.cpu_ms_per_scrape),
          ],
        ];
      }),
    );
    console.log('');
    support.printTable(
      ['page', 'one caller: where the time goes', 'mean ms', 'p50 ms', 'p90 ms', 'p99 ms'],
      'llrrrr',
      s.flatMap((x) => {
        const b = x.ours.one_caller.where_the_time_goes;
        if (!('ms' in b) || !b.ms) return [[x.page, 'runs not matched to calls', '', '', '', '']];
        return Object.entries(b.ms).map(([k, v]) => [
          x.page,
          k.replaceAll('_', ' '),
          v.mean,
          v.p50,
          v.p90,
          v.p99,
        ]);
      }),
    );
  }
  if (crawls.length) {
    console.log('');
    support.printTable(
      [
        'workers',
        'path',
        'round',
        'pages',
        's to finished_at',
        's seen ended',
        'pages/s',
        'read back s',
        'CPU ms/page api / workers / postgres',
        'valid',
      ],
      'rlrrrrrrll',
      crawls.map((c) => [
        c.workers,
        c.path,
        c.round,
        c.pages,
        c.to_finished_s,
        c.observed_s,
        c.pages_per_s,
        c.read_back.seconds,
        `${c.cpu_ms_per_page.api} / ${support.round2((c.cpu_ms_per_page.worker1 ?? 0) + (c.cpu_ms_per_page.worker2 ?? 0))} / ${c.cpu_ms_per_page.postgres}`,
        c.valid ? 'yes' : c.problems.join('; '),
      ]),
    );
    console.log('');
    support.printTable(
      [
        'workers',
        'native s',
        'compatible s to finished_at',
        'compatible s seen completed',
        'ratio (finished_at)',
        'ratio (seen)',
      ],
      'rrrrrr',
      overhead.map((o) => [
        o.workers,
        o.native_s,
        o.compatible_to_finished_s,
        o.compatible_observed_s,
        o.ratio_to_finished,
        o.ratio_observed,
      ]),
    );
  }
  return valid;
}

await support.runBench(main);
