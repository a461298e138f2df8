import { gzipSync } from 'node:zlib';
import type { RunModel } from '@scrapejobs/db';
import { buildTestApi } from '../support/api.ts';
import { client, validJob } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { storedRecords } from '../support/records.ts';
import { testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let c: ReturnType<typeof client>;
const prefix = testPrefix();
const workers: Proc[] = [];
const sites: Awaited<ReturnType<typeof startSite>>[] = [];

const USER_AGENT = 'CrawlTestBot/2.0 (+https://scrape.example.com/bot)';

async function startWorker(over: Record<string, string> = {}) {
  const w = startApp(
    'scraper-worker',
    scraperWorkerEnv(tdb.url, prefix.prefix, {
      RUN_LOCK_MS: '2000',
      SCRAPER_USER_AGENT: USER_AGENT,
      ...over,
    }),
  );
  workers.push(w);
  await w.waitForLog((l) => l.msg === 'scraper worker started');
  return w;
}

interface Route {
  status?: number;
  type?: string;
  body: string | Buffer;
}

/** A local site serving `routes` by path (query string included when the key has one); the rest 404. */
async function site(routes: (origin: string) => Record<string, Route>) {
  let table: Record<string, Route> = {};
  const agents: string[] = [];
  const s = await startSite((req, res) => {
    agents.push(String(req.headers['user-agent']));
    const url = new URL(req.url ?? '/', 'http://site');
    const route = table[url.pathname + url.search] ?? table[url.pathname];
    res.statusCode = route?.status ?? (route ? 200 : 404);
    res.setHeader('Content-Type', route?.type ?? 'text/html; charset=utf-8');
    res.end(route?.body ?? 'not found');
    return true;
  });
  table = routes(s.url);
  sites.push(s);
  const fetched = (path: string) => s.hits.filter((h) => h.path === path).length;
  return { ...s, agents, fetched };
}

const page = (title: string, links: string[] = [], head = '') => ({
  body: `<!doctype html><html><head>${head}<title>${title}</title></head><body><h1>${title}</h1>${links
    .map((href) => `<a class="link" href="${href}">${href}</a>`)
    .join('')}</body></html>`,
});

const crawl = (over: Record<string, unknown> = {}) => ({
  follow: [{ type: 'css', query: 'a.link::attr(href)' }],
  respect_robots_txt: false,
  ...over,
});

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  c = client(
    api.app,
    (
      await api.keys.create({
        email: 'crawl@example.com',
        mode: 'test',
        scopes: ['jobs:read', 'jobs:write'],
        name: 'c',
      })
    ).token,
  );
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.kill('SIGKILL')));
});

afterAll(async () => {
  await api.close();
  await Promise.all(sites.map((s) => s.close()));
  await tdb.drop();
  await prefix.cleanup();
});

async function runCrawl(
  source: string,
  crawlField: Record<string, unknown>,
  over: Record<string, unknown> = {},
) {
  const created = await c.post(
    '/jobs',
    validJob({
      source,
      queries: [{ name: 'title', type: 'css', query: 'h1' }],
      rate_limit: 6000,
      crawl: crawlField,
      ...over,
    }),
  );
  expect(created.status).toBe(201);
  const run = await c.post(`/jobs/${created.body.job_id}/run`);
  expect(run.status).toBe(202);
  return { jobId: created.body.job_id as string, runId: run.body.run_id as string };
}

const ended = (runId: string, timeoutMs = 30_000) =>
  until(async () => {
    const run = await tdb.db.run.findUnique({ where: { id: runId } });
    return run && run.status !== 'running' ? run : null;
  }, timeoutMs) as Promise<RunModel>;

/** Every URL of a run through the API, page by page. */
async function urlsOf(jobId: string, runId: string, query = '') {
  const all: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const res = await c.get(
      `/jobs/${jobId}/runs/${runId}/urls?limit=3${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(res.status).toBe(200);
    all.push(...res.body.urls);
    cursor = res.body.next_cursor;
  } while (cursor);
  return all;
}

const titlesOf = async (runId: string) =>
  (await storedRecords(tdb.db, runId)).map((r) => (r.data as { title: string }).title);

describe('crawls (docs/api.md §11, §12)', () => {
  it('follows a next link page after page, with depth, parent and the per-URL listing in order', async () => {
    const s = await site(() =>
      Object.fromEntries(
        [1, 2, 3, 4, 5].map((n) => [`/list/${n}`, page(`List ${n}`, n < 5 ? [`/list/${n + 1}`] : [])]),
      ),
    );
    await startWorker();
    const { jobId, runId } = await runCrawl(`${s.url}/list/1`, crawl({ max_depth: 10 }));
    const run = await ended(runId);
    expect(run).toEqual(
      expect.objectContaining({
        status: 'success',
        successfulUrls: 5,
        failedUrls: 0,
        skippedUrls: 0,
        totalUrls: 5,
      }),
    );
    expect(await titlesOf(runId)).toEqual(['List 1', 'List 2', 'List 3', 'List 4', 'List 5']);
    const urls = await urlsOf(jobId, runId);
    expect(
      urls.map((u) => [u.url, u.status, u.depth, u.parent_url, u.http_status, u.records, u.error]),
    ).toEqual(
      [1, 2, 3, 4, 5].map((n) => [
        `${s.url}/list/${n}`,
        'success',
        n - 1,
        n === 1 ? null : `${s.url}/list/${n - 1}`,
        200,
        1,
        null,
      ]),
    );
    expect(urls[0]).toEqual(
      expect.objectContaining({ duration_ms: expect.any(Number), fetched_at: expect.any(String) }),
    );
    // The run object, one by one, with its skipped count.
    const one = await c.get(`/jobs/${jobId}/runs/${runId}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(expect.objectContaining({ run_id: runId, successful_urls: 5, skipped_urls: 0 }));
    expect(new Set(s.agents)).toEqual(new Set([USER_AGENT]));
  });

  it('stops following at max_depth, and skips with MAX_PAGES what max_pages leaves out', async () => {
    const links = (n: number) => [1, 2, 3].map((k) => `/tree/${n * 3 + k}`);
    const s = await site(() =>
      Object.fromEntries(Array.from({ length: 40 }, (_, n) => [`/tree/${n}`, page(`Tree ${n}`, links(n))])),
    );
    await startWorker();
    // Depth 0 → 1 → 2: 1 + 3 + 9 pages, and the links of depth-2 pages are not followed.
    const deep = await runCrawl(`${s.url}/tree/0`, crawl({ max_depth: 2 }));
    expect(await ended(deep.runId)).toEqual(
      expect.objectContaining({ status: 'success', successfulUrls: 13, skippedUrls: 0, totalUrls: 13 }),
    );
    expect(s.fetched('/tree/13')).toBe(0);

    const capped = await runCrawl(`${s.url}/tree/0`, crawl({ max_depth: 3, max_pages: 5 }));
    const run = await ended(capped.runId);
    expect(run).toEqual(expect.objectContaining({ status: 'success', successfulUrls: 5, failedUrls: 0 }));
    expect(run.skippedUrls).toBeGreaterThan(0);
    expect(run.successfulUrls + run.failedUrls + run.skippedUrls).toBe(run.totalUrls);
    const skipped = await urlsOf(capped.jobId, capped.runId, '&status=skipped');
    expect(skipped).toHaveLength(run.skippedUrls);
    for (const u of skipped)
      expect(u).toEqual(
        expect.objectContaining({
          status: 'skipped',
          http_status: null,
          fetched_at: null,
          error: { code: 'MAX_PAGES', message: expect.any(String) },
        }),
      );
    expect(await urlsOf(capped.jobId, capped.runId, '&status=success')).toHaveLength(5);
    const event = await tdb.db.event.findFirstOrThrow({
      where: { jobId: capped.jobId, kind: 'job.completed' },
    });
    expect(event.data).toEqual(expect.objectContaining({ skipped_urls: run.skippedUrls }));
  });

  it('keeps to the seeds’ origins unless told otherwise, and filters followed links by include and exclude', async () => {
    const other = await site(() => ({ '/elsewhere': page('Elsewhere') }));
    const s = await site(() => ({
      '/hub': page('Hub', ['/a/1', '/a/2', '/b/1', '/a/private', `${other.url}/elsewhere`]),
      '/a/1': page('A1'),
      '/a/2': page('A2'),
      '/a/private': page('A private'),
      '/b/1': page('B1'),
    }));
    await startWorker();
    const same = await runCrawl(`${s.url}/hub`, crawl());
    expect((await ended(same.runId)).successfulUrls).toBe(5);
    expect(other.fetched('/elsewhere')).toBe(0);

    const filtered = await runCrawl(`${s.url}/hub`, crawl({ include: ['/a/'], exclude: ['private$'] }));
    expect((await ended(filtered.runId)).successfulUrls).toBe(3);
    expect(await titlesOf(filtered.runId)).toEqual(['Hub', 'A1', 'A2']);

    const anywhere = await runCrawl(`${s.url}/hub`, crawl({ same_origin: false, exclude: ['/a/', '/b/'] }));
    expect((await ended(anywhere.runId)).successfulUrls).toBe(2);
    expect(other.fetched('/elsewhere')).toBe(1);
  });

  it('resolves relative links and <base href>, and fetches a URL once whatever its fragment or host case', async () => {
    const s = await site((origin) => ({
      '/dir/index': page('Index', [
        '../top',
        'sub/leaf',
        '?p=2',
        '#top',
        '/top#section',
        `${origin.replace('127.0.0.1', 'LOCALHOST')}/top`,
        'javascript:alert(1)',
        'mailto:someone@example.com',
        '/based',
      ]),
      '/dir/index?p=2': page('Index p2'),
      '/top': page('Top'),
      '/dir/sub/leaf': page('Leaf'),
      '/based': page('Based', ['relative'], '<base href="/elsewhere/deep/">'),
      '/elsewhere/deep/relative': page('Relative to base'),
    }));
    await startWorker();
    // Seeds by name, so that the upper-case host is the same origin.
    const seed = `${s.url.replace('127.0.0.1', 'localhost')}/dir/index`;
    const { jobId, runId } = await runCrawl(seed, crawl());
    expect(await ended(runId)).toEqual(expect.objectContaining({ status: 'success', successfulUrls: 6 }));
    const urls = (await urlsOf(jobId, runId)).map((u) => u.url);
    const origin = s.url.replace('127.0.0.1', 'localhost');
    expect(urls).toEqual([
      `${origin}/dir/index`,
      `${origin}/top`,
      `${origin}/dir/sub/leaf`,
      `${origin}/dir/index?p=2`,
      `${origin}/based`,
      `${origin}/elsewhere/deep/relative`,
    ]);
    expect(s.fetched('/top')).toBe(1);
    expect(s.fetched('/dir/index')).toBe(2);
  });

  it('reads robots.txt once per run with its user agent: disallowed URLs skipped, 4xx allows all, 5xx skips all', async () => {
    const robots = (body: string, status = 200) => ({ '/robots.txt': { status, type: 'text/plain', body } });
    const pages = {
      '/start': page('Start', ['/open', '/private/secret', '/private/also']),
      '/open': page('Open'),
      '/private/secret': page('Secret'),
      '/private/also': page('Also'),
    };
    const rules = [
      'User-agent: *',
      'Disallow: /',
      '',
      'User-agent: CrawlTestBot',
      'Disallow: /private/',
      'Allow: /private/also',
    ].join('\n');
    const ruled = await site(() => ({ ...pages, ...robots(rules) }));
    await startWorker();
    const withRules = await runCrawl(`${ruled.url}/start`, crawl({ respect_robots_txt: true }));
    const run = await ended(withRules.runId);
    expect(run).toEqual(
      expect.objectContaining({
        status: 'success',
        successfulUrls: 3,
        skippedUrls: 1,
        failedUrls: 0,
        totalUrls: 4,
      }),
    );
    expect(ruled.fetched('/private/secret')).toBe(0);
    expect(ruled.fetched('/robots.txt')).toBe(1);
    const skipped = await urlsOf(withRules.jobId, withRules.runId, '&status=skipped');
    expect(skipped).toEqual([
      expect.objectContaining({
        url: `${ruled.url}/private/secret`,
        error: { code: 'ROBOTS_DISALLOWED', message: expect.any(String) },
      }),
    ]);

    const missing = await site(() => ({ ...pages, ...robots('gone', 404) }));
    const allowed = await runCrawl(`${missing.url}/start`, crawl({ respect_robots_txt: true }));
    expect((await ended(allowed.runId)).successfulUrls).toBe(4);

    const broken = await site(() => ({ ...pages, ...robots('down', 503) }));
    const down = await runCrawl(`${broken.url}/start`, crawl({ respect_robots_txt: true }));
    expect(await ended(down.runId)).toEqual(
      expect.objectContaining({ status: 'success', successfulUrls: 0, skippedUrls: 1, totalUrls: 1 }),
    );
    expect(broken.fetched('/start')).toBe(0);

    const garbage = await site(() => ({
      ...pages,
      ...robots('\u0000\u0001<html>not robots</html>\n'.repeat(100)),
    }));
    const lenient = await runCrawl(`${garbage.url}/start`, crawl({ respect_robots_txt: true }));
    expect((await ended(lenient.runId)).successfulUrls).toBe(4);
  });

  it('adds the URLs of sitemaps at depth 0: robots.txt Sitemap lines, an index with a gzip child', async () => {
    const urlset = (origin: string, paths: string[]) =>
      `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths
        .map((p) => `<url><loc>${origin}${p}</loc></url>`)
        .join('')}</urlset>`;
    const s = await site((origin) => ({
      '/robots.txt': {
        type: 'text/plain',
        body: `User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap-index.xml\n`,
      },
      '/sitemap-index.xml': {
        type: 'application/xml',
        body: `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${origin}/pages.xml.gz</loc></sitemap><sitemap><loc>${origin}/more.xml</loc></sitemap><sitemap><loc>${origin}/broken.xml</loc></sitemap></sitemapindex>`,
      },
      '/pages.xml.gz': {
        type: 'application/gzip',
        body: gzipSync(urlset(origin, ['/s/1', '/s/2', '/start'])),
      },
      '/more.xml': {
        type: 'application/xml',
        body: urlset(origin, ['/s/3', '/excluded/1', 'https://other.example/x']),
      },
      '/broken.xml': { type: 'text/html', body: '<html><body>Not a sitemap</body></html>' },
      '/start': page('Start'),
      '/s/1': page('S1'),
      '/s/2': page('S2'),
      '/s/3': page('S3'),
      '/excluded/1': page('Excluded'),
    }));
    const w = await startWorker();
    const { jobId, runId } = await runCrawl(
      `${s.url}/start`,
      crawl({ sitemap: true, exclude: ['excluded'] }),
    );
    const run = await ended(runId);
    expect(run).toEqual(
      expect.objectContaining({ status: 'success', successfulUrls: 4, totalUrls: 4, failedUrls: 0 }),
    );
    const urls = await urlsOf(jobId, runId);
    expect(urls.map((u) => [u.url, u.depth])).toEqual([
      [`${s.url}/start`, 0],
      ...[1, 2].map((n) => [`${s.url}/s/${n}`, 0]),
      [`${s.url}/s/3`, 0],
    ]);
    expect(urls[1]!.parent_url).toBe(`${s.url}/pages.xml.gz`);
    expect(s.fetched('/excluded/1')).toBe(0);
    expect(s.fetched('/start')).toBe(1);
    expect(w.logs.some((l) => l.msg === 'sitemap not read' && String(l.url).endsWith('/broken.xml'))).toBe(
      true,
    );
  });

  it('spreads one crawl over three workers, and loses no URL and stores no page twice when one is killed', async () => {
    const PAGES = 300;
    const DOOMED_AGENT = `${USER_AGENT} doomed`;
    const children = (n: number) => [2 * n + 1, 2 * n + 2].filter((k) => k < PAGES).map((k) => `/t/${k}`);
    // While `holding`, the site answers nobody: the worker to be killed is then surely killed
    // with URLs in hand, which the others must take over.
    let holding = false;
    const held: { agent: string; answer: () => void }[] = [];
    const slow = await startSite((req, res) => {
      const m = req.url?.match(/^\/t\/(\d+)$/);
      if (!m) return false;
      const answer = () => {
        const n = Number(m[1]);
        res.setHeader('Content-Type', 'text/html');
        res.end(page(`T${n}`, children(n)).body);
      };
      if (holding) held.push({ agent: String(req.headers['user-agent']), answer });
      else setTimeout(answer, 40);
      return true;
    });
    sites.push(slow);
    const fleet: Proc[] = [];
    // Places at the one host for all twelve URLs in flight: with fewer, the held requests of the
    // other two workers could take every place, and the doomed one would never send one.
    const places = { HOST_MAX_CONCURRENCY: '12' };
    for (const agent of [DOOMED_AGENT, USER_AGENT, USER_AGENT])
      fleet.push(
        await startWorker({
          LOG_LEVEL: 'debug',
          RUN_URL_CONCURRENCY: '4',
          SCRAPER_USER_AGENT: agent,
          ...places,
        }),
      );
    const { jobId, runId } = await runCrawl(`${slow.url}/t/0`, crawl({ max_depth: 20, max_pages: 1000 }));
    const claimedBy = (w: Proc) => w.logs.some((l) => l.msg === 'claimed URLs' && l.run_id === runId);
    await until(async () => fleet.every(claimedBy) || null, 20_000);
    await until(
      async () => (await tdb.db.runUrl.count({ where: { runId, status: 'success' } })) >= 60 || null,
    );
    holding = true;
    await until(async () => held.some((h) => h.agent === DOOMED_AGENT) || null);
    await fleet[0]!.kill('SIGKILL');
    holding = false;
    for (const h of held.splice(0)) h.answer();
    const run = await ended(runId, 60_000);
    expect(run).toEqual(
      expect.objectContaining({
        status: 'success',
        successfulUrls: PAGES,
        failedUrls: 0,
        skippedUrls: 0,
        totalUrls: PAGES,
        resultsCount: PAGES,
      }),
    );
    const results = await storedRecords(tdb.db, runId);
    expect(results).toHaveLength(PAGES);
    expect(new Set(results.map((r) => r.urlIndex)).size).toBe(PAGES);
    expect(new Set(results.map((r) => (r.data as { title: string }).title)).size).toBe(PAGES);
    const events = await tdb.db.event.findMany({ where: { jobId } });
    expect(events.map((e) => e.kind).sort()).toEqual(['job.completed', 'job.started']);
    const survivors = fleet.slice(1);
    expect(
      survivors.some((w) => w.logs.some((l) => l.msg === 'taking over a URL whose worker stopped')),
    ).toBe(true);
  });
});
