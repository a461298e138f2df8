import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  deadPort,
  type ForwardProxy,
  html,
  type LocalServer,
  listItems,
  startForwardProxy,
  startServer,
} from '../../../../test/support/render-servers.ts';
import { DEFAULT_CHROMIUM_PATH } from '../config.ts';
import { RenderError, Renderer } from './index.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;

// Adds <li> items to #list; every page below loads it.
const ADD = `function add(items) { for (const t of items) { const li = document.createElement('li'); li.textContent = t; document.getElementById('list').append(li); } }`;

const later = (ms: number, fn: () => void) => setTimeout(fn, ms);

function site(path: string, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): void {
  const ms = Number(query.get('ms') ?? 0);
  switch (path) {
    case '/dcl': // a deferred script runs before DOMContentLoaded; the image never lets "load" fire
      return void html(res, `<ul id="list"></ul><img src="/never.png"><script defer src="/dcl.js"></script>`);
    case '/dcl.js':
      res.writeHead(200, { 'content-type': 'text/javascript' });
      return void res.end(`${ADD}\nadd(['dcl one', 'dcl two']);`);
    case '/load': // items come from a timer that fires while the slow image holds "load"
      return void html(
        res,
        `<ul id="list"></ul><img src="/slow.png?ms=400"><script>${ADD}\nsetTimeout(() => add(['load one', 'load two']), 50);</script>`,
      );
    case '/idle': // items arrive only after three delayed fetches, started after "load"
      return void html(
        res,
        `<ul id="list"></ul><script>${ADD}
        addEventListener('load', () => setTimeout(async () => {
          const parts = await Promise.all([1, 2, 3].map((i) => fetch('/data?ms=400&i=' + i).then((r) => r.json())));
          add(parts.map((p) => p.item));
        }, 100));</script>`,
      );
    case '/data':
      return void later(ms, () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ item: `fetched ${query.get('i')}` }));
      });
    case '/slow.png':
      return void later(ms, () => {
        res.writeHead(200, { 'content-type': 'image/gif' });
        res.end(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'));
      });
    case '/hang': // a script that never arrives: "load" never fires
      return void html(res, `<ul id="list"><li>hanging</li></ul><script src="/never.js"></script>`);
    case '/never.png':
    case '/never.js':
      return; // held until the server closes
    case '/after-load': // items added 100 ms after the load event
      return void html(
        res,
        `<ul id="list"></ul><script>${ADD}\naddEventListener('load', () => setTimeout(() => add(['late one', 'late two']), 100));</script>`,
      );
    case '/heavy': // a page with an image, a font, a style sheet and a script that adds an item
      return void html(
        res,
        `<link rel="stylesheet" href="/style.css"><style>@font-face { font-family: f; src: url(/font.woff2); } li { font-family: f; }</style>
        <ul id="list"></ul><img src="/pic.png"><script src="/heavy.js"></script>`,
      );
    case '/heavy.js':
      res.writeHead(200, { 'content-type': 'text/javascript' });
      return void res.end(`${ADD}\nadd(['scripted']);`);
    case '/style.css':
      res.writeHead(200, { 'content-type': 'text/css' });
      return void res.end('body { color: black; }');
    case '/pic.png':
    case '/font.woff2':
      res.writeHead(200, { 'content-type': 'image/gif' });
      return void res.end(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'));
    case '/late-script': // at load, a script element whose file arrives 150 ms later adds the items
      return void html(
        res,
        `<ul id="list"></ul><script>${ADD}\naddEventListener('load', () => { const s = document.createElement('script'); s.src = '/late.js?ms=150'; document.body.append(s); });</script>`,
      );
    case '/late.js':
      return void later(ms, () => {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end(`add(['script one', 'script two']);`);
      });
    case '/slow-body': // the fetch answers at once, its body 150 ms later
      return void html(
        res,
        `<ul id="list"></ul><script>${ADD}\naddEventListener('load', async () => add((await (await fetch('/body?ms=150')).json()).items));</script>`,
      );
    case '/body':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"items": ["body one", ');
      return void later(ms, () => res.end('"body two"]}'));
    case '/timer-chain': // a timer that sets another: the items come 120 ms after the first fires
      return void html(
        res,
        `<ul id="list"></ul><script>${ADD}\naddEventListener('load', () => setTimeout(() => setTimeout(() => add(['chained']), 120), 0));</script>`,
      );
    case '/set-cookie':
      res.setHeader('set-cookie', `seen=${query.get('v')}; Path=/`);
      return void html(res, '<ul><li>set</li></ul>');
    case '/echo-cookie':
      return void html(res, `<ul><li>${req.headers.cookie ?? 'no cookie'}</li></ul>`);
    case '/redirect':
      res.writeHead(302, { location: '/load' });
      return void res.end();
    case '/hops': {
      // /hops?n=3 redirects three times, then lands on /load
      const n = Number(query.get('n') ?? 0);
      res.writeHead(302, { location: n > 1 ? `/hops?n=${n - 1}` : '/load' });
      return void res.end();
    }
    default:
      return void html(res, 'not found', 404);
  }
}

let server: LocalServer;
let renderer: Renderer;

beforeAll(async () => {
  server = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    site(url.pathname, url.searchParams, req, res);
  });
  renderer = await Renderer.start({ concurrency: 2, executablePath: CHROMIUM, allowPrivate: true });
});

afterAll(async () => {
  await renderer?.close();
  await server?.close();
});

const render = (
  path: string,
  waitStrategy: 'load' | 'domcontentloaded' | 'networkidle0' | 'networkidle2',
  more = {},
) => renderer.render({ url: `${server.origin}${path}`, waitStrategy, waitTimeoutMs: 10_000, ...more });

describe('wait strategies', () => {
  test('domcontentloaded returns script-made items on a page whose load event never fires', async () => {
    const page = await render('/dcl', 'domcontentloaded');
    expect(listItems(page.html)).toEqual(['dcl one', 'dcl two']);
    expect(page.status).toBe(200);
  });

  test('load returns items that a timer added before the load event', async () => {
    const page = await render('/load', 'load');
    expect(listItems(page.html)).toEqual(['load one', 'load two']);
    expect(page.url).toBe(`${server.origin}/load`);
  });

  test('networkidle0 returns items that arrive only after delayed fetches', async () => {
    const page = await render('/idle', 'networkidle0');
    expect(listItems(page.html)).toEqual(['fetched 1', 'fetched 2', 'fetched 3']);
  });

  test('networkidle2 returns items that arrive only after three parallel delayed fetches', async () => {
    const page = await render('/idle', 'networkidle2');
    expect(listItems(page.html)).toEqual(['fetched 1', 'fetched 2', 'fetched 3']);
  });

  test('content a script adds 100 ms after load is kept: the DOM is read once it has settled', async () => {
    const page = await render('/after-load', 'load');
    expect(listItems(page.html)).toEqual(['late one', 'late two']);
  });

  test('the same page rendered with "load" lacks the fetched items (the idle tests are meaningful)', async () => {
    const page = await render('/idle', 'load');
    expect(listItems(page.html)).toEqual([]);
  });

  test('redirects are followed and the final URL is reported', async () => {
    const page = await render('/redirect', 'load');
    expect(page.url).toBe(`${server.origin}/load`);
    expect(page.status).toBe(200);
    expect(listItems(page.html)).toEqual(['load one', 'load two']);
  });
});

describe('the settled DOM and kept pages', () => {
  test('a script element added at load, its file arriving 150 ms later, adds its items before the DOM is read', async () => {
    const page = await render('/late-script', 'load');
    expect(listItems(page.html)).toEqual(['script one', 'script two']);
  });

  test('items built from a fetch whose body arrives 150 ms after its headers are kept', async () => {
    const page = await render('/slow-body', 'load');
    expect(listItems(page.html)).toEqual(['body one', 'body two']);
  });

  test('a timer that sets another is waited for', async () => {
    const page = await render('/timer-chain', 'load');
    expect(listItems(page.html)).toEqual(['chained']);
  });

  test('renders of one isolation key share their context; another key and no key get a context of their own', async () => {
    const cookie = (path: string, isolationKey?: string) =>
      render(path, 'load', isolationKey ? { isolationKey } : {}).then((p) => listItems(p.html));
    expect(await cookie('/set-cookie?v=a', 'job-a')).toEqual(['set']);
    expect(await cookie('/echo-cookie', 'job-a')).toEqual(['seen=a']);
    expect(await cookie('/echo-cookie', 'job-b')).toEqual(['no cookie']);
    expect(await cookie('/echo-cookie', 'job-a')).toEqual(['seen=a']);
    expect(await cookie('/echo-cookie')).toEqual(['no cookie']);
    // The same job with other settings (here a user agent) does not share the context either.
    const otherAgent = await render('/echo-cookie', 'load', { isolationKey: 'job-a', userAgent: 'other' });
    expect(listItems(otherAgent.html)).toEqual(['no cookie']);
  });
});

describe('resources', () => {
  const requested = (before: number) => new Set(server.requests.slice(before));

  test('images, fonts and media are not downloaded unless a screenshot is asked; scripts and style sheets are', async () => {
    const before = server.requests.length;
    const page = await render('/heavy', 'load');
    expect(listItems(page.html)).toEqual(['scripted']);
    const seen = requested(before);
    expect(seen).toEqual(new Set(['GET /heavy', 'GET /heavy.js', 'GET /style.css']));
  });

  test('a screenshot downloads the images the page shows', async () => {
    const before = server.requests.length;
    const page = await render('/heavy', 'load', { screenshot: true });
    expect(page.screenshot).not.toBeNull();
    expect([...requested(before)]).toEqual(expect.arrayContaining(['GET /pic.png', 'GET /style.css']));
  });

  test('blockResources refuses style sheets too, and still runs the scripts', async () => {
    const before = server.requests.length;
    const page = await render('/heavy', 'load', { blockResources: true });
    expect(listItems(page.html)).toEqual(['scripted']);
    expect(requested(before)).toEqual(new Set(['GET /heavy', 'GET /heavy.js']));
  });
});

describe('limits', () => {
  test('five redirects are followed; a sixth fails with a RENDER_ERROR that no retry fixes', async () => {
    const five = await render('/hops?n=5', 'load');
    expect(five.url).toBe(`${server.origin}/load`);
    const failure = await render('/hops?n=6', 'load').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RenderError);
    expect(failure).toMatchObject({ code: 'RENDER_ERROR', retryable: false });
  });

  test('waitTimeoutMs 0 sets no limit of its own: the page still renders', async () => {
    const page = await render('/load', 'load', { waitTimeoutMs: 0 });
    expect(listItems(page.html)).toEqual(['load one', 'load two']);
  });
});

describe('timeouts and aborts', () => {
  test('a page that misses its wait timeout fails with TIMEOUT', async () => {
    const started = Date.now();
    const failure = await render('/hang', 'load', { waitTimeoutMs: 500 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RenderError);
    expect((failure as RenderError).code).toBe('TIMEOUT');
    expect((failure as RenderError).retryable).toBe(true);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  test('an abort rejects the render within a second and frees the page', async () => {
    const controller = new AbortController();
    const pending = render('/hang', 'load', { waitTimeoutMs: 30_000, signal: controller.signal });
    await new Promise((r) => setTimeout(r, 500));
    expect(renderer.stats().busy).toBe(1);
    const abortedAt = Date.now();
    controller.abort(new Error('cancelled by test'));
    await expect(pending).rejects.toThrow('cancelled by test');
    expect(Date.now() - abortedAt).toBeLessThan(1_000);
    const deadline = Date.now() + 2_000;
    while (renderer.stats().busy > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(renderer.stats()).toEqual({ busy: 0, concurrency: 2, restarts: 0 });
    const next = await render('/load', 'load');
    expect(listItems(next.html)).toEqual(['load one', 'load two']);
  });

  test('an already aborted signal rejects without rendering', async () => {
    const before = server.requests.length;
    await expect(render('/load', 'load', { signal: AbortSignal.abort() })).rejects.toThrow();
    expect(server.requests.length).toBe(before);
  });
});

describe('upstream proxies', () => {
  let upstream: ForwardProxy;
  beforeAll(async () => {
    upstream = await startForwardProxy();
  });
  afterAll(async () => {
    await upstream?.close();
  });

  test('a render with proxyUrl sends the page and its subresources through that proxy', async () => {
    const before = server.requests.length;
    const page = await render('/heavy', 'load', { proxyUrl: upstream.origin });
    expect(listItems(page.html)).toEqual(['scripted']);
    // The tunnels name the checked address, as the fetch path does (see proxy.ts).
    expect(upstream.requests.length).toBeGreaterThan(0);
    expect(new Set(upstream.requests)).toEqual(new Set([`CONNECT 127.0.0.1:${server.port}`]));
    expect(server.requests.slice(before)).toEqual(expect.arrayContaining(['GET /heavy', 'GET /heavy.js']));
  });

  test('credentials in proxyUrl reach the proxy as Proxy-Authorization', async () => {
    const before = upstream.authorizations.length;
    await render('/dcl', 'domcontentloaded', {
      proxyUrl: `http://scraper:p%40ss@127.0.0.1:${upstream.port}`,
    });
    const sent = upstream.authorizations.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    expect(new Set(sent)).toEqual(new Set([`Basic ${Buffer.from('scraper:p@ss').toString('base64')}`]));
  });

  test('a render without proxyUrl does not touch the proxy', async () => {
    const before = upstream.requests.length;
    const page = await render('/load', 'load');
    expect(listItems(page.html)).toEqual(['load one', 'load two']);
    expect(upstream.requests.length).toBe(before);
  });

  test('an unreachable proxy fails the render with PROXY_ERROR', async () => {
    const port = await deadPort();
    const failure = await render('/load', 'load', { proxyUrl: `http://127.0.0.1:${port}` }).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(RenderError);
    expect((failure as RenderError).code).toBe('PROXY_ERROR');
  });

  test('a malformed proxy URL is a PROXY_ERROR that no retry fixes', async () => {
    const failure = await render('/load', 'load', { proxyUrl: 'socks9://nowhere' }).catch((e: unknown) => e);
    expect((failure as RenderError).code).toBe('PROXY_ERROR');
    expect((failure as RenderError).retryable).toBe(false);
  });
});
