/**
 * The Crawlee side of bench/render-vs-crawlee.ts, in its own process so that its memory is its
 * own: Crawlee's PuppeteerCrawler renders the same pages of bench/render-site.ts in Debian's
 * Chromium 156 with the same flags as the worker's renderer, at a fixed concurrency
 * (minConcurrency = maxConcurrency), and checks every page's HTML as bench/render.ts does (its
 * 400 items and the item its timer adds).
 *
 * Everything else is Crawlee's default (the full browser in its headless mode, navigation to
 * `load`, its browser pool with fingerprints, retries, the request queue), with the dataset and
 * queue in memory, unless `lean`: then no fingerprints and images, fonts, media and style sheets
 * are refused (`blockRequests`), closer to what the worker's renderer does for an extraction job;
 * or `shell`: Crawlee's defaults on the worker's own Chromium, the headless shell.
 *
 * Usage: node bench/render-crawlee.ts <origin> <pages> <concurrency> <jsEvery> <default|lean|shell>
 * The first `WARMUP_PAGES` pages are not timed. Prints one JSON line (prefixed `RESULT `) at the end.
 */
import { PuppeteerCrawler, puppeteerUtils } from '@crawlee/puppeteer';
import puppeteer from 'puppeteer';
import { DEFAULT_CHROMIUM_PATH } from '../apps/scraper-worker/src/config.ts';
import { CHROMIUM_BASE_FLAGS, headlessMode } from '../apps/scraper-worker/src/render/renderer.ts';
import { renderedPageError } from './render-site.ts';

/** Debian's full Chromium, Crawlee's kind of browser. */
const FULL_CHROMIUM = process.env.FULL_CHROMIUM_PATH ?? '/usr/bin/chromium';

const [origin, pagesArg, concurrencyArg, jsEveryArg, variant = 'default'] = process.argv.slice(2);
const PAGES = Number(pagesArg);
const CONCURRENCY = Number(concurrencyArg);
const WARMUP_PAGES = 6;
const lean = variant === 'lean';
/** This side's browser: the full one, or with `shell` the worker's headless shell. */
const CHROMIUM = variant === 'shell' ? DEFAULT_CHROMIUM_PATH : FULL_CHROMIUM;
if (!origin || !PAGES || !CONCURRENCY || jsEveryArg === undefined) throw new Error('see the usage');

let handled = 0;
let errors = 0;
let timedFrom = 0;
const latencies: number[] = [];
const crawler = new PuppeteerCrawler({
  minConcurrency: CONCURRENCY,
  maxConcurrency: CONCURRENCY,
  launchContext: {
    launcher: puppeteer,
    launchOptions: {
      executablePath: CHROMIUM,
      headless: headlessMode(CHROMIUM),
      args: CHROMIUM_BASE_FLAGS,
    },
  },
  ...(lean && { browserPoolOptions: { useFingerprints: false } }),
  preNavigationHooks: [
    async ({ page, request }) => {
      request.userData.started = performance.now();
      if (lean) await puppeteerUtils.blockRequests(page, { extraUrlPatterns: ['.css'] });
    },
  ],
  async requestHandler({ page, request }) {
    const html = await page.content();
    const n = Number(request.userData.n);
    const wrong = renderedPageError(html, n);
    handled++;
    if (handled === WARMUP_PAGES) timedFrom = performance.now();
    if (n >= WARMUP_PAGES) latencies.push(performance.now() - Number(request.userData.started));
    if (wrong) errors++;
  },
  failedRequestHandler() {
    errors++;
  },
});

const total = WARMUP_PAGES + PAGES;
const requests = Array.from({ length: total }, (_, n) => ({ url: `${origin}/page/${n}`, userData: { n } }));
const started = performance.now();
const stats = await crawler.run(requests);
const ended = performance.now();
latencies.sort((a, b) => a - b);
const at = (q: number) =>
  Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
const timedSeconds = (ended - timedFrom) / 1000;
console.log(
  `RESULT ${JSON.stringify({
    variant: `crawlee-${variant}`,
    pages: handled - WARMUP_PAGES,
    errors,
    requests_failed: stats.requestsFailed,
    seconds: Math.round(timedSeconds * 10) / 10,
    seconds_with_start: Math.round((ended - started) / 100) / 10,
    pagesPerMinute: Math.round(((handled - WARMUP_PAGES) / timedSeconds) * 60),
    msPerRender: { p50: at(0.5), p95: at(0.95) },
  })}`,
);
