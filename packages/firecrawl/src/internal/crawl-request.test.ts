import { parseCrawlRequest } from './crawl-request.ts';
import { detailsOf, parsedValue } from './testing.ts';
import type { FirecrawlVersion } from './types.ts';

const crawl = (fields: Record<string, unknown>, version: FirecrawlVersion = 'v2') =>
  parseCrawlRequest({ url: 'https://example.com/', ...fields }, version);

/** Whether a URL passes the request's patterns as a job tests them (docs/api.md §11). */
function follows(request: { include: string[]; exclude: string[] }, url: string): boolean {
  if (request.include.length > 0 && !request.include.some((p) => new RegExp(p).test(url))) return false;
  return !request.exclude.some((p) => new RegExp(p).test(url));
}

describe('parseCrawlRequest', () => {
  it('gives Firecrawl’s defaults for a bare URL', () => {
    const request = parsedValue(crawl({}));
    expect(request).toMatchObject({
      url: 'https://example.com/',
      limit: 10_000,
      maxDiscoveryDepth: 10,
      maxPathDepth: null,
      include: [],
      sitemap: 'include',
      crawlEntireDomain: false,
      allowExternalLinks: false,
      allowSubdomains: false,
      ignoreRobotsTxt: false,
      ignoreQueryParameters: false,
      delay: null,
      maxConcurrency: null,
      webhook: null,
    });
    expect(request.scrapeOptions.formats).toEqual(['markdown']);
  });

  it('caps limit at 100000 and maxDiscoveryDepth at 50', () => {
    expect(parsedValue(crawl({ limit: 250_000, maxDiscoveryDepth: 99 }))).toMatchObject({
      limit: 100_000,
      maxDiscoveryDepth: 50,
    });
  });

  it('reads the v2 options', () => {
    expect(
      parsedValue(
        crawl({
          limit: 20,
          maxDiscoveryDepth: 2,
          sitemap: 'only',
          crawlEntireDomain: true,
          allowExternalLinks: true,
          ignoreRobotsTxt: true,
          ignoreQueryParameters: true,
          deduplicateSimilarURLs: false,
          delay: 2,
          maxConcurrency: 3,
          webhook: 'https://hooks.example/c',
          scrapeOptions: { formats: ['links'], onlyMainContent: false },
          origin: 'js-sdk@4.42.0',
          integration: 'zapier',
          zeroDataRetention: false,
        }),
      ),
    ).toMatchObject({
      limit: 20,
      maxDiscoveryDepth: 2,
      sitemap: 'only',
      crawlEntireDomain: true,
      allowExternalLinks: true,
      ignoreRobotsTxt: true,
      ignoreQueryParameters: true,
      delay: 2,
      maxConcurrency: 3,
      webhook: { url: 'https://hooks.example/c' },
      scrapeOptions: { formats: ['links'], onlyMainContent: false },
    });
  });

  it('refuses webhook metadata nesting past 32 levels, at its path, in v1 and v2', () => {
    const deep = (levels: number) => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = { a: value };
      return value as Record<string, unknown>;
    };
    for (const version of ['v1', 'v2'] as const) {
      expect(
        detailsOf(crawl({ webhook: { url: 'https://hooks.example/c', metadata: deep(3_000) } }, version)),
      ).toEqual({
        'webhook.metadata': 'must not nest more than 32 levels of objects and arrays',
      });
      expect(crawl({ webhook: { url: 'https://hooks.example/c', metadata: deep(32) } }, version).ok).toBe(
        true,
      );
    }
  });

  it('refuses a list of paths over the limit before reading its items', () => {
    expect(detailsOf(crawl({ includePaths: Array(50_000).fill(0) }))).toEqual({
      includePaths: 'must have at most 50 items',
    });
  });

  it('takes null for the fields the SDKs type as nullable', () => {
    expect(
      crawl({
        includePaths: null,
        excludePaths: null,
        maxDiscoveryDepth: null,
        limit: null,
        delay: null,
        webhook: null,
      }).ok,
    ).toBe(true);
  });

  it('reads the v1 names: ignoreSitemap, allowBackwardLinks, maxDepth', () => {
    expect(parsedValue(crawl({ ignoreSitemap: true }, 'v1')).sitemap).toBe('skip');
    expect(parsedValue(crawl({}, 'v1')).sitemap).toBe('include');
    expect(
      parsedValue(crawl({ url: 'https://example.com/docs/', allowBackwardLinks: true }, 'v1'))
        .crawlEntireDomain,
    ).toBe(true);
    // crawlEntireDomain wins over its deprecated name.
    expect(
      parsedValue(crawl({ allowBackwardLinks: true, crawlEntireDomain: false }, 'v1')).crawlEntireDomain,
    ).toBe(false);
    expect(parsedValue(crawl({}, 'v1')).maxPathDepth).toBe(10);
    expect(parsedValue(crawl({ maxDepth: 3, maxDiscoveryDepth: 1 }, 'v1'))).toMatchObject({
      maxPathDepth: 3,
      maxDiscoveryDepth: 1,
    });
  });

  it('refuses each version’s names in the other', () => {
    expect(detailsOf(crawl({ sitemap: 'skip', prompt: 'x' }, 'v1'))).toEqual({
      sitemap: 'unknown field',
      prompt: 'unknown field',
    });
    expect(detailsOf(crawl({ maxDepth: 2, ignoreSitemap: true, allowBackwardLinks: true }, 'v2'))).toEqual({
      maxDepth: 'unknown field',
      ignoreSitemap: 'unknown field',
      allowBackwardLinks: 'unknown field',
    });
  });

  it('refuses a v1 seed deeper than maxDepth, as Firecrawl does', () => {
    expect(detailsOf(crawl({ url: 'https://example.com/a/b/c', maxDepth: 2 }, 'v1'))).toEqual({
      url: 'URL depth exceeds the specified maxDepth',
    });
  });

  it('keeps a v1 crawl within maxDepth path segments below the seed', () => {
    const request = parsedValue(
      crawl({ url: 'https://example.com/docs/', maxDepth: 1, crawlEntireDomain: true }, 'v1'),
    );
    expect(follows(request, 'https://example.com/docs/intro')).toBe(true);
    expect(follows(request, 'https://example.com/docs/intro/more')).toBe(false);
  });

  it.each([
    [{ prompt: 'crawl the blog' }, 'prompt', 'the option "prompt" is not supported by this service'],
    [
      { robotsUserAgent: 'Bot' },
      'robotsUserAgent',
      'the option "robotsUserAgent" is not supported by this service',
    ],
    [
      { zeroDataRetention: true },
      'zeroDataRetention',
      'true is not supported by this service: documents are kept until the crawl expires',
    ],
    [{ sitemap: 'never' }, 'sitemap', 'must be one of include, skip, only'],
    [{ delay: 61 }, 'delay', 'must be at most 60'],
    [{ delay: 0 }, 'delay', 'must be greater than 0'],
    [{ limit: 0 }, 'limit', 'must be at least 1'],
    [{ maxDiscoveryDepth: -1 }, 'maxDiscoveryDepth', 'must be at least 0'],
    [{ maxConcurrency: 0 }, 'maxConcurrency', 'must be at least 1'],
    [
      { scrapeOptions: { formats: ['branding'] } },
      'scrapeOptions.formats[0]',
      'the format "branding" is not supported by this service',
    ],
    [
      { scrapeOptions: { proxy: 'tor' } },
      'scrapeOptions.proxy',
      'must be one of basic, auto, stealth, enhanced',
    ],
    [{ scrapeOptions: { url: 'x' } }, 'scrapeOptions.url', 'unknown field'],
    [
      { scrapeOptions: { actions: [{ type: 'pdf' }] } },
      'scrapeOptions.actions[0].type',
      'the action "pdf" is not supported by this service',
    ],
    [
      { scrapeOptions: { headers: { Authorization: '' } } },
      'scrapeOptions.headers.Authorization',
      'must have at least 1 character',
    ],
    [{ includePaths: ['^/blog/('] }, 'includePaths[0]', 'invalid regular expression: Unterminated group'],
    [
      { excludePaths: ['x', '(?=y)'] },
      'excludePaths[1]',
      'look-around ((?=...), (?!...), (?<=...), (?<!...)) and back-references are not supported',
    ],
  ])('refuses %j at %s', (fields, path, message) => {
    expect(detailsOf(crawl(fields))).toEqual({ [path]: message });
  });

  it('accepts the bookkeeping fields inside scrapeOptions, as the SDK’s type allows them there', () => {
    expect(crawl({ scrapeOptions: { origin: 'js-sdk@4.42.0', integration: 'x' } }).ok).toBe(true);
  });

  it('refuses more patterns than a job takes, counting its own guards', () => {
    const patterns = Array.from({ length: 51 }, (_, i) => `^/p${i}`);
    expect(detailsOf(crawl({ includePaths: patterns }))).toEqual({
      includePaths: 'must have at most 50 items',
    });
    // The host guard takes one place: 49 are left.
    expect(detailsOf(crawl({ excludePaths: patterns.slice(0, 50) }))).toEqual({
      excludePaths: 'must have at most 49 items with these options',
    });
    expect(crawl({ excludePaths: patterns.slice(0, 49) }).ok).toBe(true);
    expect(crawl({ excludePaths: patterns.slice(0, 50), allowExternalLinks: true }).ok).toBe(true);
  });

  describe('which links the crawl follows', () => {
    it('tests includePaths and excludePaths on the URL’s path', () => {
      const request = parsedValue(
        crawl({ includePaths: ['^/blog/.*', '^/news/'], excludePaths: ['/drafts/', '\\.pdf$'] }),
      );
      expect(follows(request, 'https://example.com/blog/post')).toBe(true);
      expect(follows(request, 'https://example.com/news/today?x=1')).toBe(true);
      expect(follows(request, 'https://example.com/about')).toBe(false);
      expect(follows(request, 'https://example.com/?next=/blog/post')).toBe(false);
      expect(follows(request, 'https://example.com/blog/drafts/1')).toBe(false);
      expect(follows(request, 'https://example.com/blog/a.pdf')).toBe(false);
      expect(follows(request, 'https://example.com/blog/a.pdf.html')).toBe(true);
    });

    it('tests them on the whole URL with regexOnFullURL', () => {
      const request = parsedValue(
        crawl({ includePaths: ['^https://example\\.com/blog'], regexOnFullURL: true }),
      );
      expect(request.include).toEqual(['^https://example\\.com/blog']);
      expect(follows(request, 'https://example.com/blog/x')).toBe(true);
      expect(follows(request, 'http://example.com/blog/x')).toBe(false);
    });

    it('stays under the seed’s path unless crawlEntireDomain', () => {
      const under = parsedValue(crawl({ url: 'https://example.com/docs/' }));
      expect(follows(under, 'https://example.com/docs/a')).toBe(true);
      expect(follows(under, 'https://example.com/pricing')).toBe(false);
      const whole = parsedValue(crawl({ url: 'https://example.com/docs/', crawlEntireDomain: true }));
      expect(follows(whole, 'https://example.com/pricing')).toBe(true);
    });

    it('stays on the seed’s host (with or without www, either scheme) unless told otherwise', () => {
      const request = parsedValue(crawl({ url: 'http://www.example.com/' }));
      expect(follows(request, 'https://example.com/a')).toBe(true);
      expect(follows(request, 'https://www.example.com/a')).toBe(true);
      expect(follows(request, 'https://docs.example.com/a')).toBe(false);
      expect(follows(request, 'https://other.org/a')).toBe(false);
    });

    it('follows subdomains with allowSubdomains, any site with allowExternalLinks', () => {
      const subdomains = parsedValue(crawl({ allowSubdomains: true }));
      expect(follows(subdomains, 'https://docs.example.com/a')).toBe(true);
      expect(follows(subdomains, 'https://other.org/a')).toBe(false);
      const external = parsedValue(crawl({ allowExternalLinks: true }));
      expect(follows(external, 'https://other.org/a')).toBe(true);
    });

    it('keeps the seed path rule on other sites, as Firecrawl compares paths only', () => {
      const request = parsedValue(crawl({ url: 'https://example.com/docs', allowExternalLinks: true }));
      expect(follows(request, 'https://other.org/docs/x')).toBe(true);
      expect(follows(request, 'https://other.org/x')).toBe(false);
    });
  });
});
