/**
 * What the official JavaScript SDK (@mendable/firecrawl-js 4.x, v2 client and its v1 client)
 * sends is accepted as is, and what this package answers is read back by it. The SDK talks to
 * a local server that records each request and answers with this package's bodies.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Firecrawl, type ScrapeOptions as SdkScrapeOptions } from '@mendable/firecrawl-js';
import { crawlStatus, mapBody } from './bodies.ts';
import { parseCrawlRequest } from './crawl-request.ts';
import type { FirecrawlDocument } from './document.ts';
import { parseMapRequest } from './map-request.ts';
import { parseBatchScrapeRequest, parseScrapeRequest } from './scrape-request.ts';
import { parsedValue } from './testing.ts';
import type { FirecrawlVersion } from './types.ts';

interface Recorded {
  method: string;
  path: string;
  body: unknown;
}

const doc = (n: number): FirecrawlDocument => ({
  markdown: `# Page ${n}`,
  metadata: { sourceURL: `https://example.com/${n}`, url: `https://example.com/${n}`, statusCode: 200 },
});

let server: Server;
let base: string;
const recorded: Recorded[] = [];

const readBody = async (req: IncomingMessage): Promise<unknown> => {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text === '' ? undefined : JSON.parse(text);
};

/** The answer of each request, as this service's routes would give it. */
function answer(method: string, url: URL): unknown {
  const version = url.pathname.slice(1, 3) as FirecrawlVersion;
  const path = url.pathname.slice(3);
  const expiresAt = new Date('2030-01-01T00:00:00.000Z');
  const status = (page: number) =>
    crawlStatus({
      version,
      runStatus: 'success',
      urls: { total: 2, successful: 2, failed: 0, skipped: 0 },
      expiresAt,
      next: page === 0 ? `${base}${url.pathname}?skip=1` : null,
      data: [doc(page + 1)],
    });
  if (method === 'POST' && path === '/scrape') return { success: true, data: doc(1) };
  if (method === 'POST' && (path === '/crawl' || path === '/batch/scrape'))
    return {
      success: true,
      id: 'run-1',
      url: `${base}/${version}${path === '/crawl' ? '/crawl' : '/batch/scrape'}/run-1`,
    };
  if (method === 'POST' && path === '/map')
    return mapBody([{ url: 'https://example.com/a', title: 'A' }, { url: 'https://example.com/b' }], version);
  if (method === 'GET' && /^\/(crawl|batch\/scrape)\/run-1$/.test(path))
    return status(url.searchParams.get('skip') === '1' ? 1 : 0);
  return { success: false, error: `unexpected ${method} ${url.pathname}` };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const url = new URL(req.url ?? '/', base);
      recorded.push({ method: req.method ?? '', path: url.pathname, body });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(answer(req.method ?? '', url)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  recorded.length = 0;
});

const client = () => new Firecrawl({ apiKey: 'fc-test', apiUrl: base });
const lastBody = (path: string): unknown =>
  recorded.findLast((r) => r.method === 'POST' && r.path === path)?.body;

const scrapeOptions: SdkScrapeOptions = {
  formats: ['markdown', 'html', 'rawHtml', 'links', { type: 'screenshot', fullPage: true }],
  headers: { 'X-Test': '1' },
  includeTags: ['main'],
  excludeTags: ['nav'],
  onlyMainContent: false,
  timeout: 40_000,
  waitFor: 1000,
  mobile: true,
  actions: [
    { type: 'click', selector: '#q' },
    { type: 'write', text: 'hello' },
    { type: 'press', key: 'Enter' },
    { type: 'scroll', direction: 'down' },
    { type: 'wait', milliseconds: 500 },
    { type: 'scrape' },
  ],
  location: { country: 'DE', languages: ['de'] },
  skipTlsVerification: true,
  removeBase64Images: true,
  blockAds: true,
  proxy: 'auto',
  maxAge: 0,
  storeInCache: false,
  parsers: ['pdf'],
  integration: 'tests',
};

describe('the v2 client', () => {
  it('sends a scrape this package accepts, and reads the document back', async () => {
    const document = await client().scrape('example.com/page', scrapeOptions);
    expect(document.markdown).toBe('# Page 1');
    const body = lastBody('/v2/scrape') as Record<string, unknown>;
    expect(body.origin).toMatch(/^js-sdk@/);
    expect(parsedValue(parseScrapeRequest(body, 'v2'))).toMatchObject({
      url: 'http://example.com/page',
      formats: ['markdown', 'html', 'rawHtml', 'links', 'screenshot'],
      timeout: 40_000,
    });
  });

  it('sends a crawl this package accepts, and pages through the status', async () => {
    const firecrawl = client();
    const started = await firecrawl.startCrawl('https://example.com/docs/', {
      includePaths: ['^/docs/.*'],
      excludePaths: ['\\.pdf$'],
      maxDiscoveryDepth: 3,
      sitemap: 'skip',
      ignoreQueryParameters: true,
      limit: 25,
      crawlEntireDomain: false,
      allowExternalLinks: false,
      allowSubdomains: true,
      ignoreRobotsTxt: false,
      delay: 1,
      maxConcurrency: 2,
      regexOnFullURL: false,
      deduplicateSimilarURLs: true,
      webhook: { url: 'https://hooks.example/c', events: ['completed'], metadata: { a: 'b' } },
      scrapeOptions: { formats: ['markdown'], onlyMainContent: true },
      zeroDataRetention: false,
      integration: 'tests',
    });
    expect(started.id).toBe('run-1');
    expect(parseCrawlRequest(lastBody('/v2/crawl'), 'v2').ok).toBe(true);
    const status = await firecrawl.getCrawlStatus('run-1');
    expect(status).toMatchObject({ status: 'completed', total: 2, completed: 2, next: null });
    expect(status.data.map((d) => d.markdown)).toEqual(['# Page 1', '# Page 2']);
  });

  it('sends a batch scrape this package accepts', async () => {
    const firecrawl = client();
    await firecrawl.startBatchScrape(['https://example.com/1', 'example.com/2'], {
      options: { formats: ['markdown', 'links'], waitFor: 100 },
      webhook: 'https://hooks.example/b',
      ignoreInvalidURLs: true,
      maxConcurrency: 3,
      zeroDataRetention: false,
      integration: 'tests',
    });
    expect(parsedValue(parseBatchScrapeRequest(lastBody('/v2/batch/scrape'), 'v2')).urls).toEqual([
      'https://example.com/1',
      'http://example.com/2',
    ]);
    const status = await firecrawl.getBatchScrapeStatus('run-1');
    expect(status.data).toHaveLength(2);
  });

  it('sends a map this package accepts, and reads the links back', async () => {
    const map = await client().map('https://example.com', {
      search: 'docs',
      sitemap: 'include',
      includeSubdomains: false,
      ignoreQueryParameters: true,
      limit: 10,
      timeout: 20_000,
      location: { country: 'US' },
      integration: 'tests',
    });
    expect(map.links).toEqual([
      { url: 'https://example.com/a', title: 'A' },
      { url: 'https://example.com/b' },
    ]);
    expect(parsedValue(parseMapRequest(lastBody('/v2/map'), 'v2'))).toMatchObject({
      search: 'docs',
      limit: 10,
    });
  });
});

describe('the v1 client', () => {
  const v1 = () => client().v1;

  it('sends a scrape this package accepts', async () => {
    const result = await v1().scrapeUrl('https://example.com/page', {
      formats: ['markdown', 'screenshot@fullPage'],
      waitFor: 500,
      timeout: 30_000,
      headers: { 'X-Test': '1' },
      location: { country: 'US' },
      actions: [{ type: 'wait', milliseconds: 100 }],
    });
    expect(result).toMatchObject({ success: true, markdown: '# Page 1' });
    expect(parseScrapeRequest(lastBody('/v1/scrape'), 'v1').ok).toBe(true);
  });

  it('crawls to the end: the last status page has no next, which the v1 client requires', async () => {
    const result = await v1().crawlUrl(
      'https://example.com/',
      {
        includePaths: ['^/docs'],
        maxDepth: 5,
        maxDiscoveryDepth: 2,
        limit: 10,
        allowBackwardLinks: true,
        allowExternalLinks: false,
        ignoreSitemap: true,
        scrapeOptions: { formats: ['markdown'] },
        webhook: 'https://hooks.example/v1',
      },
      1,
    );
    expect(parseCrawlRequest(lastBody('/v1/crawl'), 'v1').ok).toBe(true);
    expect(result).toMatchObject({ success: true, status: 'completed' });
    expect((result as { data: FirecrawlDocument[] }).data.map((d) => d.markdown)).toEqual([
      '# Page 1',
      '# Page 2',
    ]);
  });

  it('sends a batch scrape this package accepts', async () => {
    await v1().asyncBatchScrapeUrls(
      ['https://example.com/1'],
      { formats: ['html'] },
      undefined,
      undefined,
      false,
    );
    expect(parseBatchScrapeRequest(lastBody('/v1/batch/scrape'), 'v1').ok).toBe(true);
  });

  it('sends a map this package accepts, and reads the links back', async () => {
    const result = await v1().mapUrl('https://example.com', {
      search: 'a',
      ignoreSitemap: false,
      sitemapOnly: false,
      includeSubdomains: true,
      limit: 50,
    });
    expect(result).toEqual({ success: true, links: ['https://example.com/a', 'https://example.com/b'] });
    expect(parseMapRequest(lastBody('/v1/map'), 'v1').ok).toBe(true);
  });
});
