/**
 * Rendering benchmark: pages per minute through the scraper worker's Renderer (Chromium via
 * puppeteer-cluster, every request through the safety proxy) on a local site of ~80 KB pages
 * with a little JavaScript. Run: `pnpm exec node bench/render.ts [--seconds 30]
 * [--concurrency 2] [--wait load] [--actions 0|3]`. With `--actions 3` each page runs three
 * render actions before its DOM is read (docs/api.md §14): a click on a "load more" button, a
 * wait_for of what it adds, a scroll to the bottom. Prints a JSON summary, then a Markdown line.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import type { RenderAction } from '@scrapejobs/contracts';
import { Renderer, type WaitStrategy } from '../apps/scraper-worker/src/render/index.ts';
import { cpuModel, parseOptions, productItems, sampleAt } from './support.ts';

const args = parseOptions({
  seconds: '30',
  concurrency: '2',
  wait: 'load',
  actions: '0',
});
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
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ITEMS = 400;
const WARMUP_PAGES = 6;

function page(n: number): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Catalogue ${n}</title>
<link rel="stylesheet" href="/site.css"><script defer src="/site.js"></script></head>
<body><header><h1>Catalogue ${n}</h1></header>
<main><ul id="products">
${productItems(ITEMS)}
</ul><ul id="extra"></ul>
<button id="more" onclick="const li = document.createElement('li'); li.className = 'more'; li.textContent = 'more ${n}'; document.getElementById('extra').append(li)">Load more</button></main>
<script>setTimeout(() => { document.getElementById('extra').innerHTML = '<li>added ${n}</li>'; }, 10);</script>
</body></html>`;
}

const CSS = 'body { font-family: sans-serif } .price { color: #070 } li { margin: 2px 0 }';
const JS = `document.querySelectorAll('li.product').forEach((li, i) => { if (i % 2) li.classList.add('odd'); });`;

const server = http.createServer((req, res) => {
  const url = req.url ?? '/';
  if (url === '/site.css') return void res.writeHead(200, { 'content-type': 'text/css' }).end(CSS);
  if (url === '/site.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(JS);
  if (url === '/favicon.ico') return void res.writeHead(404).end();
  const n = Number(url.split('/').pop()) || 0;
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(n));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const renderer = await Renderer.start({
  concurrency: CONCURRENCY,
  executablePath: CHROMIUM,
  allowPrivate: true,
});
let next = 0;
const renderOne = async () => {
  const n = next++;
  const result = await renderer.render({
    url: `${origin}/page/${n}`,
    waitStrategy: WAIT,
    waitTimeoutMs: 30_000,
    actions: ACTIONS,
  });
  if (!result.html.includes(`<li>added ${n}</li>`)) throw new Error(`page ${n} lacks its script-made item`);
  if (ACTIONS.length > 0 && !result.html.includes(`>more ${n}</li>`))
    throw new Error(`page ${n} lacks the item its click added`);
};

// Warm-up: Chromium's first pages are slower (process start, caches).
await Promise.all(Array.from({ length: WARMUP_PAGES }, renderOne));

const latencies: number[] = [];
let errors = 0;
const start = performance.now();
const endAt = start + SECONDS * 1000;
// Twice as many callers as pages in flight, so the cluster's queue is never empty.
const caller = async () => {
  while (performance.now() < endAt) {
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
server.close();

latencies.sort((a, b) => a - b);
const at = (q: number) => Math.round(sampleAt(latencies, q));
const pagesPerMinute = Math.round((latencies.length / elapsed) * 60);
const summary = {
  page: { bytes: Buffer.byteLength(page(0)), items: ITEMS, subresources: 2 },
  waitStrategy: WAIT,
  actions: ACTIONS.map((a) => a.type),
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
console.log(
  `\n| render (${WAIT}, concurrency ${CONCURRENCY}, ${Math.round(summary.page.bytes / 1024)} KB page, ${ACTIONS.length} actions) | ${pagesPerMinute} pages/min | p50 ${summary.msPerRender.p50} ms | p95 ${summary.msPerRender.p95} ms | ${errors} errors | ${summary.cores} cores |`,
);
