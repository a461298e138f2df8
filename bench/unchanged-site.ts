/**
 * The target site of bench/unchanged.ts, in its own process. Its pages are bench/fleet-site.ts's
 * ~80 KB catalogue page with 400 list items, built once per path and served from memory:
 *
 *   - `GET /etag/<job>/<n>` sends a strong `ETag` (a SHA-256 of the body) and answers
 *     `304 Not Modified` (with the ETag, no body) to an `If-None-Match` that names it;
 *   - `GET /plain/<job>/<n>` sends no validators (no `ETag`, no `Last-Modified`) and always
 *     answers 200 with the page.
 *
 * Control paths, not counted: `POST /__change` with `{"paths": [...]}` changes those pages (the
 * prices of items 0 and 1 go up by 1.00, an item 400 is added: CHANGED_ITEMS, ADDED_ITEMS);
 * `POST /__reset` zeroes the counters; `GET /__stats` answers them: TCP connections accepted,
 * requests by status, requests that carried `If-None-Match`, and the HTTP bytes written for pages
 * (status line, headers and body, as the socket counted them) and of those the bodies. Everything
 * else is a 404, counted.
 *
 * Run: `node bench/unchanged-site.ts [port]`; prints `listening <port>` once ready.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { catalogPage, ITEMS_PER_PAGE, listenSite } from './fleet-site.ts';

/** The items whose price a change raises, and the items it adds (their link is the key). */
export const CHANGED_ITEMS = [0, 1];
export const ADDED_ITEMS = [ITEMS_PER_PAGE];

/** The `href` of item `i` on page `n` of `job`, as the catalogue page writes it. */
export const itemLink = (job: string, n: number, i: number) => `/p/${job}/${n}/item/${i}`;

/** The price of item `i` on page `n`, as the catalogue page writes it, and after a change. */
export const itemPrice = (i: number, n: number, changed = false) =>
  `$${((i * 137 + n * 7) / 100 + (changed ? 1 : 0)).toFixed(2)}`;

/** A page as first served, or after its change: CHANGED_ITEMS repriced and ADDED_ITEMS appended. */
export function benchPage(job: string, n: number, changed: boolean): string {
  if (!changed) return catalogPage(job, n);
  let page = catalogPage(job, n, ITEMS_PER_PAGE + ADDED_ITEMS.length);
  for (const i of CHANGED_ITEMS) {
    const anchor = `Product ${i} of page ${n}</a>\n  <span class="price">`;
    const next = page.replace(`${anchor}${itemPrice(i, n)}<`, `${anchor}${itemPrice(i, n, true)}<`);
    // The catalogue page's markup is what the change relies on: fail loudly when it moves.
    if (next === page) throw new Error(`item ${i} of ${job}/${n} was not found to change`);
    page = next;
  }
  return page;
}

interface Page {
  body: Buffer;
  etag: string;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** Whether an `If-None-Match` header names `etag` (a list, or `*`). */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header
    .split(',')
    .map((t) => t.trim())
    .some((t) => t === '*' || t === etag);
}

if (import.meta.main) {
  const cache = new Map<string, Page>();
  const changed = new Set<string>();
  const zero = () => ({
    connections: 0,
    requests: {} as Record<string, number>,
    conditional_requests: 0,
    bytes_sent: 0,
    body_bytes_sent: 0,
  });
  let stats = zero();

  const pageAt = (path: string, job: string, n: number): Page => {
    let page = cache.get(path);
    if (!page) {
      const body = Buffer.from(benchPage(job, n, changed.has(path)));
      page = { body, etag: `"${createHash('sha256').update(body).digest('base64url')}"` };
      cache.set(path, page);
    }
    return page;
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/__stats') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(stats));
      return;
    }
    if (path === '/__reset' && req.method === 'POST') {
      stats = zero();
      res.end('{}');
      return;
    }
    if (path === '/__change' && req.method === 'POST') {
      readJson(req).then(
        (body) => {
          const paths = (body as { paths: string[] }).paths;
          for (const p of paths) {
            changed.add(p);
            cache.delete(p);
          }
          res.setHeader('Content-Type', 'application/json');
          res.end(JSON.stringify({ changed: paths.length }));
        },
        (err: Error) => {
          res.statusCode = 400;
          res.end(err.message);
        },
      );
      return;
    }
    // Pages only from here: count what goes out on the socket for this answer.
    const socket = req.socket;
    const before = socket.bytesWritten;
    const count = (status: number, bodyBytes: number) => {
      stats.requests[status] = (stats.requests[status] ?? 0) + 1;
      stats.body_bytes_sent += bodyBytes;
      res.once('finish', () => {
        stats.bytes_sent += socket.bytesWritten - before;
      });
    };
    const m = path.match(/^\/(etag|plain)\/([A-Za-z0-9_-]+)\/(\d+)$/);
    if (!m || req.method !== 'GET') {
      count(404, 9);
      res.statusCode = 404;
      res.end('not found');
      return;
    }
    const page = pageAt(path, m[2]!, Number(m[3]));
    const ifNoneMatch = req.headers['if-none-match'];
    if (ifNoneMatch) stats.conditional_requests++;
    if (m[1] === 'etag') {
      res.setHeader('ETag', page.etag);
      if (matches(ifNoneMatch, page.etag)) {
        count(304, 0);
        res.writeHead(304).end();
        return;
      }
    }
    count(200, page.body.length);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': page.body.length });
    res.end(page.body);
  });
  server.on('connection', () => {
    stats.connections++;
  });
  listenSite(server);
}
