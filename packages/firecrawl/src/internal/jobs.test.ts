import { type CreateJobInput, createJobSchema } from '@scrapejobs/contracts';
import { parseCrawlRequest } from './crawl-request.ts';
import { MOBILE_USER_AGENT } from './fetch-settings.ts';
import { batchScrapeJob, crawlJob, MAP_FETCHED_PAGES, mapJob, scrapeJob } from './jobs.ts';
import { parseMapRequest } from './map-request.ts';
import { parseBatchScrapeRequest, parseScrapeRequest } from './scrape-request.ts';
import { parsedValue } from './testing.ts';
import type { FirecrawlVersion } from './types.ts';

/** The job as POST /jobs takes it: valid, and already in its normal form. */
function expectValidJob(job: CreateJobInput): void {
  const parsed = createJobSchema.safeParse(job);
  if (!parsed.success) throw new Error(JSON.stringify(parsed.error.issues));
  expect(parsed.data).toEqual(job);
}

const scrapeJobOf = (fields: Record<string, unknown>, version: FirecrawlVersion = 'v2') => {
  const out = scrapeJob(
    parsedValue(parseScrapeRequest({ url: 'https://example.com/page', ...fields }, version)),
  );
  expectValidJob(out.job);
  return out;
};
const crawlJobOf = (fields: Record<string, unknown>, version: FirecrawlVersion = 'v2') => {
  const out = crawlJob(parsedValue(parseCrawlRequest({ url: 'https://example.com/', ...fields }, version)));
  expectValidJob(out.job);
  return out;
};
const mapJobOf = (fields: Record<string, unknown>, version: FirecrawlVersion = 'v2') => {
  const out = mapJob(parsedValue(parseMapRequest({ url: 'https://example.com/', ...fields }, version)));
  expectValidJob(out.job);
  return out;
};

describe('scrapeJob', () => {
  it('fetches one page with markdown and metadata by default, rendering it only when it needs it', () => {
    expect(scrapeJobOf({})).toEqual({
      job: {
        name: 'Firecrawl scrape https://example.com/page',
        source: 'https://example.com/page',
        queries: [],
        formats: ['markdown', 'metadata'],
        content: { only_main_content: true, include_tags: [], exclude_tags: [] },
        rate_limit: 6000,
        scheduling: null,
        render_config: {
          enabled: true,
          mode: 'auto',
          wait_strategy: 'load',
          wait_timeout_ms: 30_000,
          actions: [],
          screenshot: false,
          screenshot_options: null,
          block_resources: null,
        },
        proxy_config: null,
        crawl: null,
        change_tracking: null,
        request: null,
        retention_days: null,
        refetch: 'always',
        extract: null,
      },
      timeoutMs: 30_000,
    });
  });

  it('maps the format names, keeping metadata always', () => {
    expect(scrapeJobOf({ formats: ['links', 'rawHtml', 'html', 'markdown'] }).job.formats).toEqual([
      'markdown',
      'html',
      'raw_html',
      'links',
      'metadata',
    ]);
    expect(scrapeJobOf({ formats: [] }).job.formats).toEqual(['metadata']);
  });

  it.each(['screenshot', 'screenshot@fullPage', { type: 'screenshot', fullPage: false }])(
    'renders with a screenshot for %j',
    (format) => {
      const { job } = scrapeJobOf({ formats: [format] });
      expect(job.formats).toEqual(['metadata', 'screenshot']);
      expect(job.render_config).toEqual({
        enabled: true,
        mode: 'always',
        wait_strategy: 'load',
        wait_timeout_ms: 30_000,
        actions: [],
        screenshot: true,
        screenshot_options: null,
        block_resources: null,
      });
    },
  );

  it('maps onlyMainContent, includeTags and excludeTags to content', () => {
    expect(
      scrapeJobOf({ onlyMainContent: false, includeTags: ['main'], excludeTags: ['.ad', 'footer'] }).job
        .content,
    ).toEqual({ only_main_content: false, include_tags: ['main'], exclude_tags: ['.ad', 'footer'] });
  });

  it('renders for waitFor and actions, bounding the render wait by the timeout', () => {
    const { job, timeoutMs } = scrapeJobOf({
      waitFor: 2000,
      timeout: 20_000,
      actions: [{ type: 'click', selector: '#more' }, { type: 'scrape' }],
    });
    expect(timeoutMs).toBe(20_000);
    expect(job.render_config).toEqual({
      enabled: true,
      mode: 'always',
      wait_strategy: 'load',
      wait_timeout_ms: 20_000,
      actions: [
        { type: 'wait', ms: 2000 },
        { type: 'click', selector: '#more' },
      ],
      screenshot: false,
      screenshot_options: null,
      block_resources: null,
    });
    // The scrape action's HTML is the page's raw HTML.
    expect(job.formats).toEqual(['markdown', 'raw_html', 'metadata']);
  });

  it('takes a screenshot for a screenshot action', () => {
    const { job } = scrapeJobOf({ actions: [{ type: 'wait', milliseconds: 100 }, { type: 'screenshot' }] });
    expect(job.render_config).toMatchObject({ enabled: true, screenshot: true });
    expect(job.formats).toEqual(['markdown', 'metadata']);
  });

  it('takes the screenshot at its viewport, a JPEG of its quality: the format’s, else the first screenshot action’s', () => {
    const viewport = { width: 1280, height: 720 };
    const options = (fields: Record<string, unknown>) =>
      scrapeJobOf(fields).job.render_config?.screenshot_options;
    expect(options({ formats: [{ type: 'screenshot', viewport, quality: 72.6 }] })).toEqual({
      viewport,
      quality: 73,
      full_page: false,
    });
    expect(options({ formats: [{ type: 'screenshot', viewport, fullPage: true }] })).toEqual({
      viewport,
      quality: null,
      full_page: true,
    });
    // A quality alone keeps the whole page at the renderer's window.
    expect(options({ formats: [{ type: 'screenshot', quality: 50 }] })).toEqual({
      viewport: null,
      quality: 50,
      full_page: true,
    });
    expect(
      options({
        formats: ['markdown'],
        actions: [
          { type: 'screenshot', viewport, fullPage: true },
          { type: 'screenshot', quality: 5 },
        ],
      }),
    ).toEqual({ viewport, quality: null, full_page: true });
    expect(
      options({
        formats: [{ type: 'screenshot', quality: 40 }],
        actions: [{ type: 'screenshot', viewport }],
      }),
    ).toEqual({ viewport: null, quality: 40, full_page: true });
    expect(options({ formats: ['screenshot@fullPage'] })).toBeNull();
    expect(options({ formats: ['markdown'] })).toBeNull();
  });

  it('renders every page for mobile, as a phone shows it', () => {
    expect(scrapeJobOf({ mobile: true }).job.render_config).toMatchObject({ enabled: true, mode: 'always' });
    expect(scrapeJobOf({ mobile: false }).job.render_config).toMatchObject({ enabled: true, mode: 'auto' });
  });

  it('caps the render wait at the 120 s a job takes', () => {
    expect(scrapeJobOf({ waitFor: 1000, timeout: 300_000 }).job.render_config?.wait_timeout_ms).toBe(120_000);
  });

  it('accepts a bad certificate only with skipTlsVerification (default false here)', () => {
    expect(scrapeJobOf({ skipTlsVerification: false }).job.request).toBeNull();
    expect(scrapeJobOf({ skipTlsVerification: true }).job.request).toEqual({
      headers: {},
      cookies: [],
      basic_auth: null,
      authorization: null,
      user_agent: null,
      skip_tls_verification: true,
    });
  });

  it('sends headers, cookies, credentials and a mobile user agent', () => {
    const auth = `Basic ${Buffer.from('u:p').toString('base64')}`;
    expect(
      scrapeJobOf({ headers: { 'X-Key': 'k', Cookie: 'sid=1', Authorization: auth }, mobile: true }).job
        .request,
    ).toEqual({
      headers: { 'X-Key': 'k' },
      cookies: [{ name: 'sid', value: '1', domain: null, path: '/' }],
      basic_auth: { username: 'u', password: 'p' },
      authorization: null,
      user_agent: MOBILE_USER_AGENT,
      skip_tls_verification: false,
    });
  });

  it('uses a proxy of location.country', () => {
    expect(scrapeJobOf({ location: { country: 'jp' } }).job.proxy_config).toEqual({
      enabled: true,
      rotation_strategy: 'round_robin',
      geo_targeting: 'JP',
    });
  });

  it('escapes curl glob characters, so the URL is fetched as given', () => {
    const { job } = scrapeJobOf({ url: 'https://example.com/search?ids[]=1&f={a,b}' });
    expect(job.source).toBe('https://example.com/search?ids\\[\\]=1&f=\\{a,b\\}');
  });

  it('is the same job from v1', () => {
    expect(scrapeJobOf({ formats: ['html', 'screenshot@fullPage'], waitFor: 500 }, 'v1')).toEqual(
      scrapeJobOf({ formats: ['html', { type: 'screenshot', fullPage: true }], waitFor: 500 }, 'v2'),
    );
  });
});

describe('crawlJob', () => {
  it('follows every link, Firecrawl’s defaults bounding it', () => {
    const { job, webhook } = crawlJobOf({});
    expect(webhook).toBeNull();
    expect(job.name).toBe('Firecrawl crawl https://example.com/');
    expect(job.rate_limit).toBe(6000);
    expect(job.crawl).toEqual({
      follow: [{ type: 'css', query: 'a::attr(href)' }],
      max_depth: 10,
      max_pages: 10_000,
      same_origin: false,
      include: [],
      exclude: [expect.stringContaining('example\\.com') as string],
      respect_robots_txt: true,
      sitemap: true,
    });
  });

  it('maps limit, maxDiscoveryDepth, ignoreRobotsTxt and the sitemap modes', () => {
    expect(crawlJobOf({ limit: 50, maxDiscoveryDepth: 2, ignoreRobotsTxt: true }).job.crawl).toMatchObject({
      max_pages: 50,
      max_depth: 2,
      respect_robots_txt: false,
    });
    expect(crawlJobOf({ sitemap: 'skip' }).job.crawl).toMatchObject({ sitemap: false, max_depth: 10 });
    expect(crawlJobOf({ sitemap: 'only', maxDiscoveryDepth: 5 }).job.crawl).toMatchObject({
      sitemap: true,
      max_depth: 0,
    });
    expect(crawlJobOf({ ignoreSitemap: true }, 'v1').job.crawl).toMatchObject({ sitemap: false });
  });

  it('spaces requests by delay seconds', () => {
    expect(crawlJobOf({ delay: 2 }).job.rate_limit).toBe(30);
    expect(crawlJobOf({ delay: 60 }).job.rate_limit).toBe(1);
    expect(crawlJobOf({ delay: 0.5 }).job.rate_limit).toBe(120);
    expect(crawlJobOf({ delay: 0.001 }).job.rate_limit).toBe(6000);
  });

  it('applies scrapeOptions to every page', () => {
    const { job } = crawlJobOf({
      scrapeOptions: { formats: ['html', 'links'], onlyMainContent: false, headers: { 'X-A': 'b' } },
    });
    expect(job.formats).toEqual(['html', 'links', 'metadata']);
    expect(job.content).toEqual({ only_main_content: false, include_tags: [], exclude_tags: [] });
    expect(job.request).toEqual({
      headers: { 'X-A': 'b' },
      cookies: [],
      basic_auth: null,
      authorization: null,
      user_agent: null,
      skip_tls_verification: false,
    });
  });

  it('passes the patterns and guards of the request to the job', () => {
    const { job } = crawlJobOf({ url: 'https://example.com/docs/', includePaths: ['^/docs/api/'] });
    expect(job.crawl?.include).toEqual(['^https?://[^/?#]+/docs/api/']);
    expect(job.crawl?.exclude).toHaveLength(2);
  });

  it('hands the webhook back with its defaults', () => {
    expect(crawlJobOf({ webhook: { url: 'https://hooks.example/', events: ['completed'] } }).webhook).toEqual(
      {
        url: 'https://hooks.example/',
        headers: {},
        metadata: {},
        events: ['completed'],
      },
    );
  });
});

describe('batchScrapeJob', () => {
  it('makes the job of the first valid URL and hands back every URL', () => {
    const out = batchScrapeJob(
      parsedValue(
        parseBatchScrapeRequest(
          { urls: ['not a url', 'https://a.example/1', 'https://b.example/2'], formats: ['links'] },
          'v2',
        ),
      ),
    );
    expectValidJob(out.job);
    expect(out).toEqual({
      job: expect.objectContaining({
        name: 'Firecrawl batch scrape https://a.example/1',
        source: 'https://a.example/1',
        formats: ['links', 'metadata'],
        crawl: null,
      }) as CreateJobInput,
      urls: ['https://a.example/1', 'https://b.example/2'],
      invalidURLs: ['not a url'],
      webhook: null,
    });
  });
});

describe('mapJob', () => {
  it('crawls one level deep for the links, fetching a bounded number for titles', () => {
    const out = mapJobOf({});
    expect(out).toEqual({
      job: expect.objectContaining({
        name: 'Firecrawl map https://example.com/',
        formats: ['metadata'],
        content: null,
        render_config: null,
        crawl: {
          follow: [{ type: 'css', query: 'a::attr(href)' }],
          max_depth: 1,
          max_pages: MAP_FETCHED_PAGES,
          same_origin: false,
          include: [],
          exclude: [expect.stringContaining('example\\.com') as string],
          respect_robots_txt: true,
          sitemap: true,
        },
      }) as CreateJobInput,
      search: null,
      limit: 5000,
      timeoutMs: 60_000,
      includeSubdomains: true,
      ignoreQueryParameters: true,
    });
  });

  it('maps the sitemap modes, limit, timeout and search', () => {
    expect(mapJobOf({ sitemap: 'skip' }).job.crawl).toMatchObject({ sitemap: false, max_depth: 1 });
    expect(mapJobOf({ sitemap: 'only' }).job.crawl).toMatchObject({ sitemap: true, max_depth: 0 });
    expect(mapJobOf({ sitemapOnly: true }, 'v1').job.crawl).toMatchObject({ sitemap: true, max_depth: 0 });
    const out = mapJobOf({ limit: 20, timeout: 5000, search: 'pricing', ignoreRobotsTxt: true });
    expect(out).toMatchObject({ limit: 20, timeoutMs: 5000, search: 'pricing' });
    expect(out.job.crawl).toMatchObject({ max_pages: 20, respect_robots_txt: false });
  });

  it('fetches with the headers and proxy country asked', () => {
    const { job } = mapJobOf({ headers: { 'X-A': 'b' }, location: { country: 'fr' } });
    expect(job.request?.headers).toEqual({ 'X-A': 'b' });
    expect(job.proxy_config?.geo_targeting).toBe('FR');
  });
});
