import type { DocumentView } from '@scrapejobs/contracts';
import { firecrawlDocument } from './document.ts';

const metadata: NonNullable<DocumentView['metadata']> = {
  title: 'Pricing',
  description: 'Plans and prices',
  language: 'en',
  canonical_url: 'https://example.com/pricing',
  keywords: 'plans, prices',
  robots: 'index, follow',
  favicon: 'https://example.com/favicon.ico',
  og: {
    title: 'Pricing | Example',
    description: 'See the plans',
    url: 'https://example.com/pricing',
    image: 'https://example.com/og.png',
    site_name: 'Example',
    locale: 'en_US',
    'locale:alternate': 'fr_FR',
    type: 'website',
  },
  twitter: { card: 'summary_large_image', site: '@example' },
  published_time: '2024-01-02T03:04:05Z',
  modified_time: null,
  json_ld: [{ '@type': 'WebPage' }],
  status_code: 200,
  content_type: 'text/html; charset=utf-8',
  source_url: 'http://example.com/pricing',
  url: 'https://example.com/pricing',
};

const doc: DocumentView = {
  url: 'http://example.com/pricing',
  status_code: 200,
  markdown: '# Pricing',
  html: '<h1>Pricing</h1>',
  raw_html: '<html><body><h1>Pricing</h1></body></html>',
  links: ['https://example.com/', 'https://example.com/signup'],
  metadata,
  truncated: [],
};

describe('firecrawlDocument', () => {
  it('shows the asked formats only', () => {
    const out = firecrawlDocument(doc, {
      version: 'v2',
      formats: ['markdown', 'links'],
      screenshotUrl: null,
    });
    expect(Object.keys(out).sort()).toEqual(['links', 'markdown', 'metadata']);
    expect(out.markdown).toBe('# Pricing');
    expect(out.links).toEqual(['https://example.com/', 'https://example.com/signup']);
  });

  it('names raw HTML rawHtml, and shows the screenshot URL when asked', () => {
    const out = firecrawlDocument(doc, {
      version: 'v1',
      formats: ['html', 'rawHtml', 'screenshot'],
      screenshotUrl: 'https://api.example/shots/1.png',
    });
    expect(out).toMatchObject({
      html: '<h1>Pricing</h1>',
      rawHtml: '<html><body><h1>Pricing</h1></body></html>',
      screenshot: 'https://api.example/shots/1.png',
    });
  });

  it('shows change tracking in Firecrawl’s names when the changeTracking format is asked', () => {
    const diff = { text: '--- before\n+++ after\n', json: { files: [] } };
    const tracked: DocumentView = {
      ...doc,
      change_tracking: {
        previous_scrape_at: '2026-12-01T10:00:00.000Z',
        change_status: 'changed',
        visibility: 'visible',
        diff,
        json: { price: { previous: 25, current: 30 } },
      },
    };
    expect(
      firecrawlDocument(tracked, {
        version: 'v2',
        formats: ['markdown', 'changeTracking'],
        screenshotUrl: null,
      }).changeTracking,
    ).toEqual({
      previousScrapeAt: '2026-12-01T10:00:00.000Z',
      changeStatus: 'changed',
      visibility: 'visible',
      diff,
      json: { price: { previous: 25, current: 30 } },
    });
    expect(
      firecrawlDocument(tracked, { version: 'v2', formats: ['markdown'], screenshotUrl: null }),
    ).not.toHaveProperty('changeTracking');
  });

  it('leaves out a screenshot the page does not have', () => {
    expect(
      firecrawlDocument(doc, { version: 'v2', formats: ['screenshot'], screenshotUrl: null }),
    ).not.toHaveProperty('screenshot');
  });

  it('names the metadata as Firecrawl does, keeping the og: and twitter: meta under their own names', () => {
    expect(firecrawlDocument(doc, { version: 'v2', formats: [], screenshotUrl: null }).metadata).toEqual({
      title: 'Pricing',
      description: 'Plans and prices',
      language: 'en',
      keywords: 'plans, prices',
      robots: 'index, follow',
      favicon: 'https://example.com/favicon.ico',
      ogTitle: 'Pricing | Example',
      ogDescription: 'See the plans',
      ogUrl: 'https://example.com/pricing',
      ogImage: 'https://example.com/og.png',
      ogLocale: 'en_US',
      ogSiteName: 'Example',
      ogLocaleAlternate: ['fr_FR'],
      publishedTime: '2024-01-02T03:04:05Z',
      'og:title': 'Pricing | Example',
      'og:description': 'See the plans',
      'og:url': 'https://example.com/pricing',
      'og:image': 'https://example.com/og.png',
      'og:site_name': 'Example',
      'og:locale': 'en_US',
      'og:locale:alternate': 'fr_FR',
      'og:type': 'website',
      'twitter:card': 'summary_large_image',
      'twitter:site': '@example',
      sourceURL: 'http://example.com/pricing',
      url: 'https://example.com/pricing',
      statusCode: 200,
      contentType: 'text/html; charset=utf-8',
      proxyUsed: 'basic',
    });
  });

  it('names a PDF’s page count numPages and keeps its own fields', () => {
    const pdf: DocumentView = {
      url: 'https://example.com/a.pdf',
      status_code: 200,
      markdown: 'text',
      metadata: { ...metadata, og: {}, twitter: {}, title: 'Report', pages: 12, author: 'Ann' },
      truncated: [],
    };
    expect(
      firecrawlDocument(pdf, { version: 'v2', formats: ['markdown'], screenshotUrl: null }).metadata,
    ).toMatchObject({ title: 'Report', numPages: 12, author: 'Ann' });
  });

  it('reports a failed page’s error, status and URLs without other metadata', () => {
    const failed: DocumentView = { url: 'https://example.com/gone', status_code: 404, truncated: [] };
    expect(
      firecrawlDocument(failed, {
        version: 'v2',
        formats: ['markdown'],
        screenshotUrl: null,
        error: 'HTTP 404',
      }),
    ).toEqual({
      metadata: {
        sourceURL: 'https://example.com/gone',
        url: 'https://example.com/gone',
        statusCode: 404,
        proxyUsed: 'basic',
        error: 'HTTP 404',
      },
    });
  });

  it('shows the results of screenshot and scrape actions, taken after the last action', () => {
    const out = firecrawlDocument(doc, {
      version: 'v2',
      formats: ['markdown'],
      screenshotUrl: 'https://api.example/shots/1.png',
      actions: { screenshots: 2, scrapes: 1, scripts: 0 },
    });
    expect(out.actions).toEqual({
      screenshots: ['https://api.example/shots/1.png', 'https://api.example/shots/1.png'],
      scrapes: [{ url: 'https://example.com/pricing', html: '<html><body><h1>Pricing</h1></body></html>' }],
      javascriptReturns: [],
      pdfs: [],
    });
    expect(out).not.toHaveProperty('rawHtml');
    expect(out).not.toHaveProperty('screenshot');
  });

  it("reads images and attributes from the raw HTML, and gives the scripts' values", () => {
    const page = {
      ...doc,
      raw_html: '<html><body><img src="/a.png"><a class="x" href="/p">p</a></body></html>',
      javascript_returns: [{ type: 'number', value: 2 }],
    };
    const out = firecrawlDocument(page, {
      version: 'v2',
      formats: ['images', 'attributes'],
      screenshotUrl: null,
      actions: { screenshots: 0, scrapes: 0, scripts: 1 },
      attributes: [{ selector: 'a.x', attribute: 'href' }],
    });
    expect(out.images).toEqual(['https://example.com/a.png']);
    expect(out.attributes).toEqual([{ selector: 'a.x', attribute: 'href', values: ['/p'] }]);
    expect(out.actions).toEqual({
      screenshots: [],
      scrapes: [],
      javascriptReturns: [{ type: 'number', value: 2 }],
      pdfs: [],
    });
    expect(out).not.toHaveProperty('rawHtml');
  });

  it('has no actions field without screenshot or scrape actions', () => {
    expect(
      firecrawlDocument(doc, {
        version: 'v2',
        formats: ['markdown'],
        screenshotUrl: null,
        actions: { screenshots: 0, scrapes: 0, scripts: 0 },
      }),
    ).not.toHaveProperty('actions');
  });
});
