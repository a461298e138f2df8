import { createHash } from 'node:crypto';
import { createJobSchema } from '@scrapejobs/contracts';
import request from 'supertest';
import { type ConsoleFixture, consoleFixture } from '../testing.ts';

// The console's job form (crawl settings), job page and run page over the real domain services
// and database; only the queue side (run dispatch, schedules) is left out.

let f: ConsoleFixture;

beforeAll(async () => {
  f = await consoleFixture('runner@example.com');
});

afterAll(async () => {
  await f.close();
});

const get = (path: string) => request(f.app).get(`/console${path}`).set('Cookie', f.session.cookie);

const crawlJob = () =>
  createJobSchema.parse({
    name: 'Shop <crawl>',
    source: 'https://shop.example/',
    queries: [{ name: 'title', type: 'css', query: 'h1' }],
    crawl: {
      follow: [{ type: 'css', query: 'a.next::attr(href)' }],
      max_depth: 2,
      include: ['/products/<x>'],
    },
  });

/** A job with a run whose frontier holds `rows` (page URLs unless a kind is given). */
async function runWithUrls(
  rows: { url: string; kind?: 'page' | 'sitemap'; status?: string; [k: string]: unknown }[],
) {
  const job = await f.jobs.create(f.owner, crawlJob());
  const { runId } = await f.jobs.run(f.owner, job.id);
  await f.tdb.db.runUrl.createMany({
    data: rows.map((r, seq) => ({
      runId,
      seq,
      ...r,
      status: (r.status ?? 'pending') as 'pending',
      urlKey: createHash('sha256').update(`${seq} ${r.url}`).digest().subarray(0, 16),
    })),
  });
  return { jobId: job.id, runId, path: `/jobs/${job.id}/runs/${runId}` };
}

const FRONTIER = [
  {
    url: 'https://shop.example/',
    status: 'success',
    httpStatus: 200,
    records: 4,
    durationMs: 1500,
    fetchedAt: new Date(),
  },
  { url: 'https://shop.example/sitemap.xml', kind: 'sitemap' as const, status: 'success' },
  {
    url: 'https://shop.example/p/2',
    status: 'failed',
    depth: 1,
    parentSeq: 0,
    httpStatus: 500,
    durationMs: 40,
    errorCode: 'HTTP_ERROR',
    errorMessage: 'HTTP 500 <Internal>',
  },
  {
    url: 'https://shop.example/admin',
    status: 'skipped',
    parentSeq: 1,
    errorCode: 'ROBOTS_DISALLOWED',
    errorMessage: 'robots.txt disallows it',
  },
  { url: 'https://shop.example/p/<script>alert(1)</script>', status: 'active', depth: 1, parentSeq: 0 },
  { url: 'https://shop.example/p/4', status: 'pending', depth: 2, parentSeq: 2 },
];

/** The rows of the URL table: each cell's text, tags left out. */
function urlRows(text: string): string[][] {
  const body = /<table class="cards urls">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(text)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) =>
      cell[1]!
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    ),
  );
}

describe('the run page', () => {
  it('shows the run and a table of its page URLs in order, escaped, with parent, outcome and error', async () => {
    const { path, runId } = await runWithUrls(FRONTIER);
    await f.tdb.db.run.update({
      where: { id: runId },
      data: { successfulUrls: 1, failedUrls: 1, skippedUrls: 1 },
    });
    const res = await get(path);
    expect(res.status).toBe(200);
    expect(res.text).toContain(`<h1>Run <span class="mono">${runId}</span></h1>`);
    expect(res.text).toContain('Shop &lt;crawl&gt;');
    expect(res.text).toMatch(/<dt>URLs skipped<\/dt><dd>1<\/dd>/);
    const rows = urlRows(res.text);
    expect(rows.map((r) => r.slice(0, 6))).toEqual([
      ['https://shop.example/', 'success', '0', '200', '4', '1.5 s'],
      ['https://shop.example/p/2 found on https://shop.example/', 'failed', '1', '500', '—', '40 ms'],
      ['https://shop.example/admin found on https://shop.example/sitemap.xml', 'skipped', '0', '—', '—', '—'],
      [
        'https://shop.example/p/&lt;script&gt;alert(1)&lt;/script&gt; found on https://shop.example/',
        'pending',
        '1',
        '—',
        '—',
        '—',
      ],
      ['https://shop.example/p/4 found on https://shop.example/p/2', 'pending', '2', '—', '—', '—'],
    ]);
    expect(rows.map((r) => r[7])).toEqual([
      '—',
      'HTTP_ERROR HTTP 500 &lt;Internal&gt;',
      'ROBOTS_DISALLOWED robots.txt disallows it',
      '—',
      '—',
    ]);
    expect(res.text).not.toContain('<script>alert(1)');
    expect(res.text).not.toContain('Next URLs');
  });

  it('marks a page stored as a copy of its last run as unchanged, beside the status it got', async () => {
    const { path } = await runWithUrls([
      { url: 'https://shop.example/', status: 'success', httpStatus: 304, unchanged: true, records: 4 },
      { url: 'https://shop.example/new', status: 'success', httpStatus: 200, records: 1 },
    ]);
    const rows = urlRows((await get(path)).text);
    expect(rows.map((r) => r.slice(1, 5))).toEqual([
      ['success', '0', '304 unchanged', '4'],
      ['success', '0', '200', '1'],
    ]);
  });

  it('marks a page rendered in a headless browser, and says why in its title', async () => {
    const { path } = await runWithUrls([
      {
        url: 'https://shop.example/',
        status: 'success',
        httpStatus: 200,
        rendered: true,
        renderReason: 'app_root',
      },
      {
        url: 'https://shop.example/about',
        status: 'success',
        httpStatus: 200,
        rendered: false,
        renderReason: 'static',
      },
    ]);
    const text = (await get(path)).text;
    expect(urlRows(text).map((r) => r[3])).toEqual(['200 rendered', '200']);
    expect(text).toContain('title="Rendered in a headless browser (app_root)"');
  });

  it.each([
    ['failed', ['https://shop.example/p/2']],
    ['skipped', ['https://shop.example/admin']],
    ['pending', ['https://shop.example/p/&lt;script&gt;alert(1)&lt;/script&gt;', 'https://shop.example/p/4']],
    ['success', ['https://shop.example/']],
  ])('filters the table by status %s, marking the filter shown', async (status, urls) => {
    const { path } = await runWithUrls(FRONTIER);
    const res = await get(`${path}?status=${status}`);
    expect(res.status).toBe(200);
    expect(urlRows(res.text).map((r) => r[0]!.split(' found on ')[0])).toEqual(urls);
    expect(res.text).toContain(`href="/console${path}?status=${status}" aria-current="true"`);
    expect(res.text).toContain(`href="/console${path}" class="stat"`);
  });

  it('says so when no URL has the status asked for', async () => {
    const { path } = await runWithUrls([{ url: 'https://shop.example/', status: 'success' }]);
    const res = await get(`${path}?status=failed`);
    expect(res.text).toContain('No failed URLs.');
  });

  it('pages with a next link that keeps the filter', async () => {
    const rows = Array.from({ length: 230 }, (_, i) => ({
      url: `https://shop.example/p/${i}`,
      status: i % 2 ? 'success' : 'failed',
    }));
    const { path } = await runWithUrls(rows);
    const seen: string[] = [];
    let next: string | undefined = `${path}?status=failed`;
    let pages = 0;
    while (next) {
      const res = await get(next);
      expect(res.status).toBe(200);
      seen.push(...urlRows(res.text).map((r) => r[0]!));
      const link = /<a href="\/console([^"]+)">Next URLs →<\/a>/.exec(res.text)?.[1];
      next = link?.replaceAll('&amp;', '&');
      if (next) expect(next).toMatch(/[?&]status=failed&cursor=/);
      pages++;
    }
    expect(pages).toBe(2);
    expect(seen).toEqual(rows.filter((r) => r.status === 'failed').map((r) => r.url));
  });

  it('is linked from the job page, which shows the crawl settings', async () => {
    const { jobId, path } = await runWithUrls([]);
    const res = await get(`/jobs/${jobId}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain(`<a href="/console${path}"`);
    expect(res.text).toContain('links followed to depth 2, at most 1000 pages per run');
    expect(res.text).toContain('a.next::attr(href)');
    expect(res.text).toContain('/products/&lt;x&gt;');
    expect(res.text).toMatch(/0 \/ 0 \/ 0/);
  });

  it('needs a signed-in session', async () => {
    const { path } = await runWithUrls(FRONTIER);
    const res = await request(f.app).get(`/console${path}`);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/console/login');
  });

  it('is a 404 page for a run of another job, another account, or a malformed id', async () => {
    const { jobId, runId } = await runWithUrls([]);
    const other = await runWithUrls([]);
    const stranger = await f.signIn('someone@example.com');
    for (const [cookie, path] of [
      [f.session.cookie, `/jobs/${other.jobId}/runs/${runId}`],
      [f.session.cookie, `/jobs/${jobId}/runs/run_01ZZZZZZZZZZZZZZZZZZZZZZZZ`],
      [f.session.cookie, `/jobs/${jobId}/runs/%ZZ`],
      [f.session.cookie, `/jobs/${jobId}/runs/nope`],
      [stranger.cookie, `/jobs/${jobId}/runs/${runId}`],
    ]) {
      const res = await request(f.app).get(`/console${path}`).set('Cookie', cookie!);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).toContain('It does not exist');
    }
  });
});

describe('the job form’s crawl settings', () => {
  const form = (over: Record<string, string> = {}) => ({
    _csrf: f.session.csrf,
    name: 'Crawled',
    source: 'https://shop.example/',
    q_rows: '1',
    q_name_0: 'title',
    q_type_0: 'css',
    q_query_0: 'h1',
    crawl: '1',
    crawl_f_type_0: 'css',
    crawl_f_query_0: '',
    crawl_f_type_1: 'xpath',
    crawl_f_query_1: '//a/@href',
    crawl_max_depth: '1',
    crawl_max_pages: '20',
    crawl_robots: '1',
    crawl_include: '/p/\n\n/c/',
    crawl_exclude: '',
    ...over,
  });
  const post = (body: Record<string, string>) =>
    request(f.app).post('/console/jobs').set('Cookie', f.session.cookie).type('form').send(body);

  it('shows the crawl fields on the new job form, with their defaults', async () => {
    const res = await get('/jobs/new');
    expect(res.status).toBe(200);
    expect(res.text).toContain('<legend>Crawl</legend>');
    expect(res.text).toContain('name="crawl_max_depth" type="text" inputmode="numeric" value="3"');
    expect(res.text).toContain('name="crawl_max_pages" type="text" inputmode="numeric" value="1000"');
    expect(res.text).toMatch(/name="crawl_same_origin" value="1" checked/);
    expect(res.text).toMatch(/name="crawl_robots" value="1" checked/);
    expect(res.text).toMatch(/name="crawl_sitemap" value="1">/);
  });

  it('creates a job with the crawl the form describes', async () => {
    f.parseDetails = null;
    const res = await post(form());
    expect(res.status).toBe(303);
    const id = /\/console\/jobs\/(job_\w+)$/.exec(res.headers.location!)![1]!;
    expect((await f.jobs.get(f.owner, id)).crawl).toEqual({
      follow: [{ type: 'xpath', query: '//a/@href' }],
      max_depth: 1,
      max_pages: 20,
      same_origin: false,
      include: ['/p/', '/c/'],
      exclude: [],
      respect_robots_txt: true,
      sitemap: false,
    });
  });

  it('shows the API’s crawl errors at their fields and keeps what was typed', async () => {
    f.parseDetails = {
      'crawl.follow[0].query': 'invalid xpath: unexpected end',
      'crawl.include[1]': 'invalid regular expression: /(/: Unterminated group',
      'crawl.max_depth': 'must be at most 50',
    };
    try {
      const res = await post(form({ crawl_max_depth: '99', crawl_include: '/p/\n\n(' }));
      expect(res.status).toBe(400);
      expect(res.text).toContain('<code>link row 2: query</code>: invalid xpath: unexpected end');
      expect(res.text).toMatch(
        /id="crawl-f-query-1" name="crawl_f_query_1" class="mono" value="\/\/a\/@href" maxlength="2000" aria-invalid="true" aria-describedby="err-crawl-f-query-1"><p class="error" id="err-crawl-f-query-1">invalid xpath: unexpected end<\/p>/,
      );
      expect(res.text).toMatch(
        /name="crawl_max_depth" type="text" inputmode="numeric" value="99" aria-invalid="true" aria-describedby="err-crawl-max_depth"><p class="error" id="err-crawl-max_depth">must be at most 50<\/p>/,
      );
      expect(res.text).toContain(
        '<p class="error" id="err-crawl-include">include line 3: invalid regular expression: /(/: Unterminated group</p>',
      );
      expect(res.text).toMatch(
        /<textarea id="crawl-include"[^>]*aria-invalid="true"[^>]*>\/p\/\n\n\(<\/textarea>/,
      );
    } finally {
      f.parseDetails = null;
    }
  });
});

describe('the extract field', () => {
  const post = (body: Record<string, string>) =>
    request(f.app)
      .post('/console/jobs')
      .set('Cookie', f.session.cookie)
      .type('form')
      .send({
        _csrf: f.session.csrf,
        name: 'Prices',
        source: 'https://shop.example/p/1',
        q_rows: '1',
        ...body,
      });
  const SCHEMA =
    '{"type": "object", "properties": {"title": {"type": "string"}, "price": {"type": "number"}}}';

  it('is on the new job form', async () => {
    const res = await get('/jobs/new');
    expect(res.text).toContain('<legend>Extraction by the language model</legend>');
    expect(res.text).toMatch(/<textarea id="extract-schema" name="extract_schema"/);
    expect(res.text).toMatch(/<textarea id="extract-prompt" name="extract_prompt"/);
  });

  it('creates a job extracting with the schema and prompt, which its page shows with its record fields', async () => {
    f.parseDetails = null;
    const res = await post({ extract_schema: SCHEMA, extract_prompt: 'The <main> price' });
    expect(res.status).toBe(303);
    const id = /\/console\/jobs\/(job_\w+)$/.exec(res.headers.location!)![1]!;
    expect((await f.jobs.get(f.owner, id)).extract).toEqual({
      schema: JSON.parse(SCHEMA),
      prompt: 'The <main> price',
      fields: ['title', 'price'],
    });
    const page = await get(`/jobs/${id}`);
    expect(page.text).toContain(
      'one object a page; record fields <span class="mono">title</span>, <span class="mono">price</span>',
    );
    expect(page.text).toContain('&quot;price&quot;: {\n');
    expect(page.text).toContain('<dd class="wrap">The &lt;main&gt; price</dd>');
    expect(page.text).toContain('each page’s record is the object the language model extracts');
  });

  it('shows a schema that is not JSON, and the API’s errors, at their fields, keeping what was typed', async () => {
    f.parseDetails = null;
    const bad = await post({ extract_schema: '{"type": ', extract_prompt: 'the price' });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(
      /<textarea id="extract-schema" name="extract_schema" class="mono" rows="6" aria-invalid="true" aria-describedby="err-extract-schema">\{&quot;type&quot;:<\/textarea><p class="error" id="err-extract-schema">is not valid JSON: [^<]+<\/p>/,
    );
    expect(bad.text).toContain('>the price</textarea>');
    f.parseDetails = { extract: 'no language model is configured (OPENAI_BASE_URL and MODEL_NAME)' };
    try {
      const refused = await post({ extract_prompt: 'the price' });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain(
        '<p class="error" id="err-extract-schema">no language model is configured (OPENAI_BASE_URL and MODEL_NAME)</p>',
      );
      f.parseDetails = { 'extract.prompt': 'must be at most 10000 characters' };
      const long = await post({ extract_prompt: 'x' });
      expect(long.text).toMatch(
        /name="extract_prompt" rows="3" maxlength="10000" aria-invalid="true" aria-describedby="err-extract-prompt">x<\/textarea><p class="error" id="err-extract-prompt">must be at most 10000 characters<\/p>/,
      );
    } finally {
      f.parseDetails = null;
    }
  });
});
