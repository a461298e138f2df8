/**
 * The target site of bench/fleet.ts, in its own process so that serving pages does not compete
 * with the benchmark's own event loop. `GET /p/<job>/<n>` answers an ~80 KB catalogue page with
 * 400 list items (built once per path, then served from memory, with Content-Length and
 * keep-alive); `GET /c/<n>` answers the same page linking to `/c/<2n+1>` and `/c/<2n+2>` while
 * they are below CRAWL_PAGES (default 20,000), built per request (bench/crawl.ts); `GET /__stats`
 * answers the request counts; everything else is 404.
 *
 * Run: `node bench/fleet-site.ts [port]`; prints `listening <port>` once ready.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const ITEMS_PER_PAGE = 400;

/** One catalogue page: a title, 400 items each with a link, a price and a description. */
export function catalogPage(job: string, n: number, items = ITEMS_PER_PAGE): string {
  const rows: string[] = [];
  for (let i = 0; i < items; i++) {
    rows.push(`<li class="item" data-sku="sku-${job}-${n}-${i}">
  <a class="name" href="/p/${job}/${n}/item/${i}">Product ${i} of page ${n}</a>
  <span class="price">$${((i * 137 + n * 7) / 100).toFixed(2)}</span>
  <p class="desc">Product ${i}: sturdy, in stock.</p>
</li>`);
  }
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Catalogue ${job} page ${n}</title>
<style>body { font-family: sans-serif } .item { margin: 0 }</style></head>
<body><header><h1>Catalogue ${job}, page ${n}</h1><nav><a href="/">Home</a> <a href="/about">About</a></nav></header>
<main><ul id="products">
${rows.join('\n')}
</ul></main><footer><p>Page ${n} of 100</p></footer></body></html>`;
}

/** A page of the crawl site: a catalogue page with links to its two children in a tree of `total` pages. */
export function crawlPage(n: number, total: number): string {
  const links = [2 * n + 1, 2 * n + 2]
    .filter((k) => k < total)
    .map((k) => `<a class="next" href="/c/${k}">Page ${k}</a>`)
    .join(' ');
  return catalogPage('c', n).replace('</main>', `</main><nav class="pages">${links}</nav>`);
}

/**
 * Serves a bench site on the port of its first argument (0: any), kept-alive connections held
 * long, printing `listening <port>` once ready; SIGTERM closes it.
 */
export function listenSite(server: Server): void {
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
    console.log(`listening ${(server.address() as AddressInfo).port}`);
  });
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

if (import.meta.main) {
  const crawlPages = Number(process.env.CRAWL_PAGES ?? 20_000);
  const cache = new Map<string, Buffer>();
  let pages = 0;
  let notFound = 0;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/__stats') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ pages, not_found: notFound }));
      return;
    }
    const crawl = path.match(/^\/c\/(\d+)$/);
    if (crawl && Number(crawl[1]) < crawlPages) {
      const body = Buffer.from(crawlPage(Number(crawl[1]), crawlPages));
      pages++;
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': body.length });
      res.end(body);
      return;
    }
    const m = path.match(/^\/p\/([A-Za-z0-9_-]+)\/(\d+)$/);
    if (!m) {
      notFound++;
      res.statusCode = 404;
      res.end('not found');
      return;
    }
    let body = cache.get(path);
    if (!body) {
      body = Buffer.from(catalogPage(m[1]!, Number(m[2])));
      cache.set(path, body);
    }
    pages++;
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': body.length });
    res.end(body);
  });
  listenSite(server);
}
