import { parseMapRequest } from './map-request.ts';
import { detailsOf, parsedValue } from './testing.ts';
import type { FirecrawlVersion } from './types.ts';

const map = (fields: Record<string, unknown>, version: FirecrawlVersion = 'v2') =>
  parseMapRequest({ url: 'https://example.com/', ...fields }, version);

const excluded = (exclude: readonly string[], url: string) => exclude.some((p) => new RegExp(p).test(url));

describe('parseMapRequest', () => {
  it('gives Firecrawl’s defaults', () => {
    expect(parsedValue(map({}))).toMatchObject({
      url: 'https://example.com/',
      search: null,
      sitemap: 'include',
      includeSubdomains: true,
      ignoreQueryParameters: true,
      limit: 5000,
      timeout: null,
      include: [],
      allowExternalLinks: false,
      filterByPath: true,
      ignoreRobotsTxt: false,
    });
  });

  it('reads the v2 options the SDK sends', () => {
    expect(
      parsedValue(
        map({
          search: '  docs  ',
          sitemap: 'only',
          includeSubdomains: false,
          ignoreQueryParameters: false,
          limit: 100,
          timeout: 15_000,
          location: { country: 'gb' },
          origin: 'js-sdk@4.42.0',
          integration: 'x',
        }),
      ),
    ).toMatchObject({
      search: 'docs',
      sitemap: 'only',
      includeSubdomains: false,
      ignoreQueryParameters: false,
      limit: 100,
      timeout: 15_000,
      fetch: { country: 'GB' },
    });
  });

  it('reads the v1 names: ignoreSitemap and sitemapOnly', () => {
    expect(parsedValue(map({ ignoreSitemap: true }, 'v1')).sitemap).toBe('skip');
    expect(parsedValue(map({ sitemapOnly: true }, 'v1')).sitemap).toBe('only');
    expect(parsedValue(map({ useIndex: false, maxDepth: 3 }, 'v1')).sitemap).toBe('include');
    expect(detailsOf(map({ sitemap: 'skip' }, 'v1'))).toEqual({ sitemap: 'unknown field' });
    expect(detailsOf(map({ sitemapOnly: true }, 'v2'))).toEqual({ sitemapOnly: 'unknown field' });
  });

  it.each([
    [{ limit: 0 }, 'limit', 'must be at least 1'],
    [{ limit: 100_001 }, 'limit', 'must be at most 100000'],
    [{ timeout: 0 }, 'timeout', 'must be greater than 0'],
    [{ useMock: 'x' }, 'useMock', 'the option "useMock" is not supported by this service'],
    [
      { threatProtection: {} },
      'threatProtection',
      'the option "threatProtection" is not supported by this service',
    ],
    [{ headers: { Host: 'x' } }, 'headers.Host', 'may not be set: the service sets it'],
    [{ search: 5 }, 'search', 'must be a string'],
  ])('refuses %j at %s', (fields, path, message) => {
    expect(detailsOf(map(fields))).toEqual({ [path]: message });
  });

  it('keeps links on the seed’s domain and subdomains, under its path', () => {
    const { exclude } = parsedValue(map({ url: 'https://example.com/docs' }));
    expect(excluded(exclude, 'https://example.com/docs/a')).toBe(false);
    expect(excluded(exclude, 'https://api.example.com/docs/a')).toBe(false);
    expect(excluded(exclude, 'https://example.com/blog')).toBe(true);
    expect(excluded(exclude, 'https://other.org/docs/a')).toBe(true);
  });

  it('drops the subdomains without includeSubdomains, the path rule without filterByPath', () => {
    const noSub = parsedValue(map({ includeSubdomains: false })).exclude;
    expect(excluded(noSub, 'https://api.example.com/a')).toBe(true);
    const anyPath = parsedValue(map({ url: 'https://example.com/docs', filterByPath: false })).exclude;
    expect(excluded(anyPath, 'https://example.com/blog')).toBe(false);
  });

  it('keeps any link with allowExternalLinks', () => {
    expect(parsedValue(map({ url: 'https://example.com/docs', allowExternalLinks: true })).exclude).toEqual(
      [],
    );
  });

  it('translates includePaths like a crawl', () => {
    const { include } = parsedValue(map({ includePaths: ['^/blog/'] }));
    expect(include.map((p) => new RegExp(p).test('https://example.com/blog/x'))).toEqual([true]);
  });
});
