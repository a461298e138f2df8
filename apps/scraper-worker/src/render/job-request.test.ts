// The job's headers, cookies and credentials sent from Chromium: two local origins (two ports on
// 127.0.0.1), the target and another one, each recording what every request carried.

import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { html, type LocalServer, listItems, startServer } from '../../../../test/support/render-servers.ts';
import { DEFAULT_CHROMIUM_PATH } from '../config.ts';
import type { OutgoingRequest } from '../request/outgoing.ts';
import { RenderError, Renderer, type RenderRequest } from './index.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
}

const ADD = `function add(t) { const li = document.createElement('li'); li.textContent = t; document.getElementById('list').append(li); }`;
const GIF = Buffer.from('R0lGODlhAQABAAAAACw=', 'base64');

let target: LocalServer;
let other: LocalServer;
let renderer: Renderer;
const seenAt = { target: [] as Seen[], other: [] as Seen[] };

function recorder(into: Seen[], site: (path: string, res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    into.push({ path, headers: req.headers });
    site(path.split('?')[0] ?? '/', res);
  };
}

function gif(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'image/gif', 'cache-control': 'no-store' });
  res.end(GIF);
}

beforeAll(async () => {
  other = await startServer(
    recorder(seenAt.other, (path, res) => {
      switch (path) {
        case '/landing': // after the redirect: a script back on the target's origin
          return void html(
            res,
            `<p>landed</p><script src="${target.origin}/pixel.gif?from=landing"></script>`,
          );
        case '/pixel.gif':
          return void gif(res);
        default:
          res.writeHead(200, { 'content-type': 'text/plain' });
          return void res.end('other');
      }
    }),
  );
  target = await startServer(
    recorder(seenAt.target, (path, res) => {
      switch (path) {
        case '/page':
          return void html(
            res,
            `<ul id="list"></ul>
            <script src="/pixel.gif?from=page"></script>
            <script src="${other.origin}/pixel.gif?from=page"></script>
            <script>${ADD}
              fetch('/api?from=page').then((r) => r.text()).then(add);
              fetch('${other.origin}/api?from=page').catch(() => {});
            </script>`,
          );
        case '/to-other':
          res.writeHead(302, { location: `${other.origin}/landing` });
          return void res.end();
        case '/to-page':
          res.writeHead(302, { location: '/page' });
          return void res.end();
        case '/rotate': // the site sets cookies of its own, one named like the job's
          res.writeHead(200, {
            'content-type': 'text/html',
            'set-cookie': ['sid=rotated; Path=/', 'site=own; Path=/'],
          });
          return void res.end(`<ul id="list"></ul><script>${ADD}
            fetch('/api?from=rotate').then((r) => r.text()).then(add);</script>`);
        case '/worker': // a dedicated worker's fetch is a request of the page too
          return void html(
            res,
            `<ul id="list"></ul><script>${ADD}
              const worker = new Worker('/worker.js');
              worker.onmessage = (e) => add(e.data);</script>`,
          );
        case '/worker.js':
          res.writeHead(200, { 'content-type': 'text/javascript' });
          return void res.end(`fetch('/api?from=worker').then((r) => r.text()).then((t) => postMessage(t));`);
        case '/guarded': // refuses every credential with a challenge, as a wrong password would get
          res.writeHead(401, { 'content-type': 'text/html', 'www-authenticate': 'Basic realm="shop"' });
          return void res.end('<p>who are you</p>');
        case '/api':
          res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
          return void res.end('api answered');
        case '/pixel.gif':
          return void gif(res);
        default:
          return void html(res, 'not found', 404);
      }
    }),
  );
  renderer = await Renderer.start({ concurrency: 2, executablePath: CHROMIUM, allowPrivate: true });
});

afterAll(async () => {
  await renderer?.close();
  await Promise.all([target?.close(), other?.close()]);
});

const jobRequest = (): OutgoingRequest => ({
  headers: { 'X-Api-Key': 'key-123', 'accept-LANGUAGE': 'fr-CH' },
  cookies: [{ name: 'sid', value: 'cookie-456', domain: '127.0.0.1', hostOnly: true, path: '/' }],
  basicAuth: { username: 'user', password: 'p@ss:word' },
  authOrigins: [target.origin],
  userAgent: 'JobAgent/2.0',
});
const BASIC = `Basic ${Buffer.from('user:p@ss:word').toString('base64')}`;

/** Renders `path` on the target with the job's request and returns what each server saw meanwhile. */
async function renderWithJob(
  path: string,
  over: Partial<OutgoingRequest> = {},
  userAgent?: string,
  actions?: RenderRequest['actions'],
) {
  const before = { target: seenAt.target.length, other: seenAt.other.length };
  const page = await renderer.render({
    url: `${target.origin}${path}`,
    waitStrategy: 'networkidle0',
    waitTimeoutMs: 10_000,
    request: { ...jobRequest(), ...over },
    ...(userAgent ? { userAgent } : {}),
    ...(actions ? { actions } : {}),
  });
  const at = (server: 'target' | 'other', requestPath: string) => {
    const hit = seenAt[server].slice(before[server]).find((s) => s.path === requestPath);
    if (!hit) throw new Error(`${server} never saw ${requestPath}`);
    return hit.headers;
  };
  return { page, at };
}

function expectJobSent(headers: IncomingHttpHeaders): void {
  expect(headers['x-api-key']).toBe('key-123');
  // Replaces Chromium's own Accept-Language rather than adding a second one.
  expect(headers['accept-language']).toBe('fr-CH');
  expect(headers.cookie).toBe('sid=cookie-456');
  expect(headers.authorization).toBe(BASIC);
}

function expectNothingSent(headers: IncomingHttpHeaders): void {
  expect(headers['x-api-key']).toBeUndefined();
  expect(headers['accept-language']).not.toBe('fr-CH');
  expect(headers.cookie ?? '').not.toContain('cookie-456');
  expect(headers.authorization).toBeUndefined();
}

describe('on the origin asked for', () => {
  test('the main document gets every header, the cookie and the basic-auth credential', async () => {
    const { page, at } = await renderWithJob('/page');
    expect(page.status).toBe(200);
    expectJobSent(at('target', '/page'));
  });

  test('a same-origin script and a same-origin fetch() get them too', async () => {
    const { page, at } = await renderWithJob('/page');
    expect(listItems(page.html)).toEqual(['api answered']);
    expectJobSent(at('target', '/pixel.gif?from=page'));
    expectJobSent(at('target', '/api?from=page'));
  });

  test("a dedicated worker's fetch gets them too, and does not hold the page", async () => {
    // A worker's requests are not the page's network: its answer is waited for, not the idle network.
    const { page, at } = await renderWithJob('/worker', {}, undefined, [
      { type: 'wait_for', selector: 'li', timeout_ms: 10_000 },
    ]);
    expect(listItems(page.html)).toEqual(['api answered']);
    expectJobSent(at('target', '/api?from=worker'));
  });

  test('a redirect within the origin keeps them', async () => {
    const { page, at } = await renderWithJob('/to-page');
    expect(page.url).toBe(`${target.origin}/page`);
    expectJobSent(at('target', '/to-page'));
    expectJobSent(at('target', '/page'));
  });

  test("cookies the site sets join the job's, and the site's value wins for the same name", async () => {
    const { page, at } = await renderWithJob('/rotate');
    expect(listItems(page.html)).toEqual(['api answered']);
    expect(at('target', '/rotate').cookie).toBe('sid=cookie-456');
    const after = at('target', '/api?from=rotate');
    expect(new Set(after.cookie?.split('; '))).toEqual(new Set(['sid=rotated', 'site=own']));
    expect(after['x-api-key']).toBe('key-123');
  });
});

describe('elsewhere', () => {
  test('a cross-origin script and fetch() on the page get nothing of the job', async () => {
    const { at } = await renderWithJob('/page');
    expectNothingSent(at('other', '/pixel.gif?from=page'));
    expectNothingSent(at('other', '/api?from=page'));
  });

  test('after a redirect to another origin nothing is sent there, nor back to the origin asked for', async () => {
    const { page, at } = await renderWithJob('/to-other');
    expect(page.url).toBe(`${other.origin}/landing`);
    expectJobSent(at('target', '/to-other'));
    expectNothingSent(at('other', '/landing'));
    expectNothingSent(at('target', '/pixel.gif?from=landing'));
  });

  test('credentials the site refuses fail the render with a RENDER_ERROR that no retry fixes', async () => {
    const before = seenAt.target.length;
    const failure = await renderer
      .render({
        url: `${target.origin}/guarded`,
        waitStrategy: 'load',
        waitTimeoutMs: 5_000,
        request: jobRequest(),
      })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RenderError);
    expect(failure).toMatchObject({ code: 'RENDER_ERROR', retryable: false });
    expect((failure as Error).message).toContain('HTTP 401');
    expect(seenAt.target.slice(before).map((s) => s.headers.authorization)).toContain(BASIC);
  });

  test('basic auth goes only to the source origins', async () => {
    const { at } = await renderWithJob('/page', { authOrigins: ['http://somewhere.else'] });
    const headers = at('target', '/page');
    expect(headers.authorization).toBeUndefined();
    expect(headers['x-api-key']).toBe('key-123');
  });
});

describe('user agent', () => {
  test("the job's user agent replaces the renderer's on the document and its subresources", async () => {
    const { at } = await renderWithJob('/page', {}, 'Fallback/1.0');
    expect(at('target', '/page')['user-agent']).toBe('JobAgent/2.0');
    expect(at('target', '/pixel.gif?from=page')['user-agent']).toBe('JobAgent/2.0');
  });

  test("without a job user agent the renderer's is used", async () => {
    const { at } = await renderWithJob('/page', { userAgent: null }, 'Fallback/1.0');
    expect(at('target', '/page')['user-agent']).toBe('Fallback/1.0');
  });
});
