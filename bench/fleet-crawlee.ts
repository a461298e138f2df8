/**
 * The Crawlee side of bench/fleet.ts, in its own process so that its RSS is its own: Crawlee's
 * CheerioCrawler fetches and extracts the same pages with the same selectors as the fleet's
 * job (css `h1`, css `li.item > a::attr(href)`, xpath `//span[@class="price"]` written as the css
 * `span.price`, cheerio having no XPath), builds the same records (row i = i-th match of each
 * query, null where a query has fewer) and pushes them to its default dataset.
 *
 * Everything is Crawlee's default except `maxConcurrency` (and, for the "tuned" variant,
 * `minConcurrency`): retries, session pool, got-scraping's generated browser headers,
 * autoscaling, the request queue. Storage follows the environment: CRAWLEE_STORAGE_DIR (a
 * temporary directory the parent deletes), CRAWLEE_PERSIST_STORAGE (true: Crawlee's default,
 * the dataset and request queue are written to that directory as JSON files, one per record;
 * false: kept in memory).
 *
 * No connection leaves the machine: every socket connect to anything but loopback is refused
 * and counted (and there should be none).
 *
 * Usage: node bench/fleet-crawlee.ts <urls.json> <maxConcurrency> [minConcurrency]
 * Prints one JSON line (prefixed `RESULT `) at the end.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';

const blocked: string[] = [];
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '::ffff:127.0.0.1']);
const originalConnect = net.Socket.prototype.connect;
// biome-ignore lint/suspicious/noExplicitAny: the overloads of Socket#connect
net.Socket.prototype.connect = function (this: net.Socket, ...args: any[]) {
  // net.connect() passes its normalised [options, callback] array; direct calls pass options or (port, host).
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const opts = typeof first === 'object' && first !== null ? first : { port: first, host: args[1] };
  if (!opts.path) {
    const host = typeof opts.host === 'string' ? opts.host : 'localhost';
    if (!LOOPBACK.has(host)) {
      blocked.push(`${host}:${opts.port}`);
      process.nextTick(() => this.destroy(new Error(`bench: outbound connection to ${host} refused`)));
      return this;
    }
  }
  // biome-ignore lint/suspicious/noExplicitAny: forwarding the same arguments
  return (originalConnect as any).apply(this, args);
} as typeof net.Socket.prototype.connect;

const [urlsFile, maxArg, minArg] = process.argv.slice(2);
const urls = JSON.parse(readFileSync(urlsFile!, 'utf8')) as string[];
const maxConcurrency = Number(maxArg);
const minConcurrency = minArg ? Number(minArg) : undefined;

const { CheerioCrawler, Dataset } = await import('@crawlee/cheerio');

const text = (s: string) => s.replace(/\s+/g, ' ').trim();
let records = 0;
let pages = 0;

const crawler = new CheerioCrawler({
  maxConcurrency,
  ...(minConcurrency !== undefined && { minConcurrency }),
  async requestHandler({ $, pushData }) {
    const title = $('h1')
      .map((_, el) => text($(el).text()))
      .get();
    const links = $('li.item > a')
      .map((_, el) => $(el).attr('href') ?? null)
      .get();
    const prices = $('span.price')
      .map((_, el) => text($(el).text()))
      .get();
    const n = Math.max(title.length, links.length, prices.length);
    const rows = Array.from({ length: n }, (_, i) => ({
      title: title[i] ?? null,
      links: links[i] ?? null,
      price: prices[i] ?? null,
    }));
    pages++;
    records += rows.length;
    if (rows.length) await pushData(rows);
  },
});

const started = performance.now();
const startedAt = Date.now();
const stats = await crawler.run(urls);
const durationMs = performance.now() - started;
const dataset = await Dataset.open();
const info = await dataset.getInfo();
const status = readFileSync('/proc/self/status', 'utf8');
const kb = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))?.[1] ?? 0);
console.log(
  `RESULT ${JSON.stringify({
    started_at: startedAt,
    duration_ms: Math.round(durationMs),
    pages_handled: pages,
    records_pushed: records,
    dataset_items: info?.itemCount ?? null,
    requests_finished: stats.requestsFinished,
    requests_failed: stats.requestsFailed,
    retries: stats.retryHistogram,
    vm_hwm_mib: Math.round((kb('VmHWM') / 1024) * 100) / 100,
    blocked_outbound: blocked,
  })}`,
);
