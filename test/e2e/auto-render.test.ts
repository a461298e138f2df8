import type { JobModel } from '@scrapejobs/db';
import { buildTestApi } from '../support/api.ts';
import { client, validJob } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { childProcesses, type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { storedRecords } from '../support/records.ts';
import { testPrefix } from '../support/redis.ts';
import { type SiteHit, startSite } from '../support/site.ts';

// render_config.mode `auto` (docs/api.md §23) end to end: the real API and a real scraper worker
// with Chromium against a local site whose pages build their content by script, from inline state,
// behind a <noscript>, or are static articles that also run a script.

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let c: ReturnType<typeof client>;
let site: Awaited<ReturnType<typeof startSite>>;
const prefix = testPrefix();
const workers: Proc[] = [];
/** /changing/<n> is a static page until the test turns it into an application shell. */
let changingScripted = false;
/** Requests for /crash/hold.js, held unanswered: the page that loads it is rendering. */
const held: import('node:http').ServerResponse[] = [];
let holdHits = 0;

const ITEMS = ['alpha', 'beta'];
const analytics = '<script>window.dataLayer = [];</script>';
const article = (title: string) =>
  `<h1>${title}</h1><p>${'The static article has its text in the HTML, as a reader sees it. '.repeat(8)}</p><ul>${ITEMS.map(
    (item) => `<li class="item">${item}</li>`,
  ).join('')}</ul>${analytics}`;
/** A script that builds the page's heading and items `ms` after load, from `data`. */
const builder = (
  into: string,
  ms: number,
  data = `{"title": document.title, "items": ${JSON.stringify(ITEMS)}}`,
) =>
  `<script>addEventListener('load', () => setTimeout(() => { const d = ${data};
    const root = ${into}; const h = document.createElement('h1'); h.textContent = d.title; root.append(h);
    const ul = document.createElement('ul'); root.append(ul);
    for (const t of d.items) { const li = document.createElement('li'); li.className = 'item'; li.textContent = t; ul.append(li); }
  }, ${ms}));</script>`;
const doc = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

/** The pages of /auto/<n>, by n. */
function autoPage(n: number): string {
  const title = `Page ${n}`;
  switch (n) {
    case 5: // an application shell: an empty #root
      return doc(title, `<div id="root"></div>${builder("document.getElementById('root')", 40)}`);
    case 6: // a <noscript> asking for JavaScript
      return doc(
        title,
        `<noscript>You need to enable JavaScript to run this app.</noscript><main id="main"></main>${builder("document.getElementById('main')", 60)}`,
      );
    case 7: // its data only in inline state
      return doc(
        title,
        `<main id="shop"></main><script>window.__STATE__ = ${JSON.stringify({ title, items: ITEMS, about: 'x'.repeat(300) })};</script>${builder("document.getElementById('shop')", 100, 'window.__STATE__')}`,
      );
    case 8: // text in the HTML, but the items the job asks for only come from a script
      return doc(
        title,
        `<h1>${title}</h1><p>${'Plenty of text around a list that a script fills in. '.repeat(8)}</p><div id="list"></div>
        <script>addEventListener('load', () => setTimeout(() => { const ul = document.createElement('ul');
          for (const t of ${JSON.stringify(ITEMS)}) { const li = document.createElement('li'); li.className = 'item'; li.textContent = t; ul.append(li); }
          document.getElementById('list').append(ul); }, 50));</script>`,
      );
    default:
      return doc(title, article(title));
  }
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  const { token } = await api.keys.create({
    email: 'auto@example.com',
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write'],
    name: 'a',
  });
  c = client(api.app, token);
  site = await startSite((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    const auto = url.pathname.match(/^\/auto\/(\d+)$/);
    const changing = url.pathname.match(/^\/changing\/(\d+)$/);
    if (url.pathname === '/crash/hold.js') {
      holdHits++;
      held.push(res);
      return true;
    }
    if (url.pathname === '/crash/page') {
      // An application root asks for rendering; the heading and items are in the HTML all the same.
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(doc('Crash', `${article('Crash')}<div id="root"></div><script src="/crash/hold.js"></script>`));
      return true;
    }
    if (!auto && !changing) return false;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    if (auto) res.end(autoPage(Number(auto[1])));
    else {
      const title = `Changing ${changing![1]}`;
      res.end(
        changingScripted
          ? doc(title, `<div id="app"></div>${builder("document.getElementById('app')", 40)}`)
          : doc(title, article(title)),
      );
    }
    return true;
  });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.kill('SIGKILL')));
});

afterAll(async () => {
  await api.close();
  await site.close();
  await tdb.drop();
  await prefix.cleanup();
});

async function startWorker(over: Record<string, string> = {}) {
  const w = startApp('scraper-worker', scraperWorkerEnv(tdb.url, prefix.prefix, over));
  workers.push(w);
  await w.waitForLog((l) => l.msg === 'scraper worker started');
  return w;
}

const queries = [
  { name: 'title', type: 'css', query: 'h1' },
  { name: 'item', type: 'css', query: 'li.item' },
];

async function createJob(source: string) {
  const body = validJob({
    source,
    queries,
    rate_limit: 6000,
    render_config: { enabled: true, mode: 'auto', wait_timeout_ms: 10_000 },
  });
  const created = await c.post('/jobs', body);
  expect(created.status).toBe(201);
  expect(created.body.render_config).toMatchObject({ mode: 'auto' });
  return created.body.job_id as string;
}

async function run(jobId: string) {
  const started = await c.post(`/jobs/${jobId}/run`);
  expect(started.status).toBe(202);
  const runId = started.body.run_id as string;
  const job = (await until(async () => {
    const row = await tdb.db.job.findUnique({ where: { id: jobId } });
    return row && row.status !== 'running' ? row : null;
  }, 60_000)) as JobModel;
  expect(job.status).toBe('success');
  const urls = (await c.get(`/jobs/${jobId}/runs/${runId}/urls?limit=100`)).body.urls as {
    url: string;
    status: string;
    rendered: boolean | null;
    render_reason: string | null;
  }[];
  return { runId, urls };
}

/** Each page's titles and items as stored, by path. */
async function recordsByPath(runId: string) {
  const out = new Map<string, { title: unknown[]; item: unknown[] }>();
  for (const row of await storedRecords(tdb.db, runId)) {
    const path = new URL(row.url).pathname;
    const page = out.get(path) ?? { title: [], item: [] };
    const data = row.data as { title?: unknown; item?: unknown };
    if (data.title != null) page.title.push(data.title);
    if (data.item != null) page.item.push(data.item);
    out.set(path, page);
  }
  return out;
}

/** The Chromium (its browser process) that worker `pid` launched, or undefined. */
const browserOf = (pid: number): number | undefined => childProcesses(pid, '--proxy-server=')[0];

const hitsOf = (path: string, from: SiteHit[]) => from.filter((hit) => hit.path === path).length;
const pathOf = (url: string) => new URL(url).pathname;

describe('render_config.mode auto', () => {
  it('renders only the pages that need it, says why in the URL log, and gets every page right', async () => {
    await startWorker();
    const before = site.hits.length;
    const jobId = await createJob(`${site.url}/auto/[1-8]`);
    const { runId, urls } = await run(jobId);
    const why = Object.fromEntries(urls.map((u) => [pathOf(u.url), [u.rendered, u.render_reason]]));
    expect(why).toEqual({
      '/auto/1': [false, 'static'],
      '/auto/2': [false, 'static'],
      '/auto/3': [false, 'static'],
      '/auto/4': [false, 'static'],
      '/auto/5': [true, 'app_root'],
      '/auto/6': [true, 'noscript'],
      '/auto/7': [true, 'inline_state'],
      '/auto/8': [true, 'queries_empty'],
    });
    const records = await recordsByPath(runId);
    for (let n = 1; n <= 8; n++)
      expect([n, records.get(`/auto/${n}`)]).toEqual([n, { title: [`Page ${n}`], item: ITEMS }]);
    // A static page is fetched once; a page that needed rendering once plainly, once in Chromium.
    const hits = site.hits.slice(before);
    expect([1, 2, 3, 4].map((n) => hitsOf(`/auto/${n}`, hits))).toEqual([1, 1, 1, 1]);
    expect([5, 6, 7, 8].map((n) => hitsOf(`/auto/${n}`, hits))).toEqual([2, 2, 2, 2]);
  });

  it('notices a host that changes from static to scripted, then renders its pages directly', async () => {
    // One URL at a time, so that each page finds what the previous ones taught.
    await startWorker({ RUN_URL_CONCURRENCY: '1' });
    changingScripted = false;
    const jobId = await createJob(`${site.url}/changing/[1-9]`);
    const first = await run(jobId);
    expect(new Set(first.urls.map((u) => `${u.rendered} ${u.render_reason}`))).toEqual(
      new Set(['false static']),
    );

    changingScripted = true;
    const before = site.hits.length;
    const second = await run(jobId);
    expect(second.urls.map((u) => [pathOf(u.url), u.rendered, u.render_reason])).toEqual(
      Array.from({ length: 9 }, (_, i) => [`/changing/${i + 1}`, true, i < 3 ? 'app_root' : 'host_learned']),
    );
    const records = await recordsByPath(second.runId);
    for (let n = 1; n <= 9; n++)
      expect([n, records.get(`/changing/${n}`)]).toEqual([n, { title: [`Changing ${n}`], item: ITEMS }]);
    // Once learned, a page is rendered without a plain fetch first.
    const hits = site.hits.slice(before);
    expect(Array.from({ length: 9 }, (_, i) => hitsOf(`/changing/${i + 1}`, hits))).toEqual([
      2, 2, 2, 1, 1, 1, 1, 1, 1,
    ]);
  });

  it('keeps the plain page when the browser cannot render: the URL succeeds, and says so', async () => {
    await startWorker({ CHROMIUM_PATH: '/bin/false' });
    const jobId = await createJob(`${site.url}/auto/{1,5}`);
    const { runId, urls } = await run(jobId);
    expect(urls.map((u) => [pathOf(u.url), u.status, u.rendered, u.render_reason])).toEqual([
      ['/auto/1', 'success', false, 'static'],
      ['/auto/5', 'success', false, 'render_failed'],
    ]);
    const records = await recordsByPath(runId);
    expect(records.get('/auto/1')).toEqual({ title: ['Page 1'], item: ITEMS });
    // The plain shell has nothing the queries find.
    expect(records.get('/auto/5')).toBeUndefined();
  });

  it('a browser killed while it renders, and killed again on the retry, leaves the plain page: the URL succeeds', async () => {
    const worker = await startWorker();
    const pid = worker.child.pid as number;
    const jobId = await createJob(`${site.url}/crash/page`);
    const running = run(jobId);
    for (let attempt = 1; attempt <= 2; attempt++) {
      // The page is rendering: its script is held at the site.
      await until(async () => holdHits >= attempt, 30_000);
      const browser = await until(async () => browserOf(pid), 10_000);
      process.kill(browser as number, 'SIGKILL');
    }
    const { runId, urls } = await running;
    for (const res of held.splice(0)) res.destroy();
    expect(urls.map((u) => [pathOf(u.url), u.status, u.rendered, u.render_reason])).toEqual([
      ['/crash/page', 'success', false, 'render_failed'],
    ]);
    expect((await recordsByPath(runId)).get('/crash/page')).toEqual({ title: ['Crash'], item: ITEMS });
    // The worker goes on: its next render starts another browser.
    expect(worker.child.exitCode).toBeNull();
  });
});
