import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Firecrawl, { SdkError } from '@mendable/firecrawl-js';
import request from 'supertest';
import { buildTestApi } from '../support/api.ts';
import { client } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { REDIS_URL, testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

// The Firecrawl-compatible API (docs/api.md §18) driven by Firecrawl's own JavaScript SDK against
// the real API (listening on a port) and a real scraper worker, on a local documentation site.

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let server: Server;
let base: string;
let worker: Proc;
let site: Awaited<ReturnType<typeof startSite>>;
let token: string;
let otherToken: string;
let sdk: Firecrawl;
const prefix = testPrefix();
/** The secret key shared by the API and the webhook worker (they seal and open the Firecrawl webhook secret). */
const KEY = randomBytes(32);

/** Pages /docs/p/1…N linked from /docs/, each linking to the next; 131–135 only in the sitemap. */
const PAGES = 130;
const page = (n: number) => `<!doctype html><html lang="en"><head><title>Page ${n} | Docs</title>
<meta name="description" content="About topic ${n}."></head><body>
<nav><a href="/docs/">Docs home</a> <a href="/private/secret">Private</a></nav>
<main><h1>Topic ${n}</h1><p>This page explains topic ${n} in a few sentences, with enough words to be the
main content of the page, and a link to the <a href="/docs/p/${n + 1}">next topic</a>.</p></main></body></html>`;
const index = `<!doctype html><html><head><title>Docs</title></head><body><h1>Docs</h1><ul>${Array.from(
  { length: PAGES },
  (_, i) => `<li><a href="/docs/p/${i + 1}">Topic ${i + 1}</a></li>`,
).join('')}</ul><a href="/blog/news">Blog</a></body></html>`;

/** Three pages, one of which (/mixed/gone) answers 404. */
const mixed = `<!doctype html><html><head><title>Mixed</title></head><body><h1>Mixed</h1>
<a href="/mixed/a">A</a> <a href="/mixed/gone">Gone</a></body></html>`;

beforeAll(async () => {
  tdb = await createTestDatabase();
  server = createServer((req, res) => api.app(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Loopback webhook receivers need private targets allowed (docs/api.md §7).
  api = buildTestApi({
    db: tdb.db,
    prefix: prefix.prefix,
    publicBaseUrl: base,
    webhooks: { WEBHOOK_SECRET_KEY: KEY, ALLOW_PRIVATE_NETWORK_TARGETS: true },
  });
  const keys = ['crawler@example.com', 'other@example.com'].map((email) =>
    api.keys.create({ email, mode: 'test', scopes: ['jobs:read', 'jobs:write'], name: 'k' }),
  );
  [token, otherToken] = (await Promise.all(keys)).map((k) => k.token) as [string, string];
  sdk = new Firecrawl({ apiKey: token, apiUrl: base });
  site = await startSite((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    const n = /^\/docs\/p\/(\d+)$/.exec(path)?.[1];
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    if (path === '/robots.txt') {
      res.setHeader('Content-Type', 'text/plain');
      res.end(`User-agent: *\nDisallow: /private/\nSitemap: ${site.url}/sitemap.xml\n`);
    } else if (path === '/sitemap.xml') {
      res.setHeader('Content-Type', 'application/xml');
      const urls = [131, 132, 133].map((i) => `<url><loc>${site.url}/docs/p/${i}</loc></url>`).join('');
      res.end(
        `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls}</urlset>`,
      );
    } else if (path === '/docs/') res.end(index);
    else if (n && Number(n) <= 135) res.end(page(Number(n)));
    else if (path === '/blog/news' || path === '/private/secret') res.end(page(999));
    else if (path === '/mixed/') res.end(mixed);
    else if (path === '/mixed/a') res.end(page(1));
    else return false;
    return true;
  });
  worker = startApp('scraper-worker', scraperWorkerEnv(tdb.url, prefix.prefix));
  await worker.waitForLog((l) => l.msg === 'scraper worker started');
});

afterAll(async () => {
  await worker.kill('SIGTERM');
  await new Promise((resolve) => server.close(resolve));
  await api.close();
  await site.close();
  await tdb.drop();
  await prefix.cleanup();
});

/** A page's document as a crawl.page body has it. */
type Document = { markdown?: string; metadata: Record<string, unknown> };

const raw = (key = token) => ({
  get: (path: string) => request(base).get(path).set('Authorization', `Bearer ${key}`),
  post: (path: string, body: object) =>
    request(base).post(path).set('Authorization', `Bearer ${key}`).send(body),
});

describe('scrape', () => {
  it('answers with the page in every supported format once the fleet has it', async () => {
    const doc = await sdk.scrape(`${site.url}/docs/p/7`, {
      formats: ['markdown', 'html', 'rawHtml', 'links'],
    });
    expect(doc.markdown).toMatch(/^# Topic 7$/m);
    expect(doc.markdown).not.toContain('Docs home');
    expect(doc.html).toContain('<h1>Topic 7</h1>');
    expect(doc.rawHtml).toBe(page(7));
    expect(doc.links).toEqual([`${site.url}/docs/`, `${site.url}/private/secret`, `${site.url}/docs/p/8`]);
    expect(doc.metadata).toMatchObject({
      title: 'Page 7 | Docs',
      description: 'About topic 7.',
      language: 'en',
      sourceURL: `${site.url}/docs/p/7`,
      url: `${site.url}/docs/p/7`,
      statusCode: 200,
    });
  });

  it('gives a failed page its status code and error in the metadata', async () => {
    const doc = await sdk.scrape(`${site.url}/missing`, { formats: ['markdown'] });
    expect(doc.markdown).toBeUndefined();
    expect(doc.metadata).toMatchObject({ statusCode: 404, error: expect.stringContaining('404') });
  });

  it('refuses formats it does not support, naming them, in Firecrawl error shape', async () => {
    const res = await raw().post('/v2/scrape', {
      url: `${site.url}/docs/p/1`,
      formats: ['markdown', 'branding'],
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: expect.stringContaining('branding') });
    expect(res.body.details).toHaveProperty(['formats[1]']);
    // Without the operator's language model, its formats name the field and say so (docs/api.md §24).
    const summary = await raw().post('/v2/scrape', { url: `${site.url}/docs/p/1`, formats: ['summary'] });
    expect(summary.status).toBe(400);
    expect(summary.body).toMatchObject({
      success: false,
      error: expect.stringContaining('formats[0]: no language model is configured'),
    });
  });
});

describe('crawl', () => {
  it('crawls within limit, pages its status past 100 documents, and keeps its job out of the job list', async () => {
    const job = await sdk.crawl(`${site.url}/docs/`, { limit: 120, pollInterval: 1, sitemap: 'skip' });
    expect(job.status).toBe('completed');
    expect(job.completed).toBe(120);
    expect(job.data).toHaveLength(120);
    const urls = job.data.map((d) => d.metadata?.sourceURL);
    expect(new Set(urls).size).toBe(120);
    expect(urls.every((u) => u?.startsWith(`${site.url}/docs/`))).toBe(true);

    const native = client(api.app, token);
    const listed = await native.get('/jobs/status');
    expect(listed.body.jobs).toEqual([]);
    const compat = await native.get('/jobs/status?origin=firecrawl');
    expect(compat.body.jobs.length).toBeGreaterThan(0);
    const detail = await native.get(`/jobs/${compat.body.jobs[0].job_id}`);
    expect(detail.body.origin).toBe('firecrawl');
  });

  it('follows includePaths and excludePaths on the URL path', async () => {
    const job = await sdk.crawl(`${site.url}/docs/`, {
      includePaths: ['^/docs/p/1[0-9]$'],
      excludePaths: ['^/docs/p/15$'],
      sitemap: 'skip',
      pollInterval: 1,
    });
    const paths = job.data.map((d) => new URL(d.metadata!.sourceURL!).pathname).sort();
    expect(paths).toEqual(
      ['/docs/', ...[10, 11, 12, 13, 14, 16, 17, 18, 19].map((n) => `/docs/p/${n}`)].sort(),
    );
  });

  it('takes only the sitemap with sitemap: "only", and reports robots.txt blocks among its errors', async () => {
    const only = await sdk.crawl(`${site.url}/docs/`, { sitemap: 'only', pollInterval: 1 });
    expect(only.data.map((d) => new URL(d.metadata!.sourceURL!).pathname).sort()).toEqual([
      '/docs/',
      '/docs/p/131',
      '/docs/p/132',
      '/docs/p/133',
    ]);

    const started = await sdk.startCrawl(`${site.url}/docs/p/1`, {
      maxDiscoveryDepth: 1,
      crawlEntireDomain: true,
      sitemap: 'skip',
    });
    await sdk.crawl(`${site.url}/docs/p/2`, { limit: 1, pollInterval: 1 }); // let it run meanwhile
    let status = await sdk.getCrawlStatus(started.id);
    for (let i = 0; status.status === 'scraping' && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = await sdk.getCrawlStatus(started.id);
    }
    const errors = await sdk.getCrawlErrors(started.id);
    expect(errors.robotsBlocked).toEqual([`${site.url}/private/secret`]);
  });

  it('adds the sitemap\'s pages to the links with sitemap: "include", and leaves them out with "skip"', async () => {
    const paths = async (sitemap: 'include' | 'skip') => {
      const job = await sdk.crawl(`${site.url}/docs/`, {
        sitemap,
        includePaths: ['^/docs/p/13[0-9]$'],
        maxDiscoveryDepth: 1,
        pollInterval: 1,
      });
      expect(job.status).toBe('completed');
      return job.data.map((d) => new URL(d.metadata!.sourceURL!).pathname).sort();
    };
    // Linked from /docs/ (one link away): only 130; 131-133 are two or more links away.
    expect(await paths('skip')).toEqual(['/docs/', '/docs/p/130']);
    // The sitemap's pages are at discovery depth 0, as Firecrawl has them: 131-133, and 134 one link on.
    expect(await paths('include')).toEqual(
      ['/docs/', ...[130, 131, 132, 133, 134].map((n) => `/docs/p/${n}`)].sort(),
    );
  });

  it('cancels a crawl, lists active crawls, and hides them from another user', async () => {
    const started = await sdk.startCrawl(`${site.url}/docs/`, { delay: 2, sitemap: 'skip' });
    const active = await sdk.getActiveCrawls();
    expect(active.crawls.map((c) => c.id)).toContain(started.id);
    const other = new Firecrawl({ apiKey: otherToken, apiUrl: base });
    await expect(other.getCrawlStatus(started.id)).rejects.toMatchObject({ status: 404 });
    expect(await sdk.cancelCrawl(started.id)).toBe(true);
    expect((await sdk.getCrawlStatus(started.id)).status).toBe('cancelled');
  });
});

describe('key modes', () => {
  it("serves a live key like a test key, each mode's crawls out of the other's sight", async () => {
    const { token: liveToken } = await api.keys.create({
      email: 'crawler@example.com',
      mode: 'live',
      scopes: ['jobs:read', 'jobs:write'],
      name: 'live',
    });
    const live = new Firecrawl({ apiKey: liveToken, apiUrl: base });
    const scraped = await live.scrape(`${site.url}/docs/p/7`, { formats: ['markdown'] });
    expect(scraped.markdown).toContain('Topic 7');
    const liveCrawl = await live.crawl(`${site.url}/docs/`, { limit: 3, sitemap: 'skip', pollInterval: 1 });
    expect(liveCrawl.completed).toBe(3);
    const testCrawl = await sdk.startCrawl(`${site.url}/docs/`, { limit: 2, sitemap: 'skip' });
    await expect(live.getCrawlStatus(testCrawl.id)).rejects.toMatchObject({ status: 404 });
    await expect(sdk.getCrawlStatus(liveCrawl.id)).rejects.toMatchObject({ status: 404 });
    const active = await live.getActiveCrawls();
    expect(active.crawls.map((c) => c.id)).not.toContain(testCrawl.id);
  });
});

describe('map and batch scrape', () => {
  it('maps a site from its sitemap and links, ranked by search', async () => {
    const map = await sdk.map(`${site.url}/docs/`, { search: 'p/132' });
    expect(map.links[0]?.url).toBe(`${site.url}/docs/p/132`);
    const urls = map.links.map((l) => l.url);
    expect(urls).toContain(`${site.url}/docs/p/5`);
    expect(new Set(urls).size).toBe(urls.length);
  });

  it('scrapes a batch, listing the invalid URLs it skipped', async () => {
    const ftp = 'ftp://files.example.com/a';
    const started = await sdk.startBatchScrape([`${site.url}/docs/p/3`, ftp, `${site.url}/docs/p/4`], {
      options: { formats: ['markdown'] },
      ignoreInvalidURLs: true,
    });
    expect(started.invalidURLs).toEqual([ftp]);
    let job = await sdk.getBatchScrapeStatus(started.id);
    for (let i = 0; job.status === 'scraping' && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      job = await sdk.getBatchScrapeStatus(started.id);
    }
    expect(job.status).toBe('completed');
    expect(job.data.map((d) => d.markdown?.split('\n')[0]).sort()).toEqual(['# Topic 3', '# Topic 4']);
  });
});

describe('raw HTTP', () => {
  it('answers errors in Firecrawl shape: no key, unknown id, unsupported endpoints', async () => {
    const none = await request(base)
      .post('/v2/scrape')
      .send({ url: `${site.url}/docs/p/1` });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ success: false, error: expect.any(String) });
    const unknown = await raw().get('/v2/crawl/run_00000000000000000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body.success).toBe(false);
    const search = await raw().post('/v2/search', { query: 'x' });
    expect(search.status).toBe(501);
    expect(search.body).toEqual({ success: false, error: expect.stringContaining('SEARXNG_ENDPOINT') });
  });

  it('speaks v1: crawl start and status, map links as strings', async () => {
    const started = await raw().post('/v1/crawl', {
      url: `${site.url}/docs/p/1`,
      limit: 2,
      ignoreSitemap: true,
    });
    expect(started.status).toBe(200);
    expect(started.body).toEqual({
      success: true,
      id: expect.any(String),
      url: `${base}/v1/crawl/${started.body.id}`,
    });
    const map = await raw().post('/v1/map', { url: `${site.url}/docs/p/1`, ignoreSitemap: true });
    expect(map.body.success).toBe(true);
    expect(typeof map.body.links[0]).toBe('string');
  });

  it('is an SdkError with the status for a bad request through the SDK', async () => {
    const err = await sdk
      .scrape(`${site.url}/docs/p/1`, { formats: ['changeTracking'] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SdkError);
    expect(err).toMatchObject({ status: 400, message: expect.stringContaining('changeTracking') });
  });
});

/** A local webhook receiver recording each request, in the order they arrived. */
async function webhookReceiver() {
  const hits: { headers: IncomingHttpHeaders; body: string }[] = [];
  const bodies = () => hits.map((h) => JSON.parse(h.body) as Record<string, unknown>);
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    hits,
    bodies,
    /** The bodies received once one of type `done` has come. */
    async untilType(done: RegExp) {
      await until(async () => bodies().some((b) => done.test(String(b.type))), 20_000, 20);
      return bodies();
    },
    close: () => new Promise((resolve) => receiver.close(resolve)),
  };
}

describe('webhooks', () => {
  let webhookWorker: Proc;
  beforeAll(async () => {
    webhookWorker = startApp('webhook-worker', {
      DATABASE_URL: tdb.url,
      REDIS_URL,
      QUEUE_PREFIX: prefix.prefix,
      ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
      PUBLIC_BASE_URL: base,
      WEBHOOK_SECRET_KEY: KEY.toString('hex'),
      WEBHOOK_OUTBOX_POLL_MS: '50',
    });
    await webhookWorker.waitForLog((l) => l.msg === 'webhook worker started');
  });
  afterAll(() => webhookWorker.kill('SIGTERM'));

  const userId = async () =>
    (await tdb.db.user.findUniqueOrThrow({ where: { email: 'crawler@example.com' } })).id;
  const hmac = (secret: string, body: string) =>
    `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

  it('sends crawl.started, a crawl.page per page and crawl.completed in Firecrawl’s shape, signed with the account’s secret', async () => {
    const receiver = await webhookReceiver();
    try {
      const secret = await api.webhooks.rotateFirecrawlSecret({ userId: await userId() });
      const started = await raw().post('/v2/crawl', {
        url: `${site.url}/docs/`,
        limit: 3,
        sitemap: 'skip',
        webhook: { url: receiver.url, headers: { 'X-Receiver-Token': 'r1' }, metadata: { a: 1 } },
      });
      expect(started.status).toBe(200);
      // crawl.completed comes after every other event of the crawl.
      const bodies = await receiver.untilType(/^crawl\.completed$/);
      expect(bodies.at(-1)!.type).toBe('crawl.completed');
      expect(bodies.map((b) => b.type).sort()).toEqual([
        'crawl.completed',
        'crawl.page',
        'crawl.page',
        'crawl.page',
        'crawl.started',
      ]);
      for (const b of bodies)
        expect(b).toEqual({
          success: true,
          type: b.type,
          id: started.body.id,
          webhookId: expect.stringMatching(/^evt_/),
          data: b.type === 'crawl.page' ? [expect.any(Object)] : [],
          metadata: { a: 1 },
        });
      const pages = bodies.filter((b) => b.type === 'crawl.page').map((b) => (b.data as Document[])[0]!);
      // The index, then the first topics it links to.
      expect(pages.map((d) => d.metadata.sourceURL).sort()).toEqual(
        [`${site.url}/docs/`, `${site.url}/docs/p/1`, `${site.url}/docs/p/2`].sort(),
      );
      for (const d of pages) expect(d.markdown).toMatch(/^# (Docs|Topic \d)$/m);
      expect(new Set(bodies.map((b) => b.webhookId)).size).toBe(5);
      for (const h of receiver.hits) {
        expect(h.headers['x-firecrawl-signature']).toBe(hmac(secret, h.body));
        expect(h.headers['content-type']).toBe('application/json');
        expect(h.headers['x-receiver-token']).toBe('r1');
      }
      expect((await sdk.getCrawlStatus(started.body.id)).status).toBe('completed');
    } finally {
      await receiver.close();
    }
  });

  it('completes a crawl whose pages partly failed, as its status reads, after every crawl.page, the 404 under its errors', async () => {
    const receiver = await webhookReceiver();
    try {
      const started = await raw().post('/v2/crawl', {
        url: `${site.url}/mixed/`,
        limit: 3,
        sitemap: 'skip',
        webhook: receiver.url,
      });
      expect(started.status).toBe(200);
      const id = started.body.id as string;
      const bodies = await receiver.untilType(/^crawl\.(completed|failed)$/);
      // Pages may come in any order, but both before the terminal event, which is the last.
      expect(bodies.map((b) => b.type).slice(-1)).toEqual(['crawl.completed']);
      expect(bodies.map((b) => b.type).sort()).toEqual([
        'crawl.completed',
        'crawl.page',
        'crawl.page',
        'crawl.started',
      ]);
      expect(bodies.at(-1)).toMatchObject({ success: true, id, data: [] });
      expect(bodies.at(-1)).not.toHaveProperty('error');
      const pages = bodies.filter((b) => b.type === 'crawl.page').map((b) => (b.data as Document[])[0]!);
      expect(pages.map((d) => d.metadata.sourceURL).sort()).toEqual([
        `${site.url}/mixed/`,
        `${site.url}/mixed/a`,
      ]);
      const status = await raw().get(`/v2/crawl/${id}`);
      expect([status.body.status, status.body.total, status.body.completed]).toEqual(['completed', 3, 2]);
      const errors = await raw().get(`/v2/crawl/${id}/errors`);
      expect(errors.body.errors).toEqual([
        {
          id: expect.any(String),
          url: `${site.url}/mixed/gone`,
          error: expect.stringContaining('404'),
          timestamp: expect.any(String),
          code: expect.any(String),
        },
      ]);
      // The native job reads failed (docs/api.md §3.8): a URL failed.
      const run = await tdb.db.run.findUniqueOrThrow({ where: { id } });
      expect(run.status).toBe('failed');
    } finally {
      await receiver.close();
    }
  });

  it('signs the first batch scrape webhook of an account that never made a secret, pages before batch_scrape.completed', async () => {
    const receiver = await webhookReceiver();
    const other = (await tdb.db.user.findUniqueOrThrow({ where: { email: 'other@example.com' } })).id;
    try {
      expect(await tdb.db.firecrawlWebhookSecret.count({ where: { userId: other } })).toBe(0);
      const started = await raw(otherToken).post('/v2/batch/scrape', {
        urls: [`${site.url}/mixed/a`, `${site.url}/mixed/gone`, `${site.url}/docs/p/3`],
        webhook: { url: receiver.url, events: ['page', 'completed'] },
      });
      expect(started.status).toBe(200);
      const bodies = await receiver.untilType(/^batch_scrape\.(completed|failed)$/);
      expect(bodies.map((b) => b.type)).toEqual([
        'batch_scrape.page',
        'batch_scrape.page',
        'batch_scrape.completed',
      ]);
      // Made at the call, and shown the same in the console (docs/api.md §26).
      const secret = await api.webhooks.revealFirecrawlSecret({ userId: other });
      expect(secret).toMatch(/^fcwhsec_/);
      for (const h of receiver.hits) expect(h.headers['x-firecrawl-signature']).toBe(hmac(secret, h.body));
      expect((await raw(otherToken).get(`/v2/batch/scrape/${started.body.id}`)).body.status).toBe(
        'completed',
      );
    } finally {
      await receiver.close();
    }
  });
});
