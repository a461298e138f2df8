import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Firecrawl from '@mendable/firecrawl-js';
import { TokenLedger } from '@scrapejobs/llm';
import { Redis } from 'ioredis';
import request from 'supertest';
import { buildTestApi } from '../support/api.ts';
import { type ChatServer, carefulModel, startChatServer } from '../support/chat-server.ts';
import { client } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { firecrawlMcp } from '../support/mcp.ts';
import { type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { REDIS_URL, testPrefix } from '../support/redis.ts';
import { startSearxng } from '../support/searxng.ts';
import { startSite } from '../support/site.ts';

// A language model and a search engine named by the operator (docs/api.md §24, §25), end to end:
// the real API (listening), a real scraper worker, a local shop site, a stand-in chat-completions
// server and a stand-in SearXNG; driven natively, by Firecrawl's SDK and by its MCP server.

const TOKENS_PER_DAY = 5_000;
const SCHEMA = {
  type: 'object',
  properties: { title: { type: 'string' }, price: { type: 'number' } },
  required: ['title', 'price'],
};

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let bare: ReturnType<typeof buildTestApi>;
/** The service with a search engine that fails. */
let failing: ReturnType<typeof buildTestApi>;
let down: Awaited<ReturnType<typeof startSearxng>>;
let server: Server;
let base: string;
let worker: Proc;
let site: Awaited<ReturnType<typeof startSite>>;
let model: ChatServer;
let searxng: Awaited<ReturnType<typeof startSearxng>>;
let token: string;
const prefix = testPrefix();
const redis = new Redis(REDIS_URL);
/** Price of each product page; tests change them between runs. */
const prices: Record<string, number> = { '1': 25, '2': 40, '3': 10, '4': 12, '9': 1 };

const productPage = (
  n: string,
) => `<!doctype html><html lang="en"><head><title>Product ${n}</title></head><body>
<nav><a href="/">Shop</a></nav><main><article><h1>Kettle ${n}</h1>
<p>Title: ${n === '9' ? 'Broken' : 'Kettle'} ${n}</p><p>Price: ${prices[n]}</p>
<p>A kettle that boils water quickly. It keeps the water warm for an hour after it boils.</p>
</article></main></body></html>`;

beforeAll(async () => {
  tdb = await createTestDatabase();
  // A careful model, except on pages it cannot read: there it keeps answering the wrong type.
  model = await startChatServer((request, nth) =>
    request.page.includes('Broken') && !request.summary
      ? { content: '{"title": 42}' }
      : carefulModel(request, nth),
  );
  site = await startSite((req, res) => {
    const n = /^\/product\/(\d)$/.exec(new URL(req.url ?? '/', 'http://site').pathname)?.[1];
    if (!n || prices[n] === undefined) return false;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(productPage(n));
    return true;
  });
  searxng = await startSearxng({
    kind: 'results',
    results: () =>
      ['1', '2'].map((n) => ({
        url: `${site.url}/product/${n}`,
        title: `Kettle ${n}`,
        content: `About kettle ${n}`,
      })),
  });
  server = createServer((req, res) => api.app(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const env = { OPENAI_BASE_URL: model.baseUrl, MODEL_NAME: 'stand-in', LLM_TOKENS_PER_DAY: TOKENS_PER_DAY };
  api = buildTestApi({
    db: tdb.db,
    prefix: prefix.prefix,
    publicBaseUrl: base,
    env: { ...env, SEARXNG_ENDPOINT: searxng.endpoint },
  });
  // The same service where the operator named neither a model nor a search engine.
  bare = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  down = await startSearxng({ kind: 'status', status: 500 });
  failing = buildTestApi({ db: tdb.db, prefix: prefix.prefix, env: { SEARXNG_ENDPOINT: down.endpoint } });
  ({ token } = await api.keys.create({
    email: 'shop@example.com',
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write'],
    name: 'k',
  }));
  worker = startApp(
    'scraper-worker',
    scraperWorkerEnv(tdb.url, prefix.prefix, {
      OPENAI_BASE_URL: model.baseUrl,
      MODEL_NAME: 'stand-in',
      LLM_TOKENS_PER_DAY: String(TOKENS_PER_DAY),
    }),
  );
  await worker.waitForLog((l) => l.msg === 'scraper worker started');
});

afterAll(async () => {
  await worker.kill('SIGTERM');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await Promise.all([
    api.close(),
    bare.close(),
    failing.close(),
    down.close(),
    site.close(),
    model.close(),
    searxng.close(),
  ]);
  redis.disconnect();
  await tdb.drop();
  await prefix.cleanup();
});

const c = () => client(api.app, token);

async function runToEnd(jobId: string) {
  const started = await c().post(`/jobs/${jobId}/run`);
  expect(started.status).toBe(202);
  const runId = started.body.run_id as string;
  return until(async () => {
    const run = await c().get(`/jobs/${jobId}/runs/${runId}`);
    return run.body.health ? run.body : null;
  }, 30_000);
}

describe('native extract and summary', () => {
  it('stores one record a page with the schema’s fields, downloads them, tracks their changes and summarises the page', async () => {
    const created = await c().post('/jobs', {
      name: 'kettles',
      source: `${site.url}/product/[1-2]`,
      rate_limit: 6000,
      queries: [],
      formats: ['summary'],
      extract: { schema: SCHEMA, prompt: 'the product' },
      change_tracking: { key: ['title'] },
    });
    expect(created.status).toBe(201);
    expect(created.body.extract).toEqual({ schema: SCHEMA, prompt: 'the product' });
    const jobId = created.body.job_id as string;

    const first = await runToEnd(jobId);
    expect(first).toMatchObject({ status: 'success', results_count: 2, health: { status: 'ok' } });
    // Records come in the order their pages were stored, which two pages may finish in either way.
    const results = await c().get(`/jobs/${jobId}/results`);
    const records = results.body.results.map((r: { data: { title: string } }) => r.data);
    expect(
      records.sort((a: { title: string }, b: { title: string }) => a.title.localeCompare(b.title)),
    ).toEqual([
      { title: 'Kettle 1', price: 25 },
      { title: 'Kettle 2', price: 40 },
    ]);
    const csv = await c().get(`/jobs/${jobId}/download?format=csv`);
    expect(csv.text.split('\r\n')[0]).toBe('url,scraped_at,title,price');
    expect(csv.text).toContain(',Kettle 2,40\r\n');
    const documents = await c().get(`/jobs/${jobId}/runs/${first.run_id}/documents`);
    const firstPage = documents.body.documents.find(
      (d: { url: string }) => d.url === `${site.url}/product/1`,
    );
    expect(firstPage).toMatchObject({
      summary: 'Summary: Kettle 1\n\nTitle: Kettle 1\n\nPrice: 25\n\nA kettle that boils water quickly.',
      json: { title: 'Kettle 1', price: 25 },
    });
    // The page is data: the model got no tools, and its schema as the response format.
    const asked = model.requests.filter((r) => r.page.includes('Kettle 1') && !r.summary);
    expect(asked[0]).toMatchObject({ mode: 'json_schema', schema: SCHEMA });
    expect(asked[0]!.body.tools).toBeUndefined();

    prices['2'] = 45;
    const second = await runToEnd(jobId);
    expect(second.changes).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 1 });
    const changes = await c().get(`/jobs/${jobId}/runs/${second.run_id}/changes`);
    expect(changes.body.changes).toEqual([
      {
        type: 'changed',
        key: { title: 'Kettle 2' },
        data: { url: `${site.url}/product/2`, title: 'Kettle 2', price: 45 },
        previous: { url: `${site.url}/product/2`, title: 'Kettle 2', price: 40 },
        changed_fields: ['price'],
      },
    ]);
  });

  it('keeps the page with a warning when the model’s answer stays invalid, and fails it with LLM_BUDGET past the day’s tokens', async () => {
    const broken = await c().post('/jobs', {
      name: 'broken',
      source: `${site.url}/product/9`,
      extract: { schema: SCHEMA },
    });
    const brokenRun = await runToEnd(broken.body.job_id);
    expect(brokenRun).toMatchObject({ status: 'success', results_count: 0 });
    const item = await c().get(`/jobs/${broken.body.job_id}/runs/${brokenRun.run_id}/urls`);
    expect(item.body.urls[0]).toMatchObject({
      status: 'success',
      error: null,
      warning: { code: 'LLM_INVALID_ANSWER', message: expect.stringMatching(/\/title must be string/) },
    });

    const { token: spent } = await api.keys.create({
      email: 'spent@example.com',
      mode: 'test',
      scopes: ['jobs:read', 'jobs:write'],
      name: 'k',
    });
    const spender = client(api.app, spent);
    const job = await spender.post('/jobs', {
      name: 'over budget',
      source: `${site.url}/product/1`,
      extract: { prompt: 'the colour' },
    });
    expect(job.status).toBe(201);
    const userId = (await tdb.db.job.findUniqueOrThrow({ where: { id: job.body.job_id } })).userId;
    await new TokenLedger(redis, prefix.prefix, TOKENS_PER_DAY).spend(userId, TOKENS_PER_DAY);
    const started = await spender.post(`/jobs/${job.body.job_id}/run`);
    const run = await until(async () => {
      const r = await spender.get(`/jobs/${job.body.job_id}/runs/${started.body.run_id}`);
      return r.body.status === 'running' ? null : r.body;
    }, 30_000);
    expect(run).toMatchObject({ status: 'failed', error: { code: 'LLM_BUDGET' } });
    const urls = await spender.get(`/jobs/${job.body.job_id}/runs/${started.body.run_id}/urls`);
    expect(urls.body.urls[0].error.message).toMatch(/LLM_TOKENS_PER_DAY/);
  });

  it('is a 400 naming the field, saying no language model is configured, where the operator named none', async () => {
    const res = await client(bare.app, token).post('/jobs', {
      name: 'no model',
      source: `${site.url}/product/1`,
      formats: ['markdown', 'summary'],
      extract: { schema: SCHEMA },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({
      extract: expect.stringMatching(/^no language model is configured: .*OPENAI_BASE_URL/),
      'formats[1]': expect.stringMatching(/^no language model is configured/),
    });
  });
});

describe('Firecrawl formats json and summary, extract and token usage', () => {
  it('answers the json object and summary of a scrape, an extraction over pages, and the tokens used today', async () => {
    const sdk = new Firecrawl({ apiKey: token, apiUrl: base });
    const doc = await sdk.scrape(`${site.url}/product/1`, {
      formats: ['markdown', { type: 'json', schema: SCHEMA }, 'summary'],
    });
    expect(doc.json).toEqual({ title: 'Kettle 1', price: 25 });
    expect(doc.summary).toMatch(/^Summary: Kettle 1/);
    expect(doc.markdown).toContain('Price: 25');

    const extracted = await sdk.extract({
      urls: [`${site.url}/product/1`, `${site.url}/product/2`],
      schema: { type: 'object', properties: { title: { type: 'string' } } },
      pollInterval: 0.2,
    } as Parameters<typeof sdk.extract>[0]);
    expect(extracted).toMatchObject({ success: true, status: 'completed', data: { title: 'Kettle 1' } });

    const usage = await sdk.getTokenUsage();
    expect(usage.planTokens).toBe(TOKENS_PER_DAY);
    expect(usage.remainingTokens).toBeLessThan(TOKENS_PER_DAY);

    const refused = await request(bare.app)
      .post('/v2/scrape')
      .set('Authorization', `Bearer ${token}`)
      .send({ url: `${site.url}/product/1`, formats: ['markdown', { type: 'json', prompt: 'the price' }] });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      success: false,
      details: { 'formats[1]': expect.stringMatching(/^no language model is configured/) },
    });
  });
});

describe('search', () => {
  it('answers results through the SDK, scrapes them when asked, and answers v1 as a flat list', async () => {
    const sdk = new Firecrawl({ apiKey: token, apiUrl: base });
    const plain = await sdk.search('kettle', { limit: 2 });
    expect(plain.web).toEqual([
      { url: `${site.url}/product/1`, title: 'Kettle 1', description: 'About kettle 1', position: 1 },
      { url: `${site.url}/product/2`, title: 'Kettle 2', description: 'About kettle 2', position: 2 },
    ]);
    const scraped = await sdk.search('kettle', { limit: 1, scrapeOptions: { formats: ['markdown'] } });
    expect(scraped.web?.[0]).toMatchObject({ url: `${site.url}/product/1`, title: 'Kettle 1' });
    expect((scraped.web?.[0] as { markdown?: string } | undefined)?.markdown).toContain('Price: 25');
    expect(searxng.requests.at(-1)!.get('q')).toBe('kettle');

    const v1 = await request(api.app)
      .post('/v1/search')
      .set('Authorization', `Bearer ${token}`)
      .send({ query: 'kettle', limit: 1 });
    expect(v1.body).toEqual({
      success: true,
      data: [{ url: `${site.url}/product/1`, title: 'Kettle 1', description: 'About kettle 1' }],
    });

    const native = await c().post('/search', { query: 'kettle', limit: 2, formats: ['markdown'] });
    expect(native.status).toBe(200);
    expect(native.body.results[1]).toMatchObject({ url: `${site.url}/product/2`, error: null });
    expect(native.body.results[1].document.markdown).toContain('Price: 45');
  });

  it('is a 501 naming SEARXNG_ENDPOINT without a search engine, and a 502 when the engine fails', async () => {
    const unset = await client(bare.app, token).post('/search', { query: 'kettle' });
    expect(unset.status).toBe(501);
    expect(unset.body.message).toMatch(/SEARXNG_ENDPOINT/);
    const v2 = await request(bare.app)
      .post('/v2/search')
      .set('Authorization', `Bearer ${token}`)
      .send({ query: 'x' });
    expect(v2.status).toBe(501);
    expect(v2.body).toMatchObject({ success: false, error: expect.stringMatching(/SEARXNG_ENDPOINT/) });

    const res = await client(failing.app, token).post('/search', { query: 'kettle' });
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({
      error: 'bad_gateway',
      message: 'Search failed: the search engine answered 500.',
    });
  });
});

describe("Firecrawl's MCP server", () => {
  it('gets the object of firecrawl_scrape with formats json, and results from firecrawl_search', async () => {
    const mcp = await firecrawlMcp(base, token);
    try {
      const scraped = await mcp.callTool({
        name: 'firecrawl_scrape',
        arguments: { url: `${site.url}/product/1`, formats: ['json'], jsonOptions: { schema: SCHEMA } },
      });
      expect(scraped.isError).toBeFalsy();
      expect(scraped.structuredContent).toMatchObject({ json: { title: 'Kettle 1', price: 25 } });

      const searched = await mcp.callTool({
        name: 'firecrawl_search',
        arguments: { query: 'kettle', limit: 2 },
      });
      expect(searched.isError).toBeFalsy();
      const web = (searched.structuredContent as { data?: { web?: { url: string }[] } }).data?.web ?? [];
      expect(web.map((r) => r.url)).toEqual([`${site.url}/product/1`, `${site.url}/product/2`]);
    } finally {
      await mcp.close();
    }
  });
});

interface Tracking {
  previousScrapeAt: string | null;
  changeStatus: string;
  diff?: { text: string; json: { files: { chunks: { changes: unknown[] }[] }[] } };
  json?: Record<string, unknown>;
}

describe('Firecrawl changeTracking', () => {
  it('compares each scrape with the account’s previous one of the page and tag: new, changed with its diff and fields, then same', async () => {
    // An account of its own: the tests above spend the first one's tokens of the day.
    const own = await api.keys.create({
      email: 'tracker@example.com',
      mode: 'test',
      scopes: ['jobs:read', 'jobs:write'],
      name: 'k',
    });
    const sdk = new Firecrawl({ apiKey: own.token, apiUrl: base });
    const url = `${site.url}/product/3`;
    const both = {
      type: 'changeTracking' as const,
      modes: ['git-diff' as const, 'json' as const],
      schema: SCHEMA,
    };
    const calls = model.requests.length;
    const first = await sdk.scrape(url, { formats: ['markdown', { ...both, tag: 'prices' }] });
    expect(first.changeTracking).toEqual({
      previousScrapeAt: null,
      changeStatus: 'new',
      visibility: 'visible',
    });
    // Nothing to compare: no model call.
    expect(model.requests.length).toBe(calls);

    prices['3'] = 12;
    const second = await sdk.scrape(url, { formats: ['markdown', { ...both, tag: 'prices' }] });
    const changed = second.changeTracking as unknown as Tracking;
    expect(changed).toMatchObject({
      changeStatus: 'changed',
      visibility: 'visible',
      json: { price: { previous: 10, current: 12 } },
    });
    expect(changed.diff?.text).toContain('-Price: 10\n+Price: 12\n');
    expect(changed.diff?.json.files[0]?.chunks[0]?.changes).toEqual(
      expect.arrayContaining([
        { type: 'del', del: true, ln: expect.any(Number), content: '-Price: 10' },
        { type: 'add', add: true, ln: expect.any(Number), content: '+Price: 12' },
      ]),
    );
    // Both versions extracted with the format's schema.
    const asked = model.requests.slice(calls);
    expect(asked.map((r) => [r.schema, r.page.includes('Price: 10'), r.page.includes('Price: 12')])).toEqual([
      [SCHEMA, true, false],
      [SCHEMA, false, true],
    ]);

    // A batch: each page against its own previous scrape under the tag (git-diff needs no model).
    const batch = await sdk.batchScrape([url, `${site.url}/product/4`], {
      options: { formats: ['markdown', { type: 'changeTracking', modes: ['git-diff'], tag: 'prices' }] },
      pollInterval: 0.2,
    });
    const byUrl = new Map(
      batch.data.map((doc) => [doc.metadata?.sourceURL, doc.changeTracking as unknown as Tracking]),
    );
    const same = byUrl.get(url);
    expect(same).toMatchObject({ changeStatus: 'same', visibility: 'visible' });
    expect(same).not.toHaveProperty('diff');
    expect(Date.parse(same?.previousScrapeAt ?? '')).toBeGreaterThan(
      Date.parse(changed.previousScrapeAt ?? ''),
    );
    expect(byUrl.get(`${site.url}/product/4`)).toEqual({
      previousScrapeAt: null,
      changeStatus: 'new',
      visibility: 'visible',
    });
    // Another tag keeps a history of its own.
    const untagged = await sdk.scrape(url, { formats: ['markdown', 'changeTracking'] });
    expect(untagged.changeTracking).toMatchObject({ previousScrapeAt: null, changeStatus: 'new' });
    expect(model.requests.length).toBe(calls + 2);

    const refused = await request(bare.app)
      .post('/v2/scrape')
      .set('Authorization', `Bearer ${own.token}`)
      .send({ url, formats: ['markdown', { type: 'changeTracking', modes: ['json'], prompt: 'the price' }] });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      success: false,
      details: { 'formats[1]': expect.stringMatching(/^no language model is configured/) },
    });
  });
});
