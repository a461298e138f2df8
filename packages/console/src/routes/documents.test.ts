import { packDocument } from '@scrapejobs/content';
import { createJobSchema } from '@scrapejobs/contracts';
import request from 'supertest';
import { type ConsoleFixture, consoleFixture } from '../testing.ts';

// Page content in the console (docs/api.md §17): the job form's formats and content fields, the
// job page's settings, and a run's documents, over the real domain services and database. The
// documents are stored as the scraper worker stores them: the worker is not part of these tests.

let f: ConsoleFixture;

beforeAll(async () => {
  f = await consoleFixture('reader@example.com');
});

afterAll(async () => {
  await f.close();
});

const get = (path: string) => request(f.app).get(`/console${path}`).set('Cookie', f.session.cookie);

const metadata = (url: string, over: Record<string, unknown> = {}) => ({
  title: `Title of ${url}`,
  description: null,
  language: 'en',
  canonical_url: null,
  keywords: null,
  robots: null,
  favicon: null,
  og: {},
  twitter: {},
  published_time: null,
  modified_time: null,
  json_ld: [],
  status_code: 200,
  content_type: 'text/html',
  source_url: url,
  url,
  ...over,
});

interface Stored {
  url: string;
  statusCode?: number | null;
  document: Parameters<typeof packDocument>[0];
}

/** A job keeping `formats`, and a run of it holding `documents` in this order. */
async function runWithDocuments(formats: string[], documents: Stored[]) {
  const job = await f.jobs.create(
    f.owner,
    createJobSchema.parse({ name: 'Pages <docs>', source: 'https://shop.example/', queries: [], formats }),
  );
  const { runId } = await f.jobs.run(f.owner, job.id);
  for (const [seq, d] of documents.entries()) {
    const packed = packDocument(d.document);
    await f.tdb.db.runDocument.create({
      data: {
        runId,
        seq,
        url: d.url,
        statusCode: d.statusCode === undefined ? 200 : d.statusCode,
        bytes: packed.bytes,
        markdownHash: packed.markdownHash ? Buffer.from(packed.markdownHash) : null,
        data: Buffer.from(packed.data),
      },
    });
  }
  const base = `/jobs/${job.id}/runs/${runId}`;
  return { jobId: job.id, runId, base, documents: `${base}/documents` };
}

const view = (base: string, url: string) =>
  `${base}/documents/view?${new URLSearchParams({ url }).toString()}`;

/** The rows of the documents table: each cell's text, tags left out. */
function documentRows(text: string): string[][] {
  const body = /<table class="cards documents">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(text)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) =>
      cell[1]!
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    ),
  );
}

const HOSTILE_MARKDOWN = '# Hello\n\n<script>alert(1)</script>\n\n<img src=x onerror="alert(2)">';

describe('a run’s documents', () => {
  it('are a tab of the run page when the run kept documents, and only then', async () => {
    const kept = await runWithDocuments(['markdown'], []);
    const page = await get(kept.base);
    expect(page.status).toBe(200);
    expect(page.text).toContain(
      `<nav aria-label="Views of the run"><ul class="tab-list">\n<li><a class="tab" href="/console${kept.base}" aria-current="page">Overview</a></li>\n<li><a class="tab" href="/console${kept.documents}">Documents</a></li>`,
    );
    const records = await f.jobs.create(
      f.owner,
      createJobSchema.parse({
        name: 'Records',
        source: 'https://shop.example/',
        queries: [{ name: 'title', type: 'css', query: 'h1' }],
      }),
    );
    const { runId } = await f.jobs.run(f.owner, records.id);
    const plain = await get(`/jobs/${records.id}/runs/${runId}`);
    expect(plain.status).toBe(200);
    expect(plain.text).not.toContain('Views of the run');
    const none = await get(`/jobs/${records.id}/runs/${runId}/documents`);
    expect(none.text).toContain('This run kept no documents: its job had no formats when it started');
  });

  it('are listed 20 a page in the run’s URL order, with URL, HTTP status and what was cut, escaped', async () => {
    const stored: Stored[] = Array.from({ length: 25 }, (_, i) => ({
      url: i === 1 ? 'https://shop.example/p/<script>x</script>' : `https://shop.example/p/${i}`,
      statusCode: i === 2 ? null : 200,
      document: { markdown: `# Page ${i}`, truncated: i === 3 ? ['markdown', 'links'] : [] },
    }));
    const { documents, base } = await runWithDocuments(['markdown', 'links'], stored);
    const first = await get(documents);
    expect(first.status).toBe(200);
    const rows = documentRows(first.text);
    expect(rows).toHaveLength(20);
    expect(rows.slice(0, 4)).toEqual([
      ['https://shop.example/p/0', '200', 'no'],
      ['https://shop.example/p/&lt;script&gt;x&lt;/script&gt;', '200', 'no'],
      ['https://shop.example/p/2', '—', 'no'],
      ['https://shop.example/p/3', '200', 'markdown, links'],
    ]);
    expect(first.text).not.toContain('<script>x');
    expect(first.text).toContain(
      `<a class="mono wrap" href="/console${view(base, stored[1]!.url).replaceAll('&', '&amp;')}">`,
    );
    expect(first.text).toContain(`<a class="tab" href="/console${documents}" aria-current="page">`);

    const next = /<a href="\/console([^"]+)">Next documents →<\/a>/
      .exec(first.text)![1]!
      .replaceAll('&amp;', '&');
    const second = await get(next);
    expect(documentRows(second.text).map((r) => r[0])).toEqual(
      Array.from({ length: 5 }, (_, i) => `https://shop.example/p/${20 + i}`),
    );
    expect(second.text).not.toContain('Next documents');
  });

  it('shows a document’s markdown as escaped text, never as markup, with its metadata as a table and its links', async () => {
    const url = 'https://shop.example/news';
    const { base } = await runWithDocuments(
      ['markdown', 'links', 'metadata', 'html'],
      [
        {
          url,
          document: {
            markdown: HOSTILE_MARKDOWN,
            html: '<p>Hello</p><script>alert(3)</script>',
            links: ['https://shop.example/a?x=1&y=<2>', 'javascript:alert(4)'],
            metadata: metadata(url, {
              title: 'News <b>today</b>',
              url: 'https://shop.example/news/',
              og: { title: 'OG <title>', image: 'https://shop.example/i.png' },
              json_ld: [{ '@type': 'Article', headline: '</script><script>alert(5)</script>' }],
              author: 'Ann',
            }),
            truncated: ['links'],
          },
        },
      ],
    );
    const res = await get(view(base, url));
    expect(res.status).toBe(200);
    expect(res.text).toContain(
      '<pre class="text markdown"># Hello\n\n&lt;script&gt;alert(1)&lt;/script&gt;\n\n&lt;img src=x onerror=&quot;alert(2)&quot;&gt;</pre>',
    );
    for (const n of [1, 2, 3, 4, 5])
      expect(res.text).not.toMatch(new RegExp(`<script>alert\\(${n}\\)|="alert\\(${n}\\)`));
    expect(res.text).not.toContain('<img src=x');

    const metadataRows = [
      ...(/<table class="kv metadata">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(res.text)?.[1] ?? '').matchAll(
        /<tr><th scope="row" class="mono">([^<]+)<\/th><td>([\s\S]*?)<\/td><\/tr>/g,
      ),
    ].map(([, name, value]) => [name, value]);
    expect(Object.fromEntries(metadataRows)).toMatchObject({
      title: '<span class="wrap">News &lt;b&gt;today&lt;/b&gt;</span>',
      description: '<span class="muted">none</span>',
      og: '<dl class="record"><div><dt>title</dt><dd>OG &lt;title&gt;</dd></div><div><dt>image</dt><dd>https://shop.example/i.png</dd></div></dl>',
      twitter: '<span class="muted">none</span>',
      json_ld: `<pre class="text">{\n  &quot;@type&quot;: &quot;Article&quot;,\n  &quot;headline&quot;: &quot;&lt;/script&gt;&lt;script&gt;alert(5)&lt;/script&gt;&quot;\n}</pre>`,
      status_code: '<span class="wrap">200</span>',
      author: '<span class="wrap">Ann</span>',
    });
    expect(res.text).toContain(
      '<dt>Final URL</dt><dd><span class="mono">https://shop.example/news/</span></dd>',
    );
    expect(res.text).toContain('<dt>Truncated</dt><dd>links</dd>');
    expect(res.text).toContain(
      '<ol class="links"><li><a class="mono wrap" href="https://shop.example/a?x=1&amp;y=&lt;2&gt;" rel="noreferrer nofollow">https://shop.example/a?x=1&amp;y=&lt;2&gt;</a></li><li class="mono wrap">javascript:alert(4)</li></ol>',
    );
    expect(res.text).not.toContain('href="javascript:');
    expect(res.text).toContain(
      '<pre class="text">&lt;p&gt;Hello&lt;/p&gt;&lt;script&gt;alert(3)&lt;/script&gt;</pre>',
    );
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
  });

  it('says which formats a document does not have', async () => {
    const url = 'https://shop.example/';
    const { base } = await runWithDocuments(['links'], [{ url, document: { links: [], truncated: [] } }]);
    const res = await get(view(base, url));
    expect(res.text).toContain('Not kept: the run’s formats leave markdown out.');
    expect(res.text).toContain('Not kept: the run’s formats leave metadata out.');
    expect(res.text).toContain('The page links nowhere.');
  });

  it('is a 404 page for a URL the run has no document of, another account’s run, or another job’s', async () => {
    const url = 'https://shop.example/';
    const mine = await runWithDocuments(
      ['markdown'],
      [{ url, document: { markdown: 'Secret', truncated: [] } }],
    );
    const other = await runWithDocuments(['markdown'], []);
    const stranger = await f.signIn('stranger@example.com');
    for (const [cookie, path] of [
      [f.session.cookie, view(mine.base, 'https://shop.example/other')],
      [f.session.cookie, `${mine.base}/documents/view`],
      [stranger.cookie, view(mine.base, url)],
      [stranger.cookie, mine.documents],
      [f.session.cookie, view(`/jobs/${other.jobId}/runs/${mine.runId}`, url)],
    ]) {
      const res = await request(f.app).get(`/console${path}`).set('Cookie', cookie!);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).not.toContain('Secret');
    }
  });

  it('is a 400 page for a cursor this run did not give', async () => {
    const { documents } = await runWithDocuments(['markdown'], []);
    const res = await get(`${documents}?cursor=nonsense`);
    expect(res.status).toBe(400);
    expect(res.text).toContain('<h1>Bad request</h1><p>The request is invalid.</p>');
  });

  it('downloads as JSON Lines from the job page’s link, and never as CSV', async () => {
    const url = 'https://shop.example/';
    const { jobId, runId } = await runWithDocuments(
      ['markdown'],
      [{ url, document: { markdown: '# Hi', truncated: [] } }],
    );
    await f.tdb.db.run.update({ where: { id: runId }, data: { status: 'success', finishedAt: new Date() } });
    const page = await get(`/jobs/${jobId}`);
    const link =
      /<a class="btn btn-plain" href="\/console([^"]+)" download>Download documents \(JSON Lines\)<\/a>/
        .exec(page.text)![1]!
        .replaceAll('&amp;', '&');
    expect(link).toBe(`/jobs/${jobId}/download?content=documents&format=jsonl&run_id=${runId}`);
    const res = await get(link);
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="${jobId}-${runId}-documents.jsonl"`,
    );
    expect(
      res.text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([{ url, status_code: 200, markdown: '# Hi', truncated: [] }]);
    const csv = await get(`/jobs/${jobId}/download?content=documents&format=csv`);
    expect(csv.status).toBe(400);
    expect(csv.text).toContain('format must be json or jsonl with content=documents');
  });
});

describe('the job form’s page content', () => {
  const form = (over: Record<string, string | string[]> = {}) => ({
    _csrf: f.session.csrf,
    name: 'Pages',
    source: 'https://shop.example/',
    q_rows: '1',
    q_name_0: '',
    q_type_0: 'css',
    q_query_0: '',
    formats: ['markdown', 'metadata'],
    content_include: 'article\n\nmain .post',
    content_exclude: '.ads',
    change_tracking: '1',
    change_tracking_key: '',
    change_tracking_content: '1',
    ...over,
  });
  const post = (body: Record<string, string | string[]>) =>
    request(f.app).post('/console/jobs').set('Cookie', f.session.cookie).type('form').send(body);

  it('shows the formats, the main-content box (ticked) and the selector fields on the new job form', async () => {
    const res = await get('/jobs/new');
    expect(res.text).toContain('<legend>Page content</legend>');
    for (const format of ['markdown', 'html', 'raw_html', 'links', 'metadata', 'screenshot'])
      expect(res.text).toContain(`<input type="checkbox" name="formats" value="${format}">`);
    expect(res.text).toMatch(/name="content_main" value="1" checked>/);
    expect(res.text).toMatch(/<textarea id="content-include" name="content_include"[^>]*><\/textarea>/);
    expect(res.text).toMatch(/<textarea id="content-exclude" name="content_exclude"[^>]*><\/textarea>/);
    expect(res.text).toMatch(/name="change_tracking_content" value="1">/);
  });

  it('creates a job with no queries that keeps the formats ticked, the content typed and compares pages', async () => {
    const res = await post(form());
    expect(res.status).toBe(303);
    const id = /\/console\/jobs\/(job_\w+)$/.exec(res.headers.location!)![1]!;
    const job = await f.jobs.get(f.owner, id);
    expect(job).toMatchObject({
      queries: [],
      formats: ['markdown', 'metadata'],
      content: { only_main_content: false, include_tags: ['article', 'main .post'], exclude_tags: ['.ads'] },
      changeTracking: { key: [], content: true },
    });
    const page = await get(`/jobs/${id}`);
    expect(page.text).toContain(
      '<dt>Page documents</dt><dd><span class="mono">markdown</span>, <span class="mono">metadata</span></dd>',
    );
    expect(page.text).toContain('<dt>Page content</dt><dd>the whole body</dd>');
    expect(page.text).toContain(
      '<dt>Include selectors</dt><dd><ul class="plain"><li class="mono wrap">article</li><li class="mono wrap">main .post</li></ul></dd>',
    );
    expect(page.text).toContain('No queries: the job keeps its pages’ documents only.');
    expect(page.text).toContain('each page’s markdown is compared too');
  });

  it('keeps the content null when it says what the defaults say, and the job page says records only without formats', async () => {
    const res = await post(
      form({
        formats: 'links',
        content_main: '1',
        content_include: '',
        content_exclude: '',
        change_tracking: '',
      }),
    );
    const id = /(job_\w+)$/.exec(res.headers.location!)![1]!;
    expect(await f.jobs.get(f.owner, id)).toMatchObject({
      formats: ['links'],
      content: null,
      changeTracking: null,
    });
    expect((await get(`/jobs/${id}`)).text).toContain('<dt>Page content</dt><dd>the main content only</dd>');

    const records = await post(
      form({
        formats: [],
        content_main: '1',
        content_include: '',
        content_exclude: '',
        q_name_0: 't',
        q_query_0: 'h1',
      }),
    );
    const recordsId = /(job_\w+)$/.exec(records.headers.location!)![1]!;
    expect((await get(`/jobs/${recordsId}`)).text).toContain(
      '<dt>Page documents</dt><dd>none (records only)</dd>',
    );
  });

  it('shows the API’s errors at the formats and at the selector’s line, keeping what was typed', async () => {
    f.parseDetails = {
      'formats[1]': 'must be one of markdown, html, raw_html, links, metadata, screenshot',
      'content.include_tags[1]': 'invalid CSS selector: unexpected <',
    };
    try {
      const res = await post(
        form({ formats: ['markdown', 'pdf'], content_include: 'article\n\n<main', content_main: '1' }),
      );
      expect(res.status).toBe(400);
      expect(res.text).toContain(
        '<code>include selector line 3</code>: invalid CSS selector: unexpected &lt;',
      );
      expect(res.text).toContain(
        '<p class="error" id="err-content-include">include selector line 3: invalid CSS selector: unexpected &lt;</p>',
      );
      expect(res.text).toMatch(
        /<textarea id="content-include" name="content_include" class="mono" rows="2" aria-invalid="true" aria-describedby="err-content-include">article\n\n&lt;main<\/textarea>/,
      );
      expect(res.text).toContain(
        '<div class="checks" role="group" aria-label="Document formats" aria-invalid="true" aria-describedby="err-formats">',
      );
      expect(res.text).toContain('<input type="checkbox" name="formats" value="markdown" checked>');
      expect(res.text).toMatch(/name="change_tracking_content" value="1" checked>/);
    } finally {
      f.parseDetails = null;
    }
  });

  it('names the missing query or format', async () => {
    const res = await post(form({ formats: [] }));
    expect(res.status).toBe(400);
    expect(res.text).toContain(
      '<code>queries</code>: must have at least one query, unless formats names at least one',
    );
  });
});
