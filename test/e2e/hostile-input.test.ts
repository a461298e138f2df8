// docs/api.md §8, §9, §16: no request input gets a 5xx or stops a real API process, and the
// worst input of each kind leaves it answering other users. A real API and scraper worker run on
// a local site; every route of the OpenAPI description, and every Firecrawl-compatible route, is
// sent oversized, deeply nested and wrongly typed bodies, query strings and path parameters.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { KeysService } from '@scrapejobs/domain';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { REDIS_URL, testPrefix } from '../support/redis.ts';
import { startSearxng } from '../support/searxng.ts';
import { listPage, startSite } from '../support/site.ts';

let tdb: TestDatabase;
let api: Proc;
let worker: Proc;
let base: string;
let token: string;
let site: Awaited<ReturnType<typeof startSite>>;
let searxng: Awaited<ReturnType<typeof startSearxng>>;
const prefix = testPrefix();

/** Sitemap URLs the site lists: twice the 50,000 a sitemap may hold. */
const SITEMAP_URLS = 100_000;
const PER_SITEMAP = 50_000;

/** `{"a": {"a": … 1}}`, `levels` objects deep, as JSON text (an object literal would recurse). */
const deepObjectJson = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
const deepObject = (levels: number) => JSON.parse(deepObjectJson(levels)) as Record<string, unknown>;

function serveSite(req: IncomingMessage, res: ServerResponse): boolean {
  const path = new URL(req.url ?? '/', 'http://site').pathname;
  const sitemap = /^\/sitemap-(\d+)\.xml$/.exec(path);
  if (path === '/sitemap.xml') {
    res.setHeader('Content-Type', 'application/xml');
    const children = Array.from(
      { length: SITEMAP_URLS / PER_SITEMAP },
      (_, i) => `<sitemap><loc>${site.url}/sitemap-${i}.xml</loc></sitemap>`,
    );
    res.end(
      `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${children.join('')}</sitemapindex>`,
    );
    return true;
  }
  if (sitemap) {
    res.setHeader('Content-Type', 'application/xml');
    res.write('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
    // Each sitemap's pages are numbered from 0: whichever is read first, its page-99 is in the map.
    for (let i = 0; i < PER_SITEMAP; i++)
      res.write(`<url><loc>${site.url}/docs/${sitemap[1]}/page-${i}</loc></url>`);
    res.end('</urlset>');
    return true;
  }
  if (path === '/deep-ld') {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    const ld = `<script type="application/ld+json">${deepObjectJson(10_000)}</script>`;
    res.end(listPage('Deep', 2).replace('</head>', `${ld}</head>`));
    return true;
  }
  return false;
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  site = await startSite(serveSite);
  searxng = await startSearxng({
    kind: 'results',
    results: () => [{ url: `${site.url}/page/1`, title: 'Page 1', content: 'The first page' }],
  });
  const env = { DATABASE_URL: tdb.url, REDIS_URL, QUEUE_PREFIX: prefix.prefix };
  api = startApp('api', {
    ...env,
    PORT: '0',
    API_RATE_LIMIT_PER_MINUTE: '1000000',
    SEARXNG_ENDPOINT: searxng.endpoint,
  });
  worker = startApp('scraper-worker', scraperWorkerEnv(tdb.url, prefix.prefix));
  base = `http://127.0.0.1:${(await api.waitForLog((l) => l.msg === 'api listening')).port}`;
  await worker.waitForLog((l) => l.msg === 'scraper worker started');
  ({ token } = await new KeysService(tdb.db).create({
    email: 'mallory@example.com',
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write', 'webhooks:read', 'webhooks:write'],
    name: 'm',
  }));
});

afterAll(async () => {
  await worker.kill('SIGKILL');
  await api.kill('SIGKILL');
  await site.close();
  await searxng.close();
  await tdb.drop();
  await prefix.cleanup();
});

interface Answer {
  status: number;
  body: unknown;
}

async function send(method: string, path: string, body?: string): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method: method.toUpperCase(),
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed };
}

const post = (path: string, body: unknown) => send('post', path, JSON.stringify(body));
const detailsOf = (answer: Answer) => (answer.body as { details?: Record<string, string> }).details;

/** The API's largest event-loop delay since the last scrape of /metrics (prom-client resets it). */
async function eventLoopMaxLagMs(): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const match = /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? (\S+)$/m.exec(text);
  if (!match) throw new Error('no nodejs_eventloop_lag_max_seconds in /metrics');
  return Number(match[1]) * 1000;
}

/** The watches of /health running: a test that fails before it stops its own has it stopped after it. */
const watches = new Set<() => Promise<unknown>>();
afterEach(async () => {
  await Promise.all([...watches].map((stop) => stop()));
});

/** Asks /health every 20 ms until stopped; the answers that were not 200 are kept. */
function watchHealth() {
  const failures: unknown[] = [];
  let answers = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const res = await fetch(`${base}/health`).catch((err: unknown) => err);
      if (res instanceof Response && res.status === 200) answers++;
      else failures.push(res instanceof Response ? res.status : String(res));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const stop = async () => {
    stopped = true;
    watches.delete(stop);
    await loop;
    return { answers, failures };
  };
  watches.add(stop);
  return { stop };
}

describe('the worst input of each kind', () => {
  it('is refused at its field path or served, while the API keeps answering others with its event loop free', async () => {
    await eventLoopMaxLagMs();
    const health = watchHealth();

    for (const milliseconds of [1e10, 1e12]) {
      const answer = await post('/v2/scrape', {
        url: `${site.url}/page/1`,
        actions: [{ type: 'wait', milliseconds }],
      });
      expect(answer.status).toBe(400);
      expect(detailsOf(answer)).toEqual({ 'actions[0].milliseconds': 'must be at most 60000' });
    }

    const metadata = deepObject(3_000);
    for (const path of ['/v1/crawl', '/v2/crawl', '/v1/batch/scrape', '/v2/batch/scrape']) {
      const target = path.endsWith('crawl')
        ? { url: `${site.url}/page/1` }
        : { urls: [`${site.url}/page/1`] };
      const answer = await post(path, { ...target, webhook: { url: 'https://hooks.example/c', metadata } });
      expect(answer.status).toBe(400);
      expect(detailsOf(answer)).toEqual({
        'webhook.metadata': 'must not nest more than 32 levels of objects and arrays',
      });
    }

    // A page whose JSON-LD nests 10,000 deep: stored without it, and its documents stay readable.
    const job = await post('/jobs', {
      name: 'deep',
      source: `${site.url}/deep-ld`,
      formats: ['metadata'],
      rate_limit: 6000,
    });
    const jobId = (job.body as { job_id: string }).job_id;
    const runId = ((await post(`/jobs/${jobId}/run`, {})).body as { run_id: string }).run_id;
    await until(async () => {
      const run = await send('get', `/jobs/${jobId}/runs/${runId}`);
      return (run.body as { status: string }).status !== 'running';
    }, 30_000);
    const documents = await send('get', `/jobs/${jobId}/runs/${runId}/documents`);
    expect(documents.status).toBe(200);
    expect(
      (documents.body as { documents: { truncated: string[]; metadata: { json_ld: unknown[] } }[] })
        .documents,
    ).toEqual([
      expect.objectContaining({
        truncated: ['metadata.json_ld'],
        metadata: expect.objectContaining({ json_ld: [] }),
      }),
    ]);
    const download = await send(
      'get',
      `/jobs/${jobId}/download?content=documents&format=json&run_id=${runId}`,
    );
    expect(download.status).toBe(200);
    expect(download.body).toEqual([expect.objectContaining({ url: `${site.url}/deep-ld` })]);

    // A map of 100,000 sitemap URLs ranked by a 1,000-character search.
    const search = Array.from({ length: 200 }, (_, i) => `word${i}`)
      .join(' ')
      .slice(0, 1000);
    const map = await post('/v2/map', {
      url: site.url,
      search: `page 99 ${search}`.slice(0, 1000),
      limit: 100_000,
    });
    expect(map.status).toBe(200);
    const { links, warning } = map.body as { links: { url: string }[]; warning?: string };
    expect(links.length).toBeGreaterThan(10_000);
    expect(links[0]!.url).toMatch(/\/docs\/\d\/page-99$/);
    expect(warning).toMatch(
      /^The map stopped at \d+ URLs: a map accepts its 100 fetched pages and at most 10000 URLs beyond them\.$/,
    );

    const lag = await eventLoopMaxLagMs();
    const { answers, failures } = await health.stop();
    expect(failures).toEqual([]);
    expect(answers).toBeGreaterThan(10);
    expect(api.child.exitCode).toBeNull();
    expect(lag).toBeLessThan(200);
  });
});

// ---- The walk of every route ----

/** Values put in place of each field: wrong types, out of range, oversized, deeply nested. */
const HOSTILE_VALUES: readonly string[] = [
  'null',
  'true',
  '-1',
  '1e308',
  '1e12',
  '0.5',
  JSON.stringify('x'.repeat(100_000)),
  JSON.stringify('\u202e'),
  JSON.stringify('\ud800'),
  '[]',
  '{}',
  deepObjectJson(5_000),
  `[${Array(50_000).fill('0').join(',')}]`,
  '{"__proto__": {"admin": true}, "constructor": {"prototype": {}}}',
];

/** Whole bodies sent to every route that takes one. */
const HOSTILE_BODIES: readonly string[] = [
  `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
  deepObjectJson(100_000),
  '"a string"',
  '12',
  '{"unterminated": ',
  JSON.stringify({ padding: 'x'.repeat(1024 * 1024) }),
];

/** Every path to a value in `value` (objects and arrays), to `depth` levels. */
function pathsOf(value: unknown, depth = 3, at: (string | number)[] = []): (string | number)[][] {
  if (depth === 0 || typeof value !== 'object' || value === null) return [];
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value);
  return entries.flatMap(([key, v]) => [[...at, key], ...pathsOf(v, depth - 1, [...at, key])]);
}

/** `body` as JSON text with the value at `path` replaced by the JSON text `replacement`. */
function replaced(body: unknown, path: readonly (string | number)[], replacement: string): string {
  const marker = 'hostile value 7f3a';
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path.at(-1)!] = marker;
  return JSON.stringify(copy).replace(JSON.stringify(marker), () => replacement);
}

const QUERY_VALUES = ['-1', '1e308', 'x'.repeat(5_000), '%00', '[]', '', 'true'];

async function inTurns<T>(items: readonly T[], run: (item: T) => Promise<void>, concurrency = 6) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await run(items[next++]!);
    }),
  );
}

describe('every route, walked with hostile input', () => {
  it('answers no 5xx and keeps the process up, for the native and the Firecrawl-compatible routes', async () => {
    const job = {
      name: 'walk',
      source: `${site.url}/page/[1-2]`,
      queries: [{ name: 'title', type: 'css', query: 'h1' }],
      formats: ['markdown', 'links'],
      content: { only_main_content: true, include_tags: ['main'], exclude_tags: ['nav'] },
      rate_limit: 600,
      scheduling: { days: [1], hours: [3], minutes: [5], timezone: 'UTC' },
      render_config: null,
      crawl: {
        follow: [{ type: 'css', query: 'a' }],
        max_depth: 1,
        max_pages: 3,
        include: ['/page/'],
        exclude: [],
      },
      change_tracking: { key: ['url'] },
      request: { headers: { 'X-Test': 'yes' }, cookies: [{ name: 'a', value: 'b', domain: '127.0.0.1' }] },
      retention_days: 3,
      refetch: 'always',
    };
    const created = await post('/jobs', job);
    expect(created.status).toBe(201);
    const jobId = (created.body as { job_id: string }).job_id;
    const runId = ((await post(`/jobs/${jobId}/run`, {})).body as { run_id: string }).run_id;
    const hook = await post('/webhooks', {
      url: 'https://93.184.215.14/hook',
      events: ['job.failed'],
      secret: 'whsec-0123456789abcdef',
    });
    expect(hook.status).toBe(201);
    const webhookId = (hook.body as { webhook_id: string }).webhook_id;
    const ids: Record<string, string> = {
      id: jobId,
      run_id: runId,
      n: '1',
      delivery_id: 'dlv_00000000000000000000000000',
    };

    const openApi = (await (await fetch(`${base}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { parameters: { name: string; in: string }[]; requestBody?: unknown }>
      >;
    };
    /** A valid body of each native route that takes one: the walk starts from it. */
    const bodies: Record<string, unknown> = {
      'post /jobs': job,
      'put /jobs/{id}': job,
      'patch /jobs/{id}': { name: 'renamed', crawl: job.crawl },
      'post /webhooks': {
        url: 'https://93.184.215.14/hook',
        events: ['job.failed'],
        secret: 'whsec-0123456789abcdef',
      },
      'post /search': { query: 'page', limit: 2 },
    };
    const requests: { method: string; path: string; body?: string }[] = [];
    for (const [template, operations] of Object.entries(openApi.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        // DELETE of the walk's own job or webhook would end the walk early: it gets an unknown id.
        const fill = (name: string) =>
          method === 'delete'
            ? 'job_00000000000000000000000000'
            : name === 'id' && template.startsWith('/webhooks')
              ? webhookId
              : ids[name]!;
        const path = template.replace(/\{(\w+)\}/g, (_, name: string) => fill(name));
        const queries = operation.parameters.filter((p) => p.in === 'query').map((p) => p.name);
        for (const name of queries)
          for (const value of QUERY_VALUES)
            requests.push({ method, path: `${path}?${name}=${encodeURIComponent(value)}` });
        for (const name of operation.parameters.filter((p) => p.in === 'path').map((p) => p.name))
          for (const value of ['x'.repeat(3_000), '%E2%80%AE..%2F..', '%00'])
            requests.push({
              method,
              path: template.replace(`{${name}}`, value).replace(/\{(\w+)\}/g, (_, n: string) => fill(n)),
            });
        if (method === 'get' || method === 'delete') continue;
        for (const body of HOSTILE_BODIES) requests.push({ method, path, body });
        if (!operation.requestBody) continue;
        const valid = bodies[`${method} ${template}`];
        expect({ route: `${method} ${template}`, hasBase: valid !== undefined }).toEqual({
          route: `${method} ${template}`,
          hasBase: true,
        });
        for (const at of pathsOf(valid))
          for (const value of HOSTILE_VALUES)
            requests.push({ method, path, body: replaced(valid, at, value) });
      }
    }

    // The Firecrawl-compatible routes (docs/api.md §18), in v1 and v2, from valid bodies that end fast.
    const page = `${site.url}/page/1`;
    const scrapeOptions = {
      formats: ['markdown', 'links'],
      onlyMainContent: true,
      includeTags: ['main'],
      excludeTags: ['nav'],
      headers: { 'X-Test': 'yes' },
      waitFor: 0,
      timeout: 5_000,
      location: { country: 'US', languages: ['en'] },
    };
    const webhook = { url: 'https://93.184.215.14/c', metadata: { a: [1, { b: 2 }] } };
    const firecrawl: Record<string, unknown> = {
      '/scrape': { url: page, ...scrapeOptions },
      '/crawl': {
        url: page,
        limit: 2,
        sitemap: 'skip',
        includePaths: ['/page/.*'],
        webhook,
        scrapeOptions: { formats: ['markdown'] },
      },
      '/batch/scrape': { urls: [page], formats: ['markdown'], webhook },
      '/map': { url: page, search: 'page', limit: 10, sitemap: 'skip', timeout: 5_000 },
      '/search': { query: 'page', limit: 2 },
    };
    // Actions render in Chromium when valid: walked once, in v2.
    const actions = {
      url: page,
      timeout: 5_000,
      actions: [
        { type: 'wait', milliseconds: 10 },
        { type: 'click', selector: 'a' },
      ],
    };
    for (const at of pathsOf(actions))
      for (const value of HOSTILE_VALUES)
        requests.push({ method: 'post', path: '/v2/scrape', body: replaced(actions, at, value) });
    for (const version of ['/v1', '/v2'])
      for (const [route, valid] of Object.entries(firecrawl)) {
        for (const body of HOSTILE_BODIES)
          requests.push({ method: 'post', path: `${version}${route}`, body });
        for (const at of pathsOf(valid))
          for (const value of HOSTILE_VALUES)
            requests.push({ method: 'post', path: `${version}${route}`, body: replaced(valid, at, value) });
        for (const id of ['x'.repeat(3_000), '..%2F..', '%00', '00000000-0000-0000-0000-000000000000'])
          for (const kind of ['/crawl', '/batch/scrape']) {
            requests.push({ method: 'get', path: `${version}${kind}/${id}` });
            requests.push({ method: 'get', path: `${version}${kind}/${id}/errors` });
            requests.push({ method: 'delete', path: `${version}${kind}/${id}` });
          }
      }

    const answers: { request: string; status: number; answer?: string }[] = [];
    await inTurns(requests, async ({ method, path, body }) => {
      const answer = await send(method, path, body);
      answers.push({
        request: `${method} ${path.slice(0, 120)} ${body?.slice(0, 200) ?? ''}`,
        status: answer.status,
        ...(answer.status >= 500 && { answer: JSON.stringify(answer.body).slice(0, 300) }),
      });
    });
    expect(answers.length).toBe(requests.length);
    // A 5xx comes with what the API logged of its errors. A Firecrawl scrape whose page could not be
    // fetched answers a 500 with a SCRAPE_ code, as Firecrawl does (§26): the site's, not the API's.
    const fives = answers.filter((a) => a.status >= 500 && !/"code":"SCRAPE_/.test(a.answer ?? ''));
    const errors = fives.length > 0 ? api.logs.filter((l) => l.level === 'error').slice(0, 3) : [];
    expect({ fives, errors }).toEqual({ fives: [], errors: [] });
    expect(api.child.exitCode).toBeNull();
    expect((await fetch(`${base}/health`)).status).toBe(200);
  }, 180_000);
});
