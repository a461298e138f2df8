/**
 * Rendering benchmark: pages per minute through the scraper worker's Renderer (Chromium via
 * puppeteer-cluster, every request through the safety proxy) on a local site of ~80 KB pages
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
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { plainPageSignals } from '@scrapejobs/content';
import type { RenderAction } from '@scrapejobs/contracts';
import { Renderer, type WaitStrategy } from '../apps/scraper-worker/src/render/index.ts';
import { cpuModel, parseOptions, productItems, sampleAt } from './support.ts';

const args = parseOptions({
  seconds: '30',
  concurrency: '2',
  wait: 'load',
  actions: '0',
  mode: 'always',
  'js-every': '0',
});
const MODE = args.mode;
if (MODE !== 'always' && MODE !== 'auto') throw new Error('--mode is always or auto');
const JS_EVERY = Number(args['js-every']);
/** Whether page n is an application shell, built by script. */
const scripted = (n: number) => JS_EVERY > 0 && n % JS_EVERY === 0;
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

/** An application shell: an empty root, the same 400 items built by script from inline state. */
function shell(n: number): string {
  const state = Array.from({ length: ITEMS }, (_, i) => ({
    id: i,
    title: `Product number ${i}`,
    price: (i * 1.37).toFixed(2),
  }));
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Catalogue ${n}</title><link rel="stylesheet" href="/site.css"></head>
<body><div id="root"></div>
<script>window.__STATE__ = ${JSON.stringify({ n, items: state })};
const s = window.__STATE__; const root = document.getElementById('root');
root.innerHTML = '<header><h1>Catalogue ' + s.n + '</h1></header><main><ul id="products">' + s.items.map((p) =>
  '<li class="prod' + 'uct" data-id="' + p.id + '"><a class="title" href="/products/' + p.id + '">' + p.title + '</a> <span class="price">$' + p.price + '</span></li>').join('') + '</ul><ul id="extra"></ul></main>';
setTimeout(() => { document.getElementById('extra').innerHTML = '<li>added ${n}</li>'; }, 10);</script>
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
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(scripted(n) ? shell(n) : page(n));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const renderer = await Renderer.start({
  concurrency: CONCURRENCY,
  executablePath: CHROMIUM,
  allowPrivate: true,
});
let next = 0;
let rendered = 0;
// Scripts mark every other item `product odd`; the shell's own code spells the class in two parts.
const products = (html: string) => html.split('<li class="product').length - 1;
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
  });
  rendered++;
  if (!result.html.includes(`<li>added ${n}</li>`)) throw new Error(`page ${n} lacks its script-made item`);
  if (products(result.html) !== ITEMS) throw new Error(`page ${n} lacks its items`);
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
  mode: MODE,
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
console.log(
  `\n| ${MODE} (${WAIT}, concurrency ${CONCURRENCY}, ${Math.round(summary.page.bytes / 1024)} KB page, ${ACTIONS.length} actions, JS every ${JS_EVERY || '—'}) | ${pagesPerMinute} pages/min | ${rendered} rendered | p50 ${summary.msPerRender.p50} ms | p95 ${summary.msPerRender.p95} ms | ${errors} errors | ${summary.cores} cores |`,
);
