import { parseBatchScrapeRequest, parseScrapeRequest } from './scrape-request.ts';
import { detailsOf, parsedValue } from './testing.ts';
import type { FirecrawlVersion } from './types.ts';

const URL_ = 'https://example.com/';
const scrape = (fields: Record<string, unknown>, version: FirecrawlVersion = 'v2') =>
  parseScrapeRequest({ url: URL_, ...fields }, version);

describe('parseScrapeRequest', () => {
  it('gives Firecrawl’s defaults for a bare URL', () => {
    expect(parsedValue(scrape({}))).toEqual({
      url: URL_,
      formats: ['markdown'],
      json: null,
      modelFormatsAt: [],
      changeTracking: null,
      actionOutputs: { screenshots: 0, scrapes: 0, scripts: 0 },
      attributes: [],
      // Firecrawl v2's default maxAge: two days.
      cache: { maxAge: 172_800_000, store: true },
      onlyMainContent: true,
      includeTags: [],
      excludeTags: [],
      timeout: 30_000,
      renderActions: [],
      screenshot: null,
      mobile: false,
      fetch: {
        headers: {},
        cookies: [],
        basicAuth: null,
        authorization: null,
        userAgent: null,
        country: null,
        skipTlsVerification: false,
      },
      warnings: [],
    });
  });

  it('reuses nothing by default in v1, and takes maxAge and storeInCache', () => {
    expect(parsedValue(parseScrapeRequest({ url: URL_ }, 'v1')).cache).toEqual({ maxAge: 0, store: true });
    expect(parsedValue(scrape({ maxAge: 0, storeInCache: false })).cache).toEqual({
      maxAge: 0,
      store: false,
    });
  });

  it('adds http:// to a URL without a scheme, as Firecrawl does, and trims it', () => {
    expect(parsedValue(parseScrapeRequest({ url: ' example.com/a?b=[1] ' }, 'v2')).url).toBe(
      'http://example.com/a?b=[1]',
    );
  });

  it.each([
    [undefined, 'is required'],
    ['ftp://example.com/x', 'must be an http or https URL'],
    ['https://', 'must be a valid URL'],
    ['https://exa mple.com/', 'must be a valid URL'],
    [42, 'must be a string'],
  ])('refuses the url %j: %s', (url, message) => {
    expect(detailsOf(parseScrapeRequest({ url }, 'v2'))).toEqual({ url: message });
  });

  it('refuses a body that is not an object', () => {
    expect(detailsOf(parseScrapeRequest('https://example.com', 'v2'))).toEqual({ body: 'must be an object' });
  });

  it('reads the content options', () => {
    const request = parsedValue(
      scrape({
        onlyMainContent: false,
        includeTags: ['article', '.post'],
        excludeTags: ['nav'],
        timeout: 45_000,
      }),
    );
    expect(request).toMatchObject({
      onlyMainContent: false,
      includeTags: ['article', '.post'],
      excludeTags: ['nav'],
      timeout: 45_000,
    });
  });

  it.each([
    [{ timeout: 999 }, { timeout: 'must be at least 1000' }],
    [{ timeout: 300_001 }, { timeout: 'must be at most 300000' }],
    [{ waitFor: -1 }, { waitFor: 'must be at least 0' }],
    [{ waitFor: 60_001 }, { waitFor: 'must be at most 60000' }],
    [{ includeTags: [''] }, { 'includeTags[0]': 'must have at least 1 character' }],
    [{ onlyMainContent: 'yes' }, { onlyMainContent: 'must be a boolean' }],
  ])('checks the values of %j', (fields, details) => {
    expect(detailsOf(scrape(fields))).toEqual(details);
  });

  it('accepts the bookkeeping fields the SDKs send, in both versions', () => {
    for (const version of ['v1', 'v2'] as const) {
      const request = scrape(
        {
          origin: 'js-sdk@4.42.0',
          integration: 'n8n',
          zeroDataRetention: false,
          auditMetadata: { username: 'a' },
        },
        version,
      );
      expect(request.ok).toBe(true);
    }
    expect(scrape({ integration: null }).ok).toBe(true);
  });

  it.each([
    ['v2', { skipTlsVerification: true }],
    ['v2', { blockAds: false }],
    ['v2', { maxAge: 0 }],
    ['v2', { maxAge: 172_800_000, storeInCache: false }],
    ['v2', { removeBase64Images: false, fastMode: true }],
    ['v2', { proxy: 'basic' }],
    ['v2', { proxy: 'auto' }],
    ['v2', { parsers: ['pdf', 'image'] }],
    ['v2', { parsers: [{ type: 'pdf', mode: 'ocr', maxPages: 10 }] }],
    ['v2', { toolDetail: 'summary', domainTools: false, lockdown: false, redactPII: false }],
    ['v2', { onlyCleanContent: false, safeMode: false }],
    ['v1', { parsePDF: true, skipTlsVerification: false, proxy: 'auto', maxAge: 0 }],
  ] as const)('accepts %s options without effect here: %j', (version, fields) => {
    expect(scrape(fields, version).ok).toBe(true);
  });

  it.each([
    ['v2', { proxy: 'stealth' }, ['the proxy "stealth" is served with this service\'s own proxies, or none']],
    [
      'v1',
      { proxy: 'enhanced' },
      ['the proxy "enhanced" is served with this service\'s own proxies, or none'],
    ],
    ['v2', { parsers: ['image'] }, ['PDFs are always parsed by this service']],
    [
      'v2',
      { parsers: ['pdf', 'docx', { type: 'pdf', pages: true }] },
      [
        'the parser "docx" is not known to this service and is ignored',
        "parsers' options are ignored: documents have no per-page markdown or blocks",
      ],
    ],
    ['v2', { parsers: ['pdf'] }, []],
  ] as const)('serves the %s option %j with a warning', (version, fields, warnings) => {
    expect(parsedValue(scrape(fields, version)).warnings).toEqual(warnings);
  });

  it.each([
    ['v2', { minAge: 1000 }, 'minAge', 'the option "minAge" is not supported by this service'],
    ['v2', { profile: { name: 'p' } }, 'profile', 'the option "profile" is not supported by this service'],
    ['v2', { useMock: 'x' }, 'useMock', 'the option "useMock" is not supported by this service'],
    ['v1', { useMock: 'x' }, 'useMock', 'the option "useMock" is not supported by this service'],
    [
      'v2',
      { threatProtection: {} },
      'threatProtection',
      'the option "threatProtection" is not supported by this service',
    ],
    ['v2', { redactPII: true }, 'redactPII', 'the option "redactPII" is not supported by this service'],
    [
      'v2',
      { redactPII: { mode: 'fast' } },
      'redactPII',
      'the option "redactPII" is not supported by this service',
    ],
    [
      'v2',
      { lockdown: true },
      'lockdown',
      'true is not supported by this service: pages are always fetched from the site',
    ],
    [
      'v2',
      { domainTools: true },
      'domainTools',
      'true is not supported by this service: there are no domain tools',
    ],
    ['v2', { safeMode: true }, 'safeMode', 'true is not supported by this service: there is no safe mode'],
    [
      'v2',
      { onlyCleanContent: true },
      'onlyCleanContent',
      'true is not supported by this service: the main content is what onlyMainContent keeps',
    ],
    [
      'v2',
      { zeroDataRetention: true },
      'zeroDataRetention',
      'true is not supported by this service: documents are kept until the crawl expires',
    ],
    ['v2', { proxy: 'tor' }, 'proxy', 'must be one of basic, auto, stealth, enhanced'],
    ['v1', { parsePDF: false }, 'parsePDF', 'false is not supported by this service: PDFs are always parsed'],
    ['v1', { extract: { prompt: 'x', model: 'y' } }, 'extract.model', 'unknown field'],
    [
      'v1',
      { formats: ['json'], jsonOptions: { schema: { type: 'array' } } },
      'jsonOptions.schema',
      'must describe an object (type "object"): each of its top-level properties is a field',
    ],
    ['v1', { agent: { prompt: 'x' } }, 'agent', 'the option "agent" is not supported by this service'],
  ] as const)('refuses the %s option %j, naming it', (version, fields, path, message) => {
    expect(detailsOf(scrape(fields, version))).toEqual({ [path]: message });
  });

  it('refuses unknown fields, as Firecrawl does (its request schemas are strict)', () => {
    expect(detailsOf(scrape({ formatz: ['markdown'], pageOptions: {} }))).toEqual({
      formatz: 'unknown field',
      pageOptions: 'unknown field',
    });
  });

  it('refuses the other version’s own names', () => {
    expect(detailsOf(scrape({ parsers: ['pdf'], minAge: 1 }, 'v1'))).toEqual({
      parsers: 'unknown field',
      minAge: 'unknown field',
    });
    expect(detailsOf(scrape({ parsePDF: true, jsonOptions: {} }, 'v2'))).toEqual({
      parsePDF: 'unknown field',
      jsonOptions: 'unknown field',
    });
  });

  it('names the first problem in the message', () => {
    const parsed = scrape({ formats: ['branding'], timeout: 5 });
    expect(parsed).toEqual({
      ok: false,
      message:
        'The request is invalid: formats[0]: the format "branding" is not supported by this service (and 1 more: see details).',
      details: expect.any(Object) as Record<string, string>,
    });
  });
});

describe('parseBatchScrapeRequest', () => {
  const batch = (fields: Record<string, unknown>, version: FirecrawlVersion = 'v2') =>
    parseBatchScrapeRequest({ ...fields }, version);

  it('keeps the valid URLs once each, in order, with the scrape options', () => {
    const request = parsedValue(
      batch({ urls: ['https://a.example/1', 'b.example', 'https://a.example/1'], formats: ['html'] }),
    );
    expect(request).toMatchObject({
      urls: ['https://a.example/1', 'http://b.example'],
      invalidURLs: [],
      formats: ['html'],
      webhook: null,
      maxConcurrency: null,
    });
  });

  it('lists invalid URLs in v2 by default (ignoreInvalidURLs defaults to true there)', () => {
    expect(
      parsedValue(batch({ urls: ['https://a.example/', 'ftp://b.example/', 'mailto:x'] })),
    ).toMatchObject({
      urls: ['https://a.example/'],
      invalidURLs: ['ftp://b.example/', 'mailto:x'],
    });
  });

  it('refuses invalid URLs at urls[i] in v1 by default, or with ignoreInvalidURLs false', () => {
    expect(detailsOf(batch({ urls: ['https://a.example/', 'ftp://b.example/'] }, 'v1'))).toEqual({
      'urls[1]': 'must be an http or https URL',
    });
    expect(detailsOf(batch({ urls: ['ftp://b.example/'], ignoreInvalidURLs: false }))).toEqual({
      'urls[0]': 'must be an http or https URL',
    });
    expect(
      parsedValue(batch({ urls: ['ftp://b.example/', 'a.example'], ignoreInvalidURLs: true }, 'v1')),
    ).toMatchObject({
      urls: ['http://a.example'],
      invalidURLs: ['ftp://b.example/'],
    });
  });

  it('refuses a batch with no valid URL, or none at all', () => {
    expect(detailsOf(batch({ urls: ['ftp://b.example/'] }))).toEqual({ urls: 'has no valid URL' });
    expect(detailsOf(batch({ urls: [] }))).toEqual({ urls: 'must have at least 1 item' });
    expect(detailsOf(batch({}))).toEqual({ urls: 'is required' });
  });

  it('refuses more than 1000 distinct valid URLs', () => {
    const urls = Array.from({ length: 1001 }, (_, i) => `https://a.example/${i}`);
    expect(detailsOf(batch({ urls }))).toEqual({ urls: 'must have at most 1000 distinct valid URLs' });
    expect(parsedValue(batch({ urls: [...urls.slice(0, 1000), urls[0]] })).urls).toHaveLength(1000);
  });

  it('reads a webhook given as a URL or an object, with every event by default', () => {
    expect(parsedValue(batch({ urls: ['a.example'], webhook: 'https://hooks.example/x' })).webhook).toEqual({
      url: 'https://hooks.example/x',
      headers: {},
      metadata: {},
      events: ['started', 'page', 'completed', 'failed'],
    });
    const webhook = {
      url: 'https://hooks.example/y',
      headers: { 'X-Secret': 's' },
      metadata: { run: 7 },
      events: ['completed', 'completed', 'failed'],
    };
    expect(parsedValue(batch({ urls: ['a.example'], webhook })).webhook).toEqual({
      ...webhook,
      events: ['completed', 'failed'],
    });
  });

  it('refuses a webhook that is not an http(s) URL, or has unknown fields', () => {
    expect(detailsOf(batch({ urls: ['a.example'], webhook: 'ftp://x' }))).toEqual({
      webhook: 'must be an absolute http or https URL',
    });
    expect(detailsOf(batch({ urls: ['a.example'], webhook: { url: 'nope' } }))).toEqual({
      'webhook.url': 'must be an absolute http or https URL',
    });
    expect(
      detailsOf(
        batch({ urls: ['a.example'], webhook: { url: 'https://h.example/', events: ['done'], x: 1 } }),
      ),
    ).toEqual({
      'webhook.events[0]': 'must be one of started, page, completed, failed',
      'webhook.x': 'unknown field',
    });
    expect(detailsOf(batch({ urls: ['a.example'], webhook: 5 }))).toEqual({
      webhook: 'must be a URL or an object',
    });
  });

  it('accepts maxConcurrency and refuses appendToId', () => {
    expect(parsedValue(batch({ urls: ['a.example'], maxConcurrency: 4 })).maxConcurrency).toBe(4);
    expect(
      detailsOf(batch({ urls: ['a.example'], appendToId: '0190c3b0-0000-7000-8000-000000000000' })),
    ).toEqual({
      appendToId: 'the option "appendToId" is not supported by this service',
    });
  });
});

describe('lists over their limit', () => {
  const zeros = Array(50_000).fill(0);

  it('are refused at their own path before their items are read', () => {
    expect(detailsOf(parseBatchScrapeRequest({ urls: zeros }, 'v2'))).toEqual({
      urls: 'must have at most 10000 items',
    });
    expect(detailsOf(scrape({ formats: zeros }))).toEqual({ formats: 'must have at most 20 items' });
    expect(detailsOf(scrape({ parsers: zeros }))).toEqual({ parsers: 'must have at most 10 items' });
    expect(
      detailsOf(parseBatchScrapeRequest({ urls: [URL_], webhook: { url: URL_, events: zeros } }, 'v2')),
    ).toEqual({ 'webhook.events': 'must have at most 16 items' });
  });
});
