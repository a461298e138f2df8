/**
 * The site of the rendering benches (bench/render.ts, bench/render-crawlee.ts and
 * bench/render-vs-crawlee.ts): ~80 KB catalogue pages of 400 items with a style sheet, a deferred
 * script and a timer that adds an item just after the page's own script runs, and, one page in
 * `jsEvery`, an application shell whose items are built by script from inline state. The check of
 * a rendered page is the same for every renderer measured.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { productItems } from './support.ts';

export const ITEMS = 400;

/** Whether page n is an application shell, built by script, when one page in `jsEvery` is (0: none). */
export const isScripted = (jsEvery: number, n: number) => jsEvery > 0 && n % jsEvery === 0;

/** A catalogue page: its 400 items in the HTML, one more added by a timer. */
export function page(n: number): string {
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
export function shell(n: number): string {
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

/** Page n's number from its path `/page/<n>`. */
export const pageNumber = (url: string) => Number(url.split('/').pop()) || 0;

/** Serves the site on loopback; its pages are `<origin>/page/<n>`. */
export async function startRenderSite(jsEvery: number): Promise<{ origin: string; close(): void }> {
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/site.css') return void res.writeHead(200, { 'content-type': 'text/css' }).end(CSS);
    if (url === '/site.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(JS);
    if (url === '/favicon.ico') return void res.writeHead(404).end();
    const n = pageNumber(url);
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(isScripted(jsEvery, n) ? shell(n) : page(n));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  };
}

// Scripts mark every other item `product odd`; the shell's own code spells the class in two parts.
export const products = (html: string) => html.split('<li class="product').length - 1;

/** What is wrong with page n's rendered HTML, or null: its 400 items and the item its timer adds. */
export function renderedPageError(html: string, n: number): string | null {
  if (!html.includes(`<li>added ${n}</li>`)) return `page ${n} lacks its script-made item`;
  if (products(html) !== ITEMS) return `page ${n} lacks its items`;
  return null;
}
