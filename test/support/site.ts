import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SiteHit {
  path: string;
  at: number;
}

/** A page with `n` list items, the shape the tests extract from. */
export const listPage = (title: string, items: number, pad = 0) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><ul>${Array.from(
    { length: items },
    (_, i) => `<li class="item"><a href="/item/${i}">Item ${i}</a> <span class="price">${i * 10}</span></li>`,
  ).join('')}</ul>${pad ? `<!-- ${'x'.repeat(pad)} -->` : ''}</body></html>`;

/**
 * A local target site: `/page/<n>` lists items, `/slow/<n>?ms=` answers late, `/status/<code>`,
 * `/big` streams 11 MiB, `/redirect?to=`; everything else is 404. Every request is recorded.
 */
export async function startSite(handler?: (req: IncomingMessage, res: ServerResponse) => boolean) {
  const hits: SiteHit[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    hits.push({ path: url.pathname, at: Date.now() });
    if (handler?.(req, res)) return;
    const page = url.pathname.match(/^\/page\/(\d+)$/);
    const slow = url.pathname.match(/^\/slow\/(\d+)$/);
    const status = url.pathname.match(/^\/status\/(\d{3})$/);
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    if (page) res.end(listPage(`Page ${page[1]}`, 3));
    else if (slow)
      setTimeout(() => res.end(listPage(`Slow ${slow[1]}`, 2)), Number(url.searchParams.get('ms') ?? 500));
    else if (status) {
      res.statusCode = Number(status[1]);
      res.end('status');
    } else if (url.pathname === '/big') {
      const chunk = Buffer.alloc(1024 * 1024, 'a');
      let sent = 0;
      const write = () => {
        while (sent < 11 && res.write(chunk)) sent++;
        if (sent >= 11) res.end();
        else
          res.once('drain', () => {
            sent++;
            write();
          });
      };
      write();
    } else if (url.pathname === '/redirect') {
      res.statusCode = 302;
      res.setHeader('Location', url.searchParams.get('to') ?? '/');
      res.end();
    } else {
      res.statusCode = 404;
      res.end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
