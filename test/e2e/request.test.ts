import type { IncomingHttpHeaders } from 'node:http';
import { buildTestApi } from '../support/api.ts';
import { client, validJob } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

// Pages behind headers, cookies and logins, fetched and rendered, and screenshots of what was
// rendered (docs/api.md §14), end to end: the real API, a real scraper worker with Chromium, two
// local origins that record what reaches them.

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let alice: ReturnType<typeof client>;
let bob: ReturnType<typeof client>;
let worker: Proc;
const prefix = testPrefix();

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
}
const received: Received[] = [];
let shop: Awaited<ReturnType<typeof startSite>>;
let other: Awaited<ReturnType<typeof startSite>>;

const SECRETS = { key: 'key-3f1a9c', cookie: 'cookie-77d2e0', password: 'pw-5b8e41' };
const basic = `Basic ${Buffer.from(`ada:${SECRETS.password}`).toString('base64')}`;

const page = (body: string) => `<!doctype html><html><body>${body}</body></html>`;

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  const key = async (email: string) =>
    (await api.keys.create({ email, mode: 'test', scopes: ['jobs:read', 'jobs:write'], name: 'k' })).token;
  alice = client(api.app, await key('alice@example.com'));
  bob = client(api.app, await key('bob@example.com'));
  // The other origin records what reaches it, and serves a plain page.
  other = await startSite((req, res) => {
    received.push({ path: `other${req.url}`, headers: req.headers });
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(page('<h1 class="title">elsewhere</h1>'));
    return true;
  });
  // The shop answers its members only: the header, the cookie and the credential must all arrive.
  shop = await startSite((req, res) => {
    received.push({ path: `shop${req.url}`, headers: req.headers });
    const url = new URL(req.url ?? '/', 'http://shop');
    const member =
      req.headers['x-api-key'] === SECRETS.key &&
      req.headers.cookie === `session=${SECRETS.cookie}` &&
      req.headers.authorization === basic;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    if (url.pathname === '/away') {
      res.statusCode = 302;
      res.setHeader('Location', `${other.url}/landing`);
      res.end();
      return true;
    }
    if (url.pathname === '/list') {
      res.statusCode = member ? 200 : 401;
      res.end(page(member ? '<h1 class="title">members only</h1>' : '<h1 class="title">denied</h1>'));
      return true;
    }
    if (url.pathname === '/more') {
      // A "load more" button and a search box, both worked by the page's own script.
      res.end(
        page(`<ul id="items"><li class="title">one</li></ul>
<button id="more" onclick="const li = document.createElement('li'); li.className = 'title'; li.textContent = 'two'; document.getElementById('items').append(li)">More</button>
<input id="q"><div id="found"></div>
<script>document.getElementById('q').addEventListener('keydown', (e) => { if (e.key === 'Enter') { const d = document.createElement('p'); d.className = 'title'; d.textContent = 'searched ' + e.target.value; document.getElementById('found').append(d); } });</script>`),
      );
      return true;
    }
    return false;
  });
  worker = startApp('scraper-worker', scraperWorkerEnv(tdb.url, prefix.prefix, { LOG_LEVEL: 'debug' }));
  await worker.waitForLog((l) => l.msg === 'scraper worker started');
}, 60_000);

afterAll(async () => {
  await worker.kill('SIGTERM');
  await api.close();
  await Promise.all([shop.close(), other.close()]);
  await tdb.drop();
  await prefix.cleanup();
});

const REQUEST = () => ({
  headers: { 'X-Api-Key': SECRETS.key },
  cookies: [{ name: 'session', value: SECRETS.cookie }],
  basic_auth: { username: 'ada', password: SECRETS.password },
  user_agent: 'ShopWatch/2.0',
});

/** Creates a job, runs it to its end, and answers its run and the run's URLs. */
async function run(over: Record<string, unknown>) {
  const created = await alice.post(
    '/jobs',
    validJob({ queries: [{ name: 'title', type: 'css', query: '.title' }], rate_limit: 6000, ...over }),
  );
  expect(created.status).toBe(201);
  const jobId = created.body.job_id as string;
  const started = await alice.post(`/jobs/${jobId}/run`);
  const runId = started.body.run_id as string;
  const ended = await until(async () => {
    const r = await alice.get(`/jobs/${jobId}/runs/${runId}`);
    return r.body.status !== 'running' ? r.body : null;
  }, 60_000);
  const urls = (await alice.get(`/jobs/${jobId}/runs/${runId}/urls`)).body.urls;
  const results = (await alice.get(`/jobs/${jobId}/results?run_id=${runId}`)).body.results;
  return { jobId, runId, run: ended, urls, results };
}

const arrivedAt = (prefixPath: string) => received.filter((r) => r.path.startsWith(prefixPath));

describe.each([
  ['fetched', null],
  ['rendered', { enabled: true }],
])('a job whose pages are %s', (_, renderConfig) => {
  it('sends each header, cookie and credential to the source, and none after a redirect to another origin', async () => {
    received.length = 0;
    const { results, run: ended } = await run({
      source: `${shop.url}/{list,away}`,
      request: REQUEST(),
      render_config: renderConfig,
    });
    expect(ended.status).toBe('success');
    expect(results.map((r: { data: { title: string } }) => r.data.title).sort()).toEqual([
      'elsewhere',
      'members only',
    ]);
    const list = arrivedAt('shop/list')[0]!.headers;
    expect(list).toEqual(
      expect.objectContaining({
        'x-api-key': SECRETS.key,
        cookie: `session=${SECRETS.cookie}`,
        authorization: basic,
        'user-agent': 'ShopWatch/2.0',
      }),
    );
    const landing = arrivedAt('other/landing');
    expect(landing.length).toBeGreaterThan(0);
    for (const { headers } of landing) {
      expect(headers['x-api-key']).toBeUndefined();
      expect(headers.cookie).toBeUndefined();
      expect(headers.authorization).toBeUndefined();
    }
    // No secret in any log line of the worker.
    const logs = JSON.stringify(worker.logs);
    for (const secret of Object.values(SECRETS)) expect(logs).not.toContain(secret);
  });
});

describe('render actions and screenshots', () => {
  it('clicks, types and presses before extraction, and keeps a PNG of the page for its owner', async () => {
    const {
      run: ended,
      results,
      urls,
      jobId,
    } = await run({
      source: `${shop.url}/more`,
      render_config: {
        enabled: true,
        actions: [
          { type: 'click', selector: '#more' },
          { type: 'type', selector: '#q', text: 'shoes' },
          { type: 'press', key: 'Enter' },
          { type: 'wait_for', selector: '#found p' },
        ],
        screenshot: true,
      },
    });
    expect(ended.status).toBe('success');
    expect(results.map((r: { data: { title: string } }) => r.data.title)).toEqual([
      'one',
      'two',
      'searched shoes',
    ]);
    const shot = urls[0].screenshot_url as string;
    // The API's PUBLIC_BASE_URL, then the screenshot's path.
    expect(shot).toMatch(new RegExp(`^https?://[^/]+/jobs/${jobId}/runs/run_\\w+/screenshots/0$`));
    const path = new URL(shot).pathname;
    const png = await alice.get(path).buffer(true);
    expect(png.status).toBe(200);
    expect(png.headers['content-type']).toBe('image/png');
    expect((png.body as Buffer).subarray(0, 8)).toEqual(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
    expect((await bob.get(path)).status).toBe(404);
    expect((await alice.get(path.replace(/0$/, '1'))).status).toBe(404);
  });

  it('fails a URL whose step fails with RENDER_ERROR naming the step', async () => {
    const { run: ended, urls } = await run({
      source: `${shop.url}/more`,
      render_config: {
        enabled: true,
        actions: [
          { type: 'click', selector: '#more' },
          { type: 'wait_for', selector: '#never', timeout_ms: 500 },
        ],
      },
    });
    expect(ended.status).toBe('failed');
    expect(urls[0].error).toEqual({ code: 'RENDER_ERROR', message: expect.stringMatching(/action 1\b/) });
    expect(urls[0].screenshot_url).toBeNull();
  });
});
