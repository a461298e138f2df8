/**
 * The bare-puppeteer side of bench/render-vs-crawlee.ts: what Chromium itself allows on these
 * pages at this concurrency, with no crawler around it. One page per place, kept for every render
 * of that place, in the same Chromium with the same flags as the worker's renderer (no proxy, no
 * settled-DOM read, no check of what a page may reach): `goto` to `load`, then `page.content()`,
 * and every page's HTML checked as bench/render.ts checks it.
 *
 * Usage: node bench/render-puppeteer.ts <origin> <pages> <concurrency>
 * The first `WARMUP_PAGES` pages are not timed. Prints one JSON line (prefixed `RESULT `) at the end.
 */
import puppeteer from 'puppeteer';
import { DEFAULT_CHROMIUM_PATH } from '../apps/scraper-worker/src/config.ts';
import { CHROMIUM_BASE_FLAGS, headlessMode } from '../apps/scraper-worker/src/render/renderer.ts';
import { renderedPageError } from './render-site.ts';
import { sampleAt } from './support.ts';

const [origin, pagesArg, concurrencyArg] = process.argv.slice(2);
const PAGES = Number(pagesArg);
const CONCURRENCY = Number(concurrencyArg);
const WARMUP_PAGES = 6;
if (!origin || !PAGES || !CONCURRENCY) throw new Error('see the usage');

const CHROMIUM = process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;
const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: headlessMode(CHROMIUM),
  pipe: true,
  args: CHROMIUM_BASE_FLAGS,
});
const pages = await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => (await browser.createBrowserContext()).newPage()),
);
let next = 0;
let errors = 0;
const latencies: number[] = [];
const render = async (page: (typeof pages)[number]) => {
  const n = next++;
  const started = performance.now();
  try {
    await page.goto(`${origin}/page/${n}`, { waitUntil: 'load' });
    if (renderedPageError(await page.content(), n)) errors++;
  } catch {
    errors++;
  }
  return performance.now() - started;
};
for (let i = 0; i < WARMUP_PAGES; i++) await render(pages[i % CONCURRENCY]!);
const started = performance.now();
await Promise.all(
  pages.map(async (page) => {
    while (next < WARMUP_PAGES + PAGES) latencies.push(await render(page));
  }),
);
const seconds = (performance.now() - started) / 1000;
await browser.close();
latencies.sort((a, b) => a - b);
console.log(
  `RESULT ${JSON.stringify({
    variant: 'puppeteer',
    pages: latencies.length,
    errors,
    seconds: Math.round(seconds * 10) / 10,
    pagesPerMinute: Math.round((latencies.length / seconds) * 60),
    msPerRender: { p50: Math.round(sampleAt(latencies, 0.5)), p95: Math.round(sampleAt(latencies, 0.95)) },
  })}`,
);
