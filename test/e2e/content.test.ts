import { makePdf } from '../../packages/content/src/testing/pdf.ts';
import { buildTestApi } from '../support/api.ts';
import { client } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

// Page content (docs/api.md §17) end to end: the real API, a real scraper worker, a local site
// with a documentation page, a news article, a PDF, an image and a page in Latin-1.

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let c: ReturnType<typeof client>;
let worker: Proc;
let site: Awaited<ReturnType<typeof startSite>>;
const prefix = testPrefix();

/** The site's pages by path: [content type, body]; tests change them between runs. */
let pages: Record<string, [string, string | Uint8Array]> = {};

const docsPage = (version: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Install | Widget docs</title>
<meta name="description" content="How to install Widget.">
<meta property="og:title" content="Installing Widget"><meta property="og:type" content="article">
<link rel="canonical" href="/docs/install"><link rel="icon" href="/static/icon.png">
<script type="application/ld+json">{"@type":"TechArticle","headline":"Install"}</script>
<script>window.analytics = 1;</script><style>body { color: red }</style></head>
<body>
<header><nav><a href="/">Home</a> <a href="/pricing">Pricing</a> <a href="/blog">Blog</a></nav></header>
<aside class="sidebar"><ul><li><a href="/docs/intro">Introduction</a></li><li><a href="/docs/install">Installation</a></li>
<li><a href="/docs/config">Configuration</a></li><li><a href="/docs/deploy">Deployment</a></li></ul></aside>
<main><article>
<h1>Installing Widget</h1>
<p>Widget runs on every machine with Node.js. This page explains how to install version ${version}, how to check
that it works, and what to do when it does not.</p>
<p>Install it with your package manager, then run the check below. The check prints the version and exits.</p>
<pre><code class="language-sh">npm install widget@${version}
widget --version</code></pre>
<h2>Requirements</h2>
<table><thead><tr><th>System</th><th>Minimum</th></tr></thead>
<tbody><tr><td>Node.js</td><td>24</td></tr><tr><td>Memory</td><td>512 MiB</td></tr></tbody></table>
<p>Read the <a href="/docs/config">configuration guide</a> next.</p>
<p hidden>Internal note that no reader sees.</p>
</article></main>
<footer><p>© Widget Inc. All rights reserved.</p><a href="https://social.example.org/widget">Follow us</a></footer>
</body></html>`;

const newsPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Harbour reopens</title>
<meta property="article:published_time" content="2026-11-02T08:00:00Z"></head><body>
<div class="cookie-banner" id="cookie-consent"><p>We use cookies to improve your experience.</p><button>Accept all</button></div>
<nav class="top"><a href="/world">World</a><a href="/sport">Sport</a></nav>
<article class="story"><h1>The harbour reopens after the storm</h1>
<p class="byline">By A. Reporter</p>
<p>The harbour reopened on Monday, three weeks after the storm damaged its two piers, the port authority said.
Fishing boats were the first to return, followed by the ferry to the islands.</p>
<p>Repairs cost more than expected, and the authority said the work on the second pier would go on until spring,
with one berth closed at a time so that the ferry keeps its schedule.</p>
<blockquote><p>We are glad to see the boats back.</p></blockquote>
</article>
<section class="related"><h2>Related stories</h2><ul><li><a href="/storm">Storm hits the coast</a></li></ul></section>
</body></html>`;

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  const { token } = await api.keys.create({
    email: 'reader@example.com',
    mode: 'test',
    scopes: ['jobs:read', 'jobs:write'],
    name: 'r',
  });
  c = client(api.app, token);
  site = await startSite((req, res) => {
    const page = pages[new URL(req.url ?? '/', 'http://site').pathname];
    if (!page) return false;
    res.setHeader('Content-Type', page[0]);
    res.end(page[1]);
    return true;
  });
  worker = startApp('scraper-worker', scraperWorkerEnv(tdb.url, prefix.prefix));
  await worker.waitForLog((l) => l.msg === 'scraper worker started');
});

afterAll(async () => {
  await worker.kill('SIGTERM');
  await api.close();
  await site.close();
  await tdb.drop();
  await prefix.cleanup();
});

async function createJob(body: Record<string, unknown>) {
  const res = await c.post('/jobs', { name: 'content', rate_limit: 6000, queries: [], ...body });
  expect(res.status).toBe(201);
  return res.body.job_id as string;
}

/** Runs the job and waits until the run has ended and been analysed; returns the run. */
async function runAnalysed(jobId: string) {
  const started = await c.post(`/jobs/${jobId}/run`);
  expect(started.status).toBe(202);
  const runId = started.body.run_id as string;
  return until(async () => {
    const run = await c.get(`/jobs/${jobId}/runs/${runId}`);
    return run.body.health ? run.body : null;
  }, 30_000);
}

interface DocumentBody {
  url: string;
  status_code: number | null;
  markdown?: string;
  html?: string;
  raw_html?: string;
  links?: string[];
  metadata?: Record<string, unknown>;
  truncated: string[];
}

async function documentsOf(jobId: string, runId: string): Promise<DocumentBody[]> {
  const res = await c.get(`/jobs/${jobId}/runs/${runId}/documents?limit=100`);
  expect(res.status).toBe(200);
  return res.body.documents;
}

describe('documents', () => {
  it('keeps each page as markdown, clean html, raw html, links and metadata, main content only', async () => {
    pages = {
      '/docs/install': ['text/html; charset=utf-8', docsPage('2.1')],
      '/news/harbour': ['text/html; charset=utf-8', newsPage],
    };
    const jobId = await createJob({
      source: `${site.url}/{docs/install,news/harbour}`,
      formats: ['markdown', 'html', 'raw_html', 'links', 'metadata'],
    });
    const run = await runAnalysed(jobId);
    expect(run).toMatchObject({ status: 'success', successful_urls: 2, results_count: 0 });
    const [docs, news] = await documentsOf(jobId, run.run_id);

    expect(docs!.url).toBe(`${site.url}/docs/install`);
    expect(docs!.status_code).toBe(200);
    const markdown = docs!.markdown!;
    expect(markdown).toMatch(/^# Installing Widget$/m);
    expect(markdown).toContain('```sh\nnpm install widget@2.1\nwidget --version\n```');
    expect(markdown).toMatch(/\| System +\| Minimum +\|/);
    expect(markdown).toContain(`[configuration guide](${site.url}/docs/config)`);
    for (const boilerplate of ['Pricing', 'Deployment', 'All rights reserved', 'Internal note', 'analytics'])
      expect(markdown).not.toContain(boilerplate);
    expect(docs!.html).toContain('<h1>Installing Widget</h1>');
    expect(docs!.html).not.toMatch(/<script|<style/);
    expect(docs!.raw_html).toBe(docsPage('2.1'));
    // Links of the whole page, absolute, once each, in document order.
    expect(docs!.links!.slice(0, 3)).toEqual([`${site.url}/`, `${site.url}/pricing`, `${site.url}/blog`]);
    expect(docs!.links).toContain('https://social.example.org/widget');
    expect(new Set(docs!.links).size).toBe(docs!.links!.length);
    expect(docs!.metadata).toMatchObject({
      title: 'Install | Widget docs',
      description: 'How to install Widget.',
      language: 'en',
      canonical_url: `${site.url}/docs/install`,
      favicon: `${site.url}/static/icon.png`,
      og: { title: 'Installing Widget', type: 'article' },
      json_ld: [{ '@type': 'TechArticle', headline: 'Install' }],
      status_code: 200,
      content_type: 'text/html; charset=utf-8',
      source_url: `${site.url}/docs/install`,
      url: `${site.url}/docs/install`,
    });
    expect(docs!.truncated).toEqual([]);

    expect(news!.markdown).toContain('The harbour reopened on Monday');
    expect(news!.markdown).toContain('> We are glad to see the boats back.');
    expect(news!.markdown).not.toMatch(/cookies|Accept all|Related stories|Sport/);
    expect(news!.metadata).toMatchObject({ published_time: '2026-11-02T08:00:00Z' });

    // The same documents, downloaded as JSON Lines.
    const jsonl = await c.get(`/jobs/${jobId}/download?content=documents&format=jsonl&run_id=${run.run_id}`);
    expect(jsonl.status).toBe(200);
    const lines = jsonl.text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([docs, news]);
  });

  it('reads a PDF page by page, applies regex queries to its text, and describes an image', async () => {
    const pdf = await makePdf({
      title: 'Annual report',
      author: 'Finance team',
      pages: [
        ['Annual report 2026', 'Revenue grew to 4,200 units this year.'],
        ['The second page explains the costs.'],
        ['The third page lists the plans for next year.'],
      ],
    });
    pages = {
      '/report.pdf': ['application/pdf', pdf],
      '/logo.png': [
        'image/png',
        new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]),
      ],
      '/latin': [
        'text/html; charset=iso-8859-1',
        Buffer.from('<html><body><h1>Caf\xe9 cr\xe8me</h1></body></html>', 'latin1'),
      ],
    };
    const jobId = await createJob({
      source: `${site.url}/{report.pdf,logo.png,latin}`,
      queries: [
        { name: 'revenue', type: 'regex', query: '/Revenue grew to ([\\d,]+) units/' },
        { name: 'heading', type: 'css', query: 'h1' },
      ],
      formats: ['markdown', 'metadata'],
    });
    const run = await runAnalysed(jobId);
    expect(run).toMatchObject({ status: 'success', successful_urls: 3 });
    const [report, logo, latin] = await documentsOf(jobId, run.run_id);

    const text = report!.markdown!;
    const order = ['Annual report 2026', 'Revenue grew', 'second page', 'third page'].map((s) =>
      text.indexOf(s),
    );
    expect(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!))).toBe(true);
    expect(report!.metadata).toMatchObject({
      title: 'Annual report',
      author: 'Finance team',
      pages: 3,
      content_type: 'application/pdf',
    });
    expect(logo).toEqual({
      url: `${site.url}/logo.png`,
      status_code: 200,
      metadata: expect.objectContaining({ title: null, content_type: 'image/png', status_code: 200 }),
      truncated: [],
    });
    expect(latin!.markdown).toContain('# Café crème');

    const results = await c.get(`/jobs/${jobId}/results?run_id=${run.run_id}`);
    const byUrl = Object.fromEntries(
      results.body.results.map((r: { url: string; data: unknown }) => [r.url, r.data]),
    );
    expect(byUrl[`${site.url}/report.pdf`]).toEqual({ revenue: '4,200', heading: null });
    expect(byUrl[`${site.url}/latin`]).toEqual({ revenue: null, heading: 'Café crème' });
  });
});

describe('change tracking of pages', () => {
  it('lists each changed page with a diff of its markdown, counts pages and announces them', async () => {
    pages = {
      '/docs/install': ['text/html; charset=utf-8', docsPage('2.1')],
      '/news/harbour': ['text/html; charset=utf-8', newsPage],
    };
    const jobId = await createJob({
      source: `${site.url}/{docs/install,news/harbour}`,
      formats: ['metadata'],
      change_tracking: { key: ['url'], content: true },
    });
    const first = await runAnalysed(jobId);
    const firstChanges = await c.get(`/jobs/${jobId}/runs/${first.run_id}/changes`);
    expect(firstChanges.body.summary.pages).toEqual({ added: 2, removed: 0, changed: 0, unchanged: 0 });
    expect(firstChanges.body.changes).toEqual([
      expect.objectContaining({ kind: 'page', type: 'added', url: `${site.url}/docs/install` }),
      expect.objectContaining({ kind: 'page', type: 'added', url: `${site.url}/news/harbour` }),
    ]);
    // The markdown kept for the comparison is not shown: the job asked for metadata only.
    const [doc] = await documentsOf(jobId, first.run_id);
    expect(doc).not.toHaveProperty('markdown');

    pages['/docs/install'] = ['text/html; charset=utf-8', docsPage('2.2')];
    const second = await runAnalysed(jobId);
    const changes = await c.get(`/jobs/${jobId}/runs/${second.run_id}/changes`);
    expect(changes.body.summary).toMatchObject({
      added: 0,
      removed: 0,
      changed: 0,
      pages: { added: 0, removed: 0, changed: 1, unchanged: 1 },
    });
    expect(changes.body.changes).toHaveLength(1);
    const [page] = changes.body.changes;
    expect(page).toMatchObject({ kind: 'page', type: 'changed', url: `${site.url}/docs/install` });
    expect(page.diff).toMatch(/^-.*widget@2\.1$/m);
    expect(page.diff).toMatch(/^\+.*widget@2\.2$/m);
    expect(page.diff).not.toContain('harbour');

    const events = await tdb.db.event.findMany({ where: { jobId, kind: 'job.changed' } });
    expect(events.map((e) => (e.data as { run_id: string }).run_id)).toEqual([first.run_id, second.run_id]);
  });
});
