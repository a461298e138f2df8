import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Firecrawl from '@mendable/firecrawl-js';
import request from 'supertest';
import { buildTestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

// Firecrawl's interact sessions (docs/api.md §18) through its own SDK and raw requests, against
// the real API and a real scraper worker, on a local site whose page changes when its button is
// clicked.

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let server: Server;
let base: string;
let worker: Proc;
let site: Awaited<ReturnType<typeof startSite>>;
const prefix = testPrefix();
/** INTERACT_SESSIONS_PER_USER of this API. */
const PER_USER = 2;

const COUNTER = `<!doctype html><html><head><title>Counter</title></head><body>
<p id="count">0</p><button id="more" onclick="document.getElementById('count').textContent = String(Number(document.getElementById('count').textContent) + 1)">more</button>
<a id="next" href="/second">second</a></body></html>`;

const startWorker = async () => {
  const started = startApp('scraper-worker', scraperWorkerEnv(tdb.url, prefix.prefix, { METRICS_PORT: '0' }));
  await started.waitForLog((l) => l.msg === 'scraper worker started');
  return started;
};

beforeAll(async () => {
  tdb = await createTestDatabase();
  server = createServer((req, res) => api.app(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api = buildTestApi({
    db: tdb.db,
    prefix: prefix.prefix,
    publicBaseUrl: base,
    env: { INTERACT_SESSIONS_PER_USER: PER_USER },
  });
  site = await startSite((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    if (path !== '/counter' && path !== '/second') return false;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(path === '/counter' ? COUNTER : '<!doctype html><title>Second</title><h1>Second page</h1>');
    return true;
  });
  worker = await startWorker();
}, 60_000);

afterAll(async () => {
  if (process.env.SHOW_WORKER_LOGS)
    console.log(
      JSON.stringify(
        worker.logs.filter((l) => JSON.stringify(l).includes('nteract')),
        null,
        1,
      ),
    );
  await worker.kill('SIGTERM');
  await new Promise((resolve) => server.close(resolve));
  await api.close();
  await site.close();
  await tdb.drop();
  await prefix.cleanup();
});

async function account(email: string) {
  const { token } = await api.keys.create({
    email,
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write'],
    name: 'k',
  });
  const sdk = new Firecrawl({ apiKey: token, apiUrl: base });
  const raw = {
    post: (path: string, body: object) =>
      request(base).post(path).set('Authorization', `Bearer ${token}`).send(body),
    delete: (path: string) => request(base).delete(path).set('Authorization', `Bearer ${token}`),
  };
  const scrape = async () => {
    const doc = await sdk.scrape(`${site.url}/counter`, { formats: ['markdown'], maxAge: 0 });
    return doc.metadata?.scrapeId as string;
  };
  return { sdk, raw, scrape };
}

const CLICK = `await page.click('#more'); return page.innerText('#count');`;
const READ = `console.log('count is', await page.innerText('#count'));`;

describe('interact sessions', () => {
  it("keeps the page's state between calls until stopped; after a stop the next call opens a fresh page", async () => {
    const { sdk, scrape } = await account('interact@example.com');
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
    const { sdk, raw, scrape } = await account('interact-nav@example.com');
    const id = await scrape();
    const nav = await sdk.interact(id, { code: `await page.click('#next');` });
    expect([nav.success, nav.exitCode]).toEqual([true, 0]);
    expect((await sdk.interact(id, { code: 'return page.title();' })).result).toBe('Second');

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
    const { raw, scrape } = await account('interact-bad@example.com');
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

    const other = await account('interact-other@example.com');
    const theirs = await other.raw.post(`/v2/scrape/${id}/interact`, { code: CLICK });
    expect([theirs.status, theirs.body.success]).toEqual([404, false]);
    expect((await other.raw.delete(`/v2/scrape/${id}/interact`)).status).toBe(404);
    const unknown = await raw.post('/v2/scrape/run_00000000000000000000000000/interact', { code: CLICK });
    expect(unknown.status).toBe(404);
    // v1 has no interact.
    expect((await raw.post(`/v1/scrape/${id}/interact`, { code: CLICK })).status).toBe(404);
  });

  it(`opens at most ${PER_USER} sessions per account`, async () => {
    const { sdk, raw, scrape } = await account('interact-many@example.com');
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
    const { sdk, raw, scrape } = await account('interact-dead@example.com');
    const id = await scrape();
    expect((await sdk.interact(id, { code: CLICK })).result).toBe('1');
    await worker.kill('SIGKILL');
    worker = await startWorker();
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
