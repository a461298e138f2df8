import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Firecrawl from '@mendable/firecrawl-js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { makePdf } from '../../packages/content/src/testing/pdf.ts';
import { buildTestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { jpegSize } from '../support/images.ts';
import { firecrawlMcp } from '../support/mcp.ts';
import { type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

// What integrations built for Firecrawl call besides scrape and crawl (docs/api.md §18, contract
// section 26), through Firecrawl's own JavaScript SDK and raw requests, against the real API
// (listening on a port) and a real scraper worker, on a local site.

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let server: Server;
let base: string;
let worker: Proc;
let site: Awaited<ReturnType<typeof startSite>>;
const prefix = testPrefix();
const KEY = randomBytes(32);
/** ACCOUNT_MONTHLY_CREDITS of this API. */
const QUOTA = 1000;

const page = (n: number) => `<!doctype html><html lang="en"><head><title>Page ${n}</title></head><body>
<main><h1>Topic ${n}</h1><p>Topic ${n} in a few sentences, and a link to the <a href="/p/${n + 1}">next topic</a>.</p></main></body></html>`;

/** A page whose button counts its clicks, for interact sessions. */
const COUNTER = `<!doctype html><html><head><title>Counter</title></head><body><p id="count">0</p>
<button id="more" onclick="const c = document.getElementById('count'); c.textContent = String(Number(c.textContent) + 1)">more</button>
<a id="next" href="/p/2">next</a></body></html>`;

beforeAll(async () => {
  tdb = await createTestDatabase();
  server = createServer((req, res) => api.app(req, res));
  server.on('upgrade', (req, socket, head) => api.app.upgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api = buildTestApi({
    db: tdb.db,
    prefix: prefix.prefix,
    publicBaseUrl: base,
    webhooks: { WEBHOOK_SECRET_KEY: KEY, ALLOW_PRIVATE_NETWORK_TARGETS: true },
    env: { ACCOUNT_MONTHLY_CREDITS: QUOTA },
  });
  site = await startSite((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    if (path === '/counter') {
      res.end(COUNTER);
      return true;
    }
    const n = /^\/p\/(\d+)$/.exec(path)?.[1];
    if (!n || Number(n) > 50) return false;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(page(Number(n)));
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

/** A new account's key and the SDK with it. */
async function account(email: string) {
  const { token } = await api.keys.create({
    email,
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write'],
    name: 'k',
  });
  const raw = {
    get: (path: string) => request(base).get(path).set('Authorization', `Bearer ${token}`),
    post: (path: string, body: object) =>
      request(base).post(path).set('Authorization', `Bearer ${token}`).send(body),
    delete: (path: string) => request(base).delete(path).set('Authorization', `Bearer ${token}`),
  };
  return { token, sdk: new Firecrawl({ apiKey: token, apiUrl: base }), raw };
}

describe('team usage', () => {
  it("reports the account's pages this month as credits used against the operator's quota, in v2 and v1", async () => {
    const { sdk, raw } = await account('usage@example.com');
    const before = await sdk.getCreditUsage();
    expect(before).toMatchObject({ remainingCredits: QUOTA, planCredits: QUOTA });
    const start = new Date(before.billingPeriodStart!);
    expect([start.getUTCDate(), start.getUTCHours()]).toEqual([1, 0]);
    expect(new Date(before.billingPeriodEnd!).getTime()).toBeGreaterThan(Date.now());

    await sdk.scrape(`${site.url}/p/1`, { formats: ['markdown'] });
    await sdk.scrape(`${site.url}/p/2`, { formats: ['markdown'] });
    expect((await sdk.getCreditUsage()).remainingCredits).toBe(QUOTA - 2);
    const v1 = await raw.get('/v1/team/credit-usage');
    expect(v1.status).toBe(200);
    expect(v1.body.data).toMatchObject({
      remaining_credits: QUOTA - 2,
      plan_credits: QUOTA,
      credits_used: 2,
    });
    // Another account's pages are its own.
    const other = await account('usage-other@example.com');
    expect((await other.sdk.getCreditUsage()).remainingCredits).toBe(QUOTA);

    const queue = await sdk.getQueueStatus();
    expect(queue).toMatchObject({
      success: true,
      jobsInQueue: 0,
      activeJobsInQueue: 0,
      waitingJobsInQueue: 0,
      maxConcurrency: 64,
    });
    expect(Date.now() - new Date(queue.mostRecentSuccess!).getTime()).toBeLessThan(3_600_000);
    expect((await other.sdk.getQueueStatus()).mostRecentSuccess).toBeNull();
  });
});

describe('scrapes and crawls by id', () => {
  it('reads a scrape again by the id in its metadata, and only a scrape', async () => {
    const { sdk, raw } = await account('scrape-id@example.com');
    const doc = await sdk.scrape(`${site.url}/p/3`, { formats: ['markdown'] });
    const id = doc.metadata?.scrapeId;
    expect(id).toMatch(/^run_/);
    const again = await raw.get(`/v2/scrape/${id}`);
    expect(again.status).toBe(200);
    expect(again.body.data.markdown).toBe(doc.markdown);
    expect(again.body.data.metadata).toMatchObject({ scrapeId: id, sourceURL: `${site.url}/p/3` });
    const crawl = await sdk.startCrawl(`${site.url}/p/1`, { limit: 1 });
    const notScrape = await raw.get(`/v2/scrape/${crawl.id}`);
    expect(notScrape.status).toBe(404);
    expect(notScrape.body.success).toBe(false);
    const other = await account('scrape-id-other@example.com');
    expect((await other.raw.get(`/v2/scrape/${id}`)).status).toBe(404);
  });

  it('lists ongoing crawls with their options at crawl/ongoing and crawl/active, v1 too', async () => {
    const { sdk, raw } = await account('ongoing@example.com');
    const started = await sdk.startCrawl(`${site.url}/p/1`, {
      limit: 5,
      delay: 2,
      sitemap: 'skip',
      excludePaths: ['^/private/'],
      scrapeOptions: { formats: ['markdown'], headers: { Authorization: 'Bearer ongoing-secret' } },
    });
    // The pages' header values are secrets (docs/api.md §14): shown masked.
    const options = {
      limit: 5,
      delay: 2,
      sitemap: 'skip',
      excludePaths: ['^/private/'],
      scrapeOptions: expect.objectContaining({
        formats: ['markdown'],
        headers: { Authorization: '********' },
      }),
    };
    const active = await sdk.getActiveCrawls();
    expect(active.crawls).toEqual([
      {
        id: started.id,
        teamId: expect.any(String),
        url: `${site.url}/p/1`,
        options: expect.objectContaining(options),
      },
    ]);
    for (const path of ['/v2/crawl/ongoing', '/v1/crawl/active']) {
      const res = await raw.get(path);
      expect(res.status).toBe(200);
      expect(res.text).not.toContain('ongoing-secret');
      expect(res.body.crawls.map((c: { id: string }) => c.id)).toEqual([started.id]);
    }
    // Another account sees none of them.
    const other = await account('ongoing-other@example.com');
    expect((await other.sdk.getActiveCrawls()).crawls).toEqual([]);
    expect(await sdk.cancelCrawl(started.id)).toBe(true);
    expect((await sdk.getActiveCrawls()).crawls).toEqual([]);
  });
});

describe('the crawl watcher', () => {
  it('streams a crawl over the WebSocket the SDK opens: every page once, then done', async () => {
    const { sdk } = await account('watcher@example.com');
    const started = await sdk.startCrawl(`${site.url}/p/1`, {
      limit: 4,
      sitemap: 'skip',
      crawlEntireDomain: true,
    });
    const watcher = sdk.watcher(started.id, { kind: 'crawl', pollInterval: 1 });
    const urls: string[] = [];
    const ends: { status: string; completed?: number }[] = [];
    watcher.on('document', (doc: { metadata?: { sourceURL?: string } }) =>
      urls.push(doc.metadata?.sourceURL ?? ''),
    );
    watcher.on('done', (end: { status: string; completed?: number }) => ends.push(end));
    watcher.on('error', (end: { status: string }) => ends.push(end));
    await watcher.start();
    expect(ends).toEqual([expect.objectContaining({ status: 'completed', completed: 4 })]);
    expect(urls.sort()).toEqual([1, 2, 3, 4].map((n) => `${site.url}/p/${n}`).sort());
  });

  it('sends an error for an unknown key or crawl, and the SDK stops', async () => {
    const { sdk } = await account('watcher-bad@example.com');
    const errors: { error?: string }[] = [];
    const ends: { status: string }[] = [];
    const unknown = sdk.watcher('run_00000000000000000000000000', { kind: 'crawl', pollInterval: 1 });
    unknown.on('error', (e: { error?: string }) => errors.push(e));
    unknown.on('done', (e: { status: string }) => ends.push(e));
    await unknown.start();
    const badKey = new Firecrawl({ apiKey: 'sk_test_nope', apiUrl: base }).watcher(
      'run_00000000000000000000000000',
      { kind: 'crawl', pollInterval: 1 },
    );
    badKey.on('error', (e: { error?: string }) => errors.push(e));
    badKey.on('done', (e: { status: string }) => ends.push(e));
    await badKey.start();
    await until(async () => ends.length === 2, 5_000, 50);
    expect(errors.map((e) => e.error)).toEqual([
      expect.stringMatching(/not found/i),
      expect.stringMatching(/key/),
    ]);
    // Each watcher stopped at the failed status rather than polling on.
    expect(ends.map((e) => e.status)).toEqual(['failed', 'failed']);
  });
});

/** The fields of the MCP tools' answers read here. */
describe('file parsing', () => {
  it("parses an HTML and a PDF file through the SDK's parse, each counted as a page", async () => {
    const { sdk } = await account('parse@example.com');
    const html = await sdk.parse(
      { data: Buffer.from(page(3)), filename: 'topic.html', contentType: 'text/html' },
      { formats: ['markdown', 'links'], onlyMainContent: true },
    );
    expect(html.markdown).toBe('# Topic 3\n\nTopic 3 in a few sentences, and a link to the next topic.');
    expect(html.metadata).toMatchObject({ title: 'Page 3', language: 'en', sourceURL: 'topic.html' });
    const pdf = await makePdf({ pages: [['A page of a PDF, read by the SDK.']] });
    const fromPdf = await sdk.parse({ data: pdf, filename: 'one.pdf', contentType: 'application/pdf' });
    expect(fromPdf.markdown).toBe('A page of a PDF, read by the SDK.');
    expect((await sdk.getCreditUsage()).remainingCredits).toBe(QUOTA - 2);
    await expect(sdk.parse({ data: 'PK\u0003\u0004', filename: 'a.xlsx' })).rejects.toMatchObject({
      status: 415,
      message: expect.stringContaining('this service parses HTML'),
    });
  });
});

interface ToolAnswer {
  markdown: string;
  screenshot: string;
  metadata: { scrapeId: string };
  links: { url: string }[];
  id: string;
  status: string;
  total: number;
  completed: number;
  data: { markdown: string }[];
}

describe("Firecrawl's MCP server", () => {
  /** Its tools that need a search engine, a language model or monitors (docs/api.md §24, §25; monitors none). */
  const NEEDS_MORE = [
    'firecrawl_search',
    'firecrawl_search_feedback',
    'firecrawl_developer_search',
    'firecrawl_research_search_papers',
    'firecrawl_research_inspect_paper',
    'firecrawl_research_related_papers',
    'firecrawl_research_read_paper',
    'firecrawl_research_search_github',
    'firecrawl_extract',
    'firecrawl_agent',
    'firecrawl_agent_status',
    'firecrawl_monitor_create',
    'firecrawl_monitor_list',
    'firecrawl_monitor_get',
    'firecrawl_monitor_update',
    'firecrawl_monitor_delete',
    'firecrawl_monitor_run',
    'firecrawl_monitor_checks',
    'firecrawl_monitor_check',
  ];
  /** Firecrawl's hosted features this service does not have: the tool ends in an error naming it. */
  const NOT_SERVED = ['firecrawl_feedback', 'firecrawl_find_tools'];
  const WORKS = [
    'firecrawl_scrape',
    'firecrawl_map',
    'firecrawl_crawl',
    'firecrawl_check_crawl_status',
    'firecrawl_credit_usage',
    'firecrawl_interact',
    'firecrawl_interact_stop',
    'firecrawl_parse',
  ];

  it('runs each of its tools that needs no search, model or monitors against the service', async () => {
    const { token } = await account('mcp@example.com');
    const mcp = await firecrawlMcp(base, token);
    try {
      // A new tool of the server fails here until it is sorted into one of the lists.
      const names = (await mcp.listTools()).tools.map((t) => t.name);
      expect([...names].sort()).toEqual([...WORKS, ...NOT_SERVED, ...NEEDS_MORE].sort());
      const call = async (name: string, args: Record<string, unknown>) => {
        const result = await mcp.callTool({ name, arguments: args });
        const text = (result.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('');
        return {
          error: result.isError === true,
          text,
          data: result.structuredContent as ToolAnswer,
        };
      };

      const scraped = await call('firecrawl_scrape', {
        url: `${site.url}/p/1`,
        formats: ['markdown', 'screenshot'],
        screenshotOptions: { viewport: { width: 1024, height: 600 }, quality: 60 },
        maxAge: 0,
      });
      expect(scraped.error).toBe(false);
      expect(scraped.data.markdown).toMatch(/^# Topic 1$/m);
      const shot = await request(scraped.data.screenshot).get('').set('Authorization', `Bearer ${token}`);
      expect([shot.headers['content-type'], jpegSize(shot.body)]).toEqual([
        'image/jpeg',
        { width: 1024, height: 600 },
      ]);

      const mapped = await call('firecrawl_map', { url: `${site.url}/p/1`, limit: 10 });
      expect(mapped.error).toBe(false);
      // As Firecrawl's map, only URLs under the seed's path: /p/2, linked from /p/1, is not.
      expect(mapped.data.links.map((l) => l.url)).toEqual([`${site.url}/p/1`]);

      const crawl = await call('firecrawl_crawl', {
        url: `${site.url}/p/1`,
        limit: 3,
        sitemap: 'skip',
        crawlEntireDomain: true,
      });
      expect(crawl.error).toBe(false);
      const id = crawl.data.id;
      let status = await call('firecrawl_check_crawl_status', { id });
      await until(
        async () => {
          status = await call('firecrawl_check_crawl_status', { id });
          return status.data?.status !== undefined && status.data.status !== 'scraping';
        },
        20_000,
        100,
      );
      expect(status.error).toBe(false);
      expect([status.data.status, status.data.total, status.data.completed]).toEqual(['completed', 3, 3]);
      expect(status.data.data.map((d) => d.markdown.match(/^# (Topic \d)$/m)?.[1]).sort()).toEqual([
        'Topic 1',
        'Topic 2',
        'Topic 3',
      ]);

      const usage = await call('firecrawl_credit_usage', {});
      expect(usage.error).toBe(false);
      expect(usage.text).toContain(String(QUOTA - 5));

      // The scrape's page, live: the second call reads the page the first one's click opened.
      const scrapeId = scraped.data.metadata.scrapeId;
      const read = `console.log(await page.innerText('h1')); return page.title();`;
      const interacted = await call('firecrawl_interact', { scrapeId, code: read });
      expect(interacted.error).toBe(false);
      expect(interacted.data).toMatchObject({
        success: true,
        stdout: 'Topic 1\n',
        result: 'Page 1',
        exitCode: 0,
      });
      expect((await call('firecrawl_interact', { scrapeId, code: `await page.click('a');` })).error).toBe(
        false,
      );
      const next = await call('firecrawl_interact', { scrapeId, code: read });
      expect(next.data).toMatchObject({ stdout: 'Topic 2\n', result: 'Page 2' });
      const stopped = await call('firecrawl_interact_stop', { scrapeId });
      // The structured answer keeps the fields of the tool's output schema; the text has them all.
      expect([stopped.error, stopped.data, JSON.parse(stopped.text)]).toEqual([
        false,
        { success: true },
        { success: true, status: 'stopped', sessionDurationMs: expect.any(Number) },
      ]);

      // Local files, as the server reads them (docs/api.md §18): the answer is POST /v2/parse's.
      const dir = await mkdtemp(join(tmpdir(), 'mcp-parse-'));
      try {
        await writeFile(join(dir, 'notes.html'), page(7));
        const pdf = await makePdf({
          title: 'Minutes',
          pages: [['First page of the minutes.'], ['Second page.']],
        });
        await writeFile(join(dir, 'minutes.pdf'), pdf);
        const html = await call('firecrawl_parse', { filePath: join(dir, 'notes.html') });
        const htmlDoc = (html.data as unknown as { data: ToolAnswer }).data;
        expect([html.error, htmlDoc.markdown]).toEqual([
          false,
          `# Topic 7\n\nTopic 7 in a few sentences, and a link to the next topic.`,
        ]);
        expect(htmlDoc.metadata).toMatchObject({ title: 'Page 7', sourceURL: 'notes.html' });
        const parsedPdf = await call('firecrawl_parse', {
          filePath: join(dir, 'minutes.pdf'),
          parsers: ['pdf'],
          pdfOptions: { maxPages: 1 },
        });
        const pdfDoc = (parsedPdf.data as unknown as { data: ToolAnswer }).data;
        expect([parsedPdf.error, pdfDoc.markdown]).toEqual([false, 'First page of the minutes.']);
        expect(pdfDoc.metadata).toMatchObject({ title: 'Minutes', numPages: 2 });
        // A kind it does not parse ends in an error naming the kinds it does.
        await writeFile(join(dir, 'report.docx'), 'PK\u0003\u0004');
        const docx = await call('firecrawl_parse', { filePath: join(dir, 'report.docx') });
        expect([docx.error, docx.text]).toEqual([
          true,
          expect.stringMatching(/status 415.*parses HTML .* and PDF/),
        ]);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }

      for (const [name, args] of [
        // The server takes only Firecrawl's UUIDs as job ids.
        ['firecrawl_feedback', { endpoint: 'scrape', jobId: randomUUID(), rating: 'good' }],
        ['firecrawl_find_tools', {}],
        ['firecrawl_find_tools', { query: 'prices' }],
      ] as const) {
        // Read without the client's check of the answer against the tool's output schema, which
        // firecrawl_find_tools's own error answers do not pass.
        const answer = await mcp.request(
          { method: 'tools/call', params: { name, arguments: args } },
          CallToolResultSchema,
        );
        const text = answer.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
        expect([name, text]).toEqual([
          name,
          expect.stringMatching(/not supported by this service|status code 501/),
        ]);
      }
    } finally {
      await mcp.close();
    }
  });
});

/** An account that scrapes the counter page, for interact sessions. */
async function interactor(email: string) {
  const { sdk, raw } = await account(email);
  const scrape = async () => {
    const doc = await sdk.scrape(`${site.url}/counter`, { formats: ['markdown'], maxAge: 0 });
    return doc.metadata?.scrapeId as string;
  };
  return { sdk, raw, scrape };
}

/** Interact sessions an account may have at once (INTERACT_SESSIONS_PER_USER's default). */
const PER_USER = 2;

const CLICK = `await page.click('#more'); return page.innerText('#count');`;
const READ = `console.log('count is', await page.innerText('#count'));`;

describe('interact sessions', () => {
  it("keeps the page's state between calls until stopped; after a stop the next call opens a fresh page", async () => {
    const { sdk, scrape } = await interactor('interact@example.com');
    const id = await scrape();
    expect(await sdk.interact(id, { code: CLICK })).toEqual({
      success: true,
      result: '1',
      stdout: '',
      stderr: '',
      exitCode: 0,
      killed: false,
    });
    // The DOM the first call changed is there for the second.
    expect(
      await sdk.interact(id, {
        code: `await page.click('#more'); console.log(await page.innerText('#count'));`,
      }),
    ).toMatchObject({
      success: true,
      result: '2',
      stdout: '2\n',
    });
    const read = await sdk.interact(id, { code: READ, timeout: 10 });
    expect([read.stdout, read.result]).toEqual(['count is 2\n', 'count is 2']);

    const stopped = await sdk.stopInteraction(id);
    expect(stopped).toEqual({ success: true, status: 'stopped', sessionDurationMs: expect.any(Number) });
    expect(stopped.sessionDurationMs).toBeGreaterThan(0);
    const fresh = await sdk.interact(id, { code: READ });
    expect(fresh.stdout).toBe('count is 0\n');
    await sdk.stopInteraction(id);
    // Nothing left to stop.
    await expect(sdk.stopInteraction(id)).rejects.toThrow(/No interact session is open/);
  });

  it('follows a navigation the code starts, and stops code past its time limit', async () => {
    const { sdk, raw, scrape } = await interactor('interact-nav@example.com');
    const id = await scrape();
    const nav = await sdk.interact(id, { code: `await page.click('#next');` });
    expect([nav.success, nav.exitCode]).toEqual([true, 0]);
    expect((await sdk.interact(id, { code: 'return page.title();' })).result).toBe('Page 2');

    const started = Date.now();
    const hung = await raw.post(`/v2/scrape/${id}/interact`, {
      code: `console.log('started'); while (true) {}`,
      timeout: 1,
    });
    expect(hung.status).toBe(200);
    expect(hung.body).toMatchObject({
      success: false,
      killed: true,
      exitCode: 124,
      stdout: 'started\n',
      error: 'the code did not end within 1 s and was stopped',
    });
    expect(Date.now() - started).toBeLessThan(6_000);
    const big = await sdk.interact(id, {
      code: `for (let i = 0; i < 20000; i++) console.log('line', i, 'x'.repeat(20));`,
    });
    expect([big.truncated, big.stdout?.length, big.exitCode]).toEqual([true, 64 * 1024, 0]);
    const thrown = await sdk.interact(id, { code: `throw new TypeError('bad')` });
    expect([thrown.success, thrown.exitCode, thrown.error]).toEqual([
      false,
      1,
      expect.stringMatching(/^TypeError: bad/),
    ]);
    await sdk.stopInteraction(id);
  });

  it("answers 400 for python, bash and prompts, and 404 for another account's scrape or an unknown one", async () => {
    const { raw, scrape } = await interactor('interact-bad@example.com');
    const id = await scrape();
    const python = await raw.post(`/v2/scrape/${id}/interact`, { code: 'print(1)', language: 'python' });
    expect([python.status, Object.keys(python.body.details)]).toEqual([400, ['language']]);
    expect(python.body.error).toMatch(/only node code is run/);
    const prompt = await raw.post(`/v2/scrape/${id}/interact`, { prompt: 'click the button' });
    expect([prompt.status, Object.keys(prompt.body.details)]).toEqual([400, ['prompt']]);
    const none = await raw.post(`/v2/scrape/${id}/interact`, {});
    expect([none.status, Object.keys(none.body.details)]).toEqual([400, ['code']]);
    const long = await raw.post(`/v2/scrape/${id}/interact`, { code: '1', timeout: 301 });
    expect([long.status, Object.keys(long.body.details)]).toEqual([400, ['timeout']]);

    const other = await interactor('interact-other@example.com');
    const theirs = await other.raw.post(`/v2/scrape/${id}/interact`, { code: CLICK });
    expect([theirs.status, theirs.body.success]).toEqual([404, false]);
    expect((await other.raw.delete(`/v2/scrape/${id}/interact`)).status).toBe(404);
    const unknown = await raw.post('/v2/scrape/run_00000000000000000000000000/interact', { code: CLICK });
    expect(unknown.status).toBe(404);
    // v1 has no interact.
    expect((await raw.post(`/v1/scrape/${id}/interact`, { code: CLICK })).status).toBe(404);
  });

  it(`opens at most ${PER_USER} sessions per account (INTERACT_SESSIONS_PER_USER's default)`, async () => {
    const { sdk, raw, scrape } = await interactor('interact-many@example.com');
    const ids = [await scrape(), await scrape(), await scrape()];
    for (const id of ids.slice(0, PER_USER))
      expect((await sdk.interact(id, { code: READ })).success).toBe(true);
    const third = await raw.post(`/v2/scrape/${ids[PER_USER]}/interact`, { code: READ });
    expect([third.status, third.body.error]).toEqual([
      429,
      expect.stringMatching(/2 interact sessions open/),
    ]);
    await sdk.stopInteraction(ids[0]!);
    expect((await sdk.interact(ids[PER_USER]!, { code: READ })).success).toBe(true);
    for (const id of ids.slice(1)) await sdk.stopInteraction(id);
  });

  it('answers 410 once when the worker serving the session died, then opens a new session', async () => {
    const { sdk, raw, scrape } = await interactor('interact-dead@example.com');
    const id = await scrape();
    expect((await sdk.interact(id, { code: CLICK })).result).toBe('1');
    await worker.kill('SIGKILL');
    worker = startApp('scraper-worker', scraperWorkerEnv(tdb.url, prefix.prefix));
    await worker.waitForLog((l) => l.msg === 'scraper worker started');
    let gone: request.Response | undefined;
    await until(
      async () => {
        gone = await raw.post(`/v2/scrape/${id}/interact`, { code: READ });
        return gone.status !== 200;
      },
      30_000,
      500,
    );
    expect([gone?.status, gone?.body.error]).toEqual([
      410,
      expect.stringMatching(/the worker serving it stopped/),
    ]);
    const fresh = await sdk.interact(id, { code: READ });
    expect(fresh.stdout).toBe('count is 0\n');
    await sdk.stopInteraction(id);
  }, 60_000);
});
