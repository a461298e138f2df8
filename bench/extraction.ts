/**
 * Extraction engine benchmark: pages per second on one thread for an ~80 KB page with 400
 * list items; then what the scraper worker's hand-off to its extraction threads costs per page.
 * Run: `pnpm exec node bench/extraction.ts [--seconds 3]`.
 * Prints a JSON summary, then Markdown tables.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { compileJob, decodeHtml, extract, type QuerySpec } from '@scrapejobs/extraction';
import { PageExtractor } from '../apps/scraper-worker/src/extract/extractor.ts';
import { cpuModel, parseOptions, printTable, productItems, round2, sampleAt } from './support.ts';

const ITEMS = 400;
const args = parseOptions({
  seconds: '3',
});
const MEASURE_MS = Number(args.seconds) * 1000;
const WARMUP_MS = Math.min(1000, MEASURE_MS / 2);

function makePage(items: number): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Catalogue</title>
<style>body { font-family: sans-serif }</style></head>
<body><header><h1>Catalogue</h1><nav><a href="/">Home</a> <a href="/about">About</a></nav></header>
<main><ul id="products">
${productItems(items)}
</ul></main><footer><p>Page 1 of 10</p></footer></body></html>`;
}

interface Scenario {
  name: string;
  target: number;
  queries: QuerySpec[];
}

/** A scenario of one query, named `<name> (1 query)`. */
const oneQuery = (name: string, target: number, query: QuerySpec): Scenario => ({
  name: `${name} (1 query)`,
  target,
  queries: [query],
});

const scenarios: Scenario[] = [
  oneQuery('css', 150, { name: 'title', type: 'css', query: 'li.product > a' }),
  oneQuery('xpath', 30, { name: 'title', type: 'xpath', query: '//li[@class="product"]/a' }),
  // The same path in parentheses is outside the fast path (xpath-simple.ts): fontoxpath.
  oneQuery('xpath through fontoxpath', 30, {
    name: 'title',
    type: 'xpath',
    query: '(//li[@class="product"]/a)',
  }),
  oneQuery('xpath, descendants', 0, {
    name: 'link',
    type: 'xpath',
    query: '//li[contains(@class, "product")]//a/@href',
  }),
  // Through fontoxpath, `//` after a predicate makes it sort the results into document order.
  oneQuery('xpath, descendants through fontoxpath', 0, {
    name: 'link',
    type: 'xpath',
    query: '(//li[contains(@class, "product")]//a/@href)',
  }),
  oneQuery('regex', 0, { name: 'id', type: 'regex', query: 'data-id="(\\d+)"' }),
  {
    name: 'mixed (6 queries)',
    target: 25,
    queries: [
      { name: 'title', type: 'css', query: 'li.product > a' },
      { name: 'link', type: 'css', query: 'li.product > a::attr(href)' },
      { name: 'price', type: 'xpath', query: '//li/span[@class="price"]' },
      { name: 'id', type: 'xpath', query: '//li/@data-id' },
      { name: 'desc', type: 'regex', query: '/<p class="desc">([^<]*)<\\/p>/i' },
      { name: 'heading', type: 'css', query: 'h1', join: true },
    ],
  },
];

interface Result {
  scenario: string;
  pagesPerSecond: number;
  msPerPage: { mean: number; p50: number; p95: number };
  recordsPerPage: number;
  target: number | null;
  meetsTarget: boolean | null;
}

function measure(scenario: Scenario, html: string): Result {
  const job = compileJob(scenario.queries);
  let records = 0;
  const warmupEnd = performance.now() + WARMUP_MS;
  while (performance.now() < warmupEnd) records = extract(job, html).length;
  const samples: number[] = [];
  const start = performance.now();
  let now = start;
  while (now - start < MEASURE_MS) {
    const before = now;
    extract(job, html);
    now = performance.now();
    samples.push(now - before);
  }
  samples.sort((a, b) => a - b);
  const pagesPerSecond = samples.length / ((now - start) / 1000);
  return {
    scenario: scenario.name,
    pagesPerSecond: round2(pagesPerSecond),
    msPerPage: {
      mean: round2(1000 / pagesPerSecond),
      p50: round2(sampleAt(samples, 0.5)),
      p95: round2(sampleAt(samples, 0.95)),
    },
    recordsPerPage: records,
    target: scenario.target > 0 ? scenario.target : null,
    meetsTarget: scenario.target > 0 ? pagesPerSecond >= scenario.target : null,
  };
}

interface HandOff {
  scenario: string;
  way: string;
  pagesPerSecond: number;
  msPerPage: { mean: number; p50: number; p95: number };
  /** Time this thread's event loop was busy, per page: what the hand-off leaves on it. */
  eventLoopMsPerPage: number;
}

/** Pages/s and per-page times of `one()` run back to back for MEASURE_MS, `inFlight` at a time. */
async function timeLoop(
  one: () => unknown,
  inFlight: number,
): Promise<HandOff['msPerPage'] & { pps: number; loop: number }> {
  const warmupEnd = performance.now() + WARMUP_MS;
  while (performance.now() < warmupEnd) await one();
  const samples: number[] = [];
  const elu = performance.eventLoopUtilization();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() - start < MEASURE_MS) {
        const before = performance.now();
        await one();
        samples.push(performance.now() - before);
        // One turn of the event loop per page, as a worker's would take, so that its busy time is measured.
        await new Promise((r) => setImmediate(r));
      }
    }),
  );
  const elapsed = performance.now() - start;
  const busy = performance.eventLoopUtilization(elu).active;
  samples.sort((a, b) => a - b);
  const pps = samples.length / (elapsed / 1000);
  return {
    pps: round2(pps),
    mean: round2(1000 / pps),
    p50: round2(sampleAt(samples, 0.5)),
    p95: round2(sampleAt(samples, 0.95)),
    loop: Math.round((busy / samples.length) * 1000) / 1000,
  };
}

/**
 * The worker's work per page before and after extraction moved to threads: decode the fetched
 * bytes, extract, serialise each record, on this thread; then the same through PageExtractor
 * (the body moves to a thread, rows come back as JSON text), one page at a time and eight.
 */
async function measureHandOff(scenario: Scenario, html: string, threads: number): Promise<HandOff[]> {
  const job = compileJob(scenario.queries);
  const inProcess = await timeLoop(
    () => extract(job, decodeHtml(Buffer.from(html), 'text/html')).map((r) => JSON.stringify(r)),
    1,
  );
  const extractor = new PageExtractor({ threads, timeLimitMs: 5_000, memoryMb: 256 });
  const task = () =>
    extractor.extract('bench', {
      key: scenario.name,
      queries: scenario.queries,
      page: { body: Buffer.from(html), contentType: 'text/html' },
    });
  const one = await timeLoop(task, 1);
  const eight = await timeLoop(task, 8);
  await extractor.close();
  const row = (way: string, t: typeof one): HandOff => ({
    scenario: scenario.name,
    way,
    pagesPerSecond: t.pps,
    msPerPage: { mean: t.mean, p50: t.p50, p95: t.p95 },
    eventLoopMsPerPage: t.loop,
  });
  return [
    row('on the event loop (before)', inProcess),
    row('through the sandbox, 1 page at a time', one),
    row(`through the sandbox, 8 in flight, ${threads} threads`, eight),
  ];
}

const html = makePage(ITEMS);
const results = scenarios.map((scenario) => measure(scenario, html));
// The worker's default EXTRACTION_THREADS; one user's pages get all of them but one.
const workerThreads = Math.max(2, Math.min(8, os.availableParallelism()));
const handOffs: HandOff[] = [];
for (const scenario of scenarios.filter((s) => s.name.startsWith('css') || s.name.startsWith('mixed')))
  handOffs.push(...(await measureHandOff(scenario, html, workerThreads)));
const summary = {
  page: { bytes: Buffer.byteLength(html), items: ITEMS },
  node: process.version,
  cpu: cpuModel(),
  cores: os.availableParallelism(),
  threads: 1,
  warmupMs: WARMUP_MS,
  measureMs: MEASURE_MS,
  results,
  handOffs,
};
console.log(JSON.stringify(summary, null, 2));
const timing = ['pages/s', 'ms/page (mean)', 'p50 ms', 'p95 ms'];
const timingOf = (t: Result | HandOff) => [
  t.pagesPerSecond,
  t.msPerPage.mean,
  t.msPerPage.p50,
  t.msPerPage.p95,
];
console.log('');
printTable(
  ['scenario', ...timing, 'records/page', 'target'],
  'lrrrrrl',
  results.map((r) => [
    r.scenario,
    ...timingOf(r),
    r.recordsPerPage,
    r.target === null ? '—' : `≥ ${r.target} ${r.meetsTarget ? 'met' : 'MISSED'}`,
  ]),
);
console.log('');
printTable(
  ['scenario', 'way', ...timing, 'event loop ms/page'],
  'llrrrrr',
  handOffs.map((h) => [h.scenario, h.way, ...timingOf(h), h.eventLoopMsPerPage]),
);
