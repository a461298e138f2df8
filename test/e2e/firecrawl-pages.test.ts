import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Firecrawl, { SdkError } from '@mendable/firecrawl-js';
import request from 'supertest';
import { buildTestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { refusingUrl } from '../support/fetch-servers.ts';
import { startHttpsSite } from '../support/https-site.ts';
import { jpegSize, pngSize } from '../support/images.ts';
import { type Proc, scraperWorkerEnv, startApp } from '../support/processes.ts';
import { testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

// The Firecrawl-compatible API's answers about pages (docs/api.md §26), driven by Firecrawl's own
// JavaScript SDK against the real API and a real scraper worker: pages that cannot be fetched,
// certificates, actions' results, the images and attributes formats, and the cache of maxAge.

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let server: Server;
let base: string;
let worker: Proc;
let site: Awaited<ReturnType<typeof startSite>>;
let secure: Awaited<ReturnType<typeof startHttpsSite>>;
let token: string;
let sdk: Firecrawl;
const prefix = testPrefix();
/** The Authorization header of each request for /private, in order. */
const authorizations: (string | undefined)[] = [];

const ARTICLE = `<!doctype html><html lang="en"><head><title>Article</title></head><body>
<main><h1>Article</h1><p>A page about <a class="ref" href="/a" data-id="1">one</a> and
<a class="ref" href="/b" data-id="2">two</a>.</p><img src="/img/one.png" alt="One">
<img src="https://cdn.test/two.jpg"><img src="/img/one.png"></main></body></html>`;

beforeAll(async () => {
  tdb = await createTestDatabase();
  server = createServer((req, res) => api.app(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix, publicBaseUrl: base });
  const key = await api.keys.create({
    email: 'pages@example.com',
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write'],
    name: 'k',
  });
  token = key.token;
  sdk = new Firecrawl({ apiKey: token, apiUrl: base });
  site = await startSite((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    if (path === '/private') authorizations.push(req.headers.authorization);
    if (path !== '/article' && path !== '/private') return false;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(ARTICLE);
    return true;
  });
  secure = await startHttpsSite((_req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end('<!doctype html><html><head><title>Secure</title></head><body><h1>Behind TLS</h1></body></html>');
  });
  worker = startApp('scraper-worker', scraperWorkerEnv(tdb.url, prefix.prefix));
  await worker.waitForLog((l) => l.msg === 'scraper worker started');
});

afterAll(async () => {
  await worker.kill('SIGTERM');
  await new Promise((resolve) => server.close(resolve));
  await api.close();
  await site.close();
  await secure.close();
  await tdb.drop();
  await prefix.cleanup();
});

const post = (path: string, body: object) =>
  request(base).post(path).set('Authorization', `Bearer ${token}`).send(body);

describe('pages that cannot be fetched', () => {
  it('answers a bad certificate with 500 SCRAPE_SSL_ERROR, and the page with skipTlsVerification', async () => {
    const res = await post('/v2/scrape', { url: `${secure.url}/`, formats: ['markdown'] });
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({
      success: false,
      code: 'SCRAPE_SSL_ERROR',
      error: expect.stringContaining('certificate'),
    });
    const thrown = await sdk.scrape(`${secure.url}/`).catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(SdkError);
    expect(thrown).toMatchObject({ status: 500, code: 'SCRAPE_SSL_ERROR' });
    const doc = await sdk.scrape(`${secure.url}/`, { formats: ['markdown'], skipTlsVerification: true });
    expect(doc.markdown).toBe('# Behind TLS');
    expect(doc.metadata).toMatchObject({ statusCode: 200, title: 'Secure' });
  });

  it('renders a page with a bad certificate only with skipTlsVerification', async () => {
    const refused = await post('/v2/scrape', { url: `${secure.url}/`, formats: ['screenshot'] });
    expect(refused.status).toBe(500);
    expect(refused.body.code).toBe('SCRAPE_SSL_ERROR');
    const doc = await sdk.scrape(`${secure.url}/`, {
      formats: ['markdown', 'screenshot'],
      skipTlsVerification: true,
    });
    expect(doc.markdown).toBe('# Behind TLS');
    expect(doc.screenshot).toMatch(/\/screenshots\/\d+$/);
    // The render that accepted the certificate did not teach the browser to accept it for others.
    const again = await post('/v2/scrape', { url: `${secure.url}/`, formats: ['screenshot'] });
    expect(again.body.code).toBe('SCRAPE_SSL_ERROR');
  });

  it('answers a refused connection with 500 SCRAPE_SITE_ERROR, and a 404 as a success with its status', async () => {
    const res = await post('/v2/scrape', { url: `${await refusingUrl()}/`, formats: ['markdown'] });
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({
      success: false,
      code: 'SCRAPE_SITE_ERROR',
      error: expect.stringContaining('ECONNREFUSED'),
    });
    const missing = await post('/v2/scrape', { url: `${site.url}/missing`, formats: ['markdown'] });
    expect(missing.status).toBe(200);
    expect(missing.body).toMatchObject({ success: true, data: { metadata: { statusCode: 404 } } });
  });
});

describe('actions, images and attributes', () => {
  it('gives screenshot, scrape and executeJavascript results without leaking rawHtml', async () => {
    const doc = await sdk.scrape(`${site.url}/article`, {
      formats: ['markdown'],
      maxAge: 0,
      actions: [
        { type: 'executeJavascript', script: "document.querySelectorAll('a.ref').length" },
        { type: 'executeJavascript', script: 'return document.title' },
        { type: 'screenshot' },
        { type: 'scrape' },
      ],
    });
    expect(doc.rawHtml).toBeUndefined();
    expect(doc.actions).toEqual({
      screenshots: [expect.stringMatching(/\/screenshots\/\d+$/)],
      scrapes: [{ url: `${site.url}/article`, html: expect.stringContaining('<h1>Article</h1>') }],
      javascriptReturns: [
        { type: 'number', value: 2 },
        { type: 'string', value: 'Article' },
      ],
      pdfs: [],
    });
  });

  it('takes the screenshot at the viewport asked for, a JPEG of its quality, in Chromium', async () => {
    const image = async (url: string | undefined) => {
      const res = await request(url!).get('').set('Authorization', `Bearer ${token}`).buffer(true);
      expect(res.status).toBe(200);
      return { type: res.headers['content-type'], body: res.body as Buffer };
    };
    const viewport = { width: 1024, height: 640 };
    const jpeg = await sdk.scrape(`${site.url}/article`, {
      formats: [{ type: 'screenshot', viewport, quality: 70 }],
      maxAge: 0,
    });
    expect(jpeg.warning).toBeUndefined();
    const shot = await image(jpeg.screenshot);
    expect([shot.type, jpegSize(shot.body)]).toEqual(['image/jpeg', viewport]);
    // A screenshot action's viewport, the whole page at that width.
    const png = await sdk.scrape(`${site.url}/article`, {
      formats: ['markdown'],
      maxAge: 0,
      actions: [{ type: 'screenshot', fullPage: true, viewport: { width: 480, height: 300 } }],
    });
    const action = await image((png.actions as { screenshots?: string[] } | undefined)?.screenshots?.[0]);
    expect(action.type).toBe('image/png');
    expect(pngSize(action.body).width).toBe(480);
    expect(pngSize(action.body).height).toBeGreaterThanOrEqual(300);
    const refused = await post('/v2/scrape', {
      url: `${site.url}/article`,
      formats: [{ type: 'screenshot', viewport: { width: 5000, height: 640 }, quality: 0 }],
    });
    expect([refused.status, refused.body.details]).toEqual([
      400,
      { 'formats[0].viewport.width': 'must be at most 3840', 'formats[0].quality': 'must be at least 1' },
    ]);
  });

  it('lists the images and the attributes asked for', async () => {
    const doc = await sdk.scrape(`${site.url}/article`, {
      formats: ['images', { type: 'attributes', selectors: [{ selector: 'a.ref', attribute: 'data-id' }] }],
    });
    expect(doc.images).toEqual([`${site.url}/img/one.png`, 'https://cdn.test/two.jpg']);
    expect(doc.attributes).toEqual([{ selector: 'a.ref', attribute: 'data-id', values: ['1', '2'] }]);
    expect(doc.rawHtml).toBeUndefined();
  });
});

describe('an Authorization header of any scheme', () => {
  const SECRET = 'Bearer tok-e2e-9f3c';

  it('is sent to the page’s origin, fetched or rendered, never across a redirect, never shown or logged', async () => {
    const other = await startSite((req, res) => {
      authorizations.push(`other: ${req.headers.authorization ?? 'none'}`);
      res.setHeader('Content-Type', 'text/html');
      res.end('<!doctype html><html><head><title>Other</title></head><body><h1>Other</h1></body></html>');
      return true;
    });
    try {
      const headers = { Authorization: SECRET };
      const fetched = await sdk.scrape(`${site.url}/private`, { headers, maxAge: 0 });
      expect(fetched.metadata?.statusCode).toBe(200);
      // waitFor renders the page: Chromium sends it too.
      await sdk.scrape(`${site.url}/private`, { headers, maxAge: 0, waitFor: 50 });
      const moved = await sdk.scrape(
        `${site.url}/redirect?to=${encodeURIComponent(`${other.url}/landing`)}`,
        {
          headers,
          maxAge: 0,
        },
      );
      expect(moved.metadata?.title).toBe('Other');
      expect(authorizations).toEqual([SECRET, SECRET, 'other: none']);

      // The native job behind the scrape shows it masked and stores it sealed.
      const runId = fetched.metadata?.scrapeId as string;
      const { jobId } = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
      const detail = await request(base).get(`/jobs/${jobId}`).set('Authorization', `Bearer ${token}`);
      expect(detail.body.request).toMatchObject({ authorization: '********', basic_auth: null });
      const row = await tdb.db.job.findUniqueOrThrow({ where: { id: jobId } });
      for (const text of [detail.text, JSON.stringify(row.request), JSON.stringify(row.firecrawl)])
        expect(text).not.toContain('tok-e2e-9f3c');
      expect(JSON.stringify(worker.logs)).not.toContain('tok-e2e-9f3c');
    } finally {
      await other.close();
    }
  });
});

describe('maxAge and storeInCache', () => {
  const hits = (path: string) => site.hits.filter((hit) => hit.path === path).length;

  it('answers a second scrape of the same URL and options from the stored page, within maxAge', async () => {
    const url = `${site.url}/page/41`;
    const first = await sdk.scrape(url, { formats: ['markdown'] });
    expect(hits('/page/41')).toBe(1);
    const second = await sdk.scrape(url, { formats: ['markdown'] });
    expect(hits('/page/41')).toBe(1);
    expect(second.markdown).toBe(first.markdown);
    expect(second.metadata).toMatchObject({ cacheState: 'hit', cachedAt: expect.any(String) });
    // Other options are another page; maxAge 0 always fetches.
    await sdk.scrape(url, { formats: ['markdown', 'links'] });
    expect(hits('/page/41')).toBe(2);
    await sdk.scrape(url, { formats: ['markdown'], maxAge: 0 });
    expect(hits('/page/41')).toBe(3);
  });

  it('keeps a page out of the cache with storeInCache: false, and another account never sees it', async () => {
    const url = `${site.url}/page/42`;
    await sdk.scrape(url, { formats: ['markdown'], storeInCache: false });
    await sdk.scrape(url, { formats: ['markdown'] });
    expect(hits('/page/42')).toBe(2);
    const other = await api.keys.create({
      email: 'other-pages@example.com',
      mode: 'test',
      scopes: ['jobs:read', 'jobs:write'],
      name: 'k',
    });
    await new Firecrawl({ apiKey: other.token, apiUrl: base }).scrape(url, { formats: ['markdown'] });
    expect(hits('/page/42')).toBe(3);
  });
});
