/**
 * Rendering benchmark: pages per minute through the scraper worker's Renderer (Chromium via
 * puppeteer, every request through the safety proxy) on a local site of ~80 KB pages
 * with a little JavaScript. Run: `pnpm exec node bench/render.ts [--seconds 30]
 * [--concurrency 2] [--wait load] [--actions 0|3]`. With `--actions 3` each page runs three
 * render actions before its DOM is read (docs/api.md §14): a click on a "load more" button, a
 * wait_for of what it adds, a scroll to the bottom. `--js-every 10` makes one page in ten an
 * application shell (an empty `#root`, its 400 items built by script from inline state), and
 * `--mode auto` gets each page as render_config.mode `auto` decides (docs/api.md §23): fetched
 * plainly, read by the same rules (plainPageSignals), rendered only when they say so; `always`
 * renders every page. Every page is checked for its items. Prints a JSON summary, then a
 * Markdown line.
 */
import os from 'node:os';
import { plainPageSignals } from '@scrapejobs/content';
import type { RenderAction } from '@scrapejobs/contracts';
import { DEFAULT_CHROMIUM_PATH } from '../apps/scraper-worker/src/config.ts';
import { Renderer, type WaitStrategy } from '../apps/scraper-worker/src/render/index.ts';
import { ITEMS, isScripted, page, products, renderedPageError, startRenderSite } from './render-site.ts';
import { cpuModel, parseOptions, sampleAt } from './support.ts';

const args = parseOptions({
  seconds: '30',
  concurrency: '2',
  wait: 'load',
  actions: '0',
  mode: 'always',
  'js-every': '0',
  // With --pages, exactly that many pages after the warm-up instead of --seconds.
  pages: undefined,
  // render_config.block_resources: style sheets refused too (the default of a job that keeps records only).
  'block-resources': false,
  // Another process's site (bench/render-vs-crawlee.ts) instead of one of this process's own.
  origin: undefined,
});
const MODE = args.mode;
if (MODE !== 'always' && MODE !== 'auto') throw new Error('--mode is always or auto');
const JS_EVERY = Number(args['js-every']);
/** Whether page n is an application shell, built by script. */
const scripted = (n: number) => isScripted(JS_EVERY, n);
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);
const WAIT = args.wait as WaitStrategy;
const ACTIONS: RenderAction[] =
  args.actions === '3'
    ? [
        { type: 'click', selector: '#more' },
        { type: 'wait_for', selector: '#extra li.more', timeout_ms: 10_000 },
        { type: 'scroll', to: 'bottom', times: 1 },
      ]
    : [];
if (args.actions !== '0' && args.actions !== '3') throw new Error('--actions is 0 or 3');
const CHROMIUM = process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;
const WARMUP_PAGES = 6;

const site = args.origin ? null : await startRenderSite(JS_EVERY);
const origin = args.origin ?? site?.origin ?? '';

const renderer = await Renderer.start({
  concurrency: CONCURRENCY,
  executablePath: CHROMIUM,
  allowPrivate: true,
});
let next = 0;
let rendered = 0;
const renderOne = async () => {
  const n = next++;
  const url = `${origin}/page/${n}`;
  if (MODE === 'auto') {
    // render_config.mode auto: the plain page first, rendered only when the rules say so.
    const plain = await (await fetch(url)).text();
    if (plainPageSignals(plain).signal === null) {
      if (scripted(n) || products(plain) !== ITEMS)
        throw new Error(`page ${n} was not rendered but needed it`);
      return;
    }
  }
  const result = await renderer.render({
    url,
    waitStrategy: WAIT,
    waitTimeoutMs: 30_000,
    actions: ACTIONS,
    // One job's pages: the worker keeps a context and page per job (docs/api.md §23).
    isolationKey: 'bench-job',
    blockResources: args['block-resources'],
  });
  rendered++;
  const wrong = renderedPageError(result.html, n);
  if (wrong) throw new Error(wrong);
  if (ACTIONS.length > 0 && !result.html.includes(`>more ${n}</li>`))
    throw new Error(`page ${n} lacks the item its click added`);
};

// Warm-up: Chromium's first pages are slower (process start, caches).
await Promise.all(Array.from({ length: WARMUP_PAGES }, renderOne));

const latencies: number[] = [];
let errors = 0;
rendered = 0;
const start = performance.now();
const endAt = start + SECONDS * 1000;
const lastPage = args.pages === undefined ? Number.POSITIVE_INFINITY : WARMUP_PAGES + Number(args.pages);
const more = () => (args.pages === undefined ? performance.now() < endAt : next < lastPage);
// Twice as many callers as pages in flight, so the cluster's queue is never empty.
const caller = async () => {
  while (more()) {
    const t = performance.now();
    try {
      await renderOne();
      latencies.push(performance.now() - t);
    } catch {
      errors++;
    }
  }
};
await Promise.all(Array.from({ length: CONCURRENCY * 2 }, caller));
const elapsed = (performance.now() - start) / 1000;
const stats = renderer.stats();
await renderer.close();
site?.close();

latencies.sort((a, b) => a - b);
const at = (q: number) => Math.round(sampleAt(latencies, q));
const pagesPerMinute = Math.round((latencies.length / elapsed) * 60);
const summary = {
  page: { bytes: Buffer.byteLength(page(0)), items: ITEMS, subresources: 2 },
  waitStrategy: WAIT,
  actions: ACTIONS.map((a) => a.type),
  mode: MODE,
  blockResources: args['block-resources'],
  jsEvery: JS_EVERY,
  rendered,
  browserConcurrency: CONCURRENCY,
  seconds: Math.round(elapsed * 10) / 10,
  pages: latencies.length,
  errors,
  pagesPerMinute,
  // Latency includes queueing: callers keep twice the concurrency waiting.
  msPerRender: { p50: at(0.5), p95: at(0.95) },
  restarts: stats.restarts,
  node: process.version,
  cpu: cpuModel(),
  cores: os.availableParallelism(),
};
console.log(JSON.stringify(summary, null, 2));
// For bench/render-vs-crawlee.ts, which runs this script as a child.
console.log(`RESULT ${JSON.stringify(summary)}`);
console.log(
  `\n| ${MODE} (${WAIT}, concurrency ${CONCURRENCY}, ${Math.round(summary.page.bytes / 1024)} KB page, ${ACTIONS.length} actions, JS every ${JS_EVERY || '—'}) | ${pagesPerMinute} pages/min | ${rendered} rendered | p50 ${summary.msPerRender.p50} ms | p95 ${summary.msPerRender.p95} ms | ${errors} errors | ${summary.cores} cores |`,
);
