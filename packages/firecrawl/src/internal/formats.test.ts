import { parseScrapeRequest } from './scrape-request.ts';
import { detailsOf, parsedValue } from './testing.ts';
import type { FirecrawlVersion } from './types.ts';

const scrape = (formats: unknown, version: FirecrawlVersion = 'v2') =>
  parseScrapeRequest({ url: 'https://example.com/', formats }, version);

describe('formats', () => {
  it("defaults to markdown, as Firecrawl's do", () => {
    expect(parsedValue(parseScrapeRequest({ url: 'https://example.com/' }, 'v2')).formats).toEqual([
      'markdown',
    ]);
    expect(parsedValue(parseScrapeRequest({ url: 'https://example.com/' }, 'v1')).formats).toEqual([
      'markdown',
    ]);
  });

  it('keeps the supported names once each, in order', () => {
    expect(parsedValue(scrape(['links', 'markdown', 'html', 'rawHtml', 'links'])).formats).toEqual([
      'links',
      'markdown',
      'html',
      'rawHtml',
    ]);
  });

  it('takes an empty list (the document then has metadata only)', () => {
    expect(parsedValue(scrape([])).formats).toEqual([]);
  });

  it.each([
    ['screenshot', 'v2'],
    ['screenshot@fullPage', 'v1'],
    ['screenshot@fullPage', 'v2'],
    [{ type: 'screenshot' }, 'v2'],
    [{ type: 'screenshot', fullPage: true, quality: 80 }, 'v2'],
  ] as const)('reads %j as the screenshot format (%s)', (format, version) => {
    expect(parsedValue(scrape([format], version)).formats).toEqual(['screenshot']);
  });

  it('takes images, and attributes with their selectors', () => {
    const selectors = [
      { selector: 'a.ref', attribute: 'href' },
      { selector: 'img', attribute: 'alt' },
    ];
    const parsed = parsedValue(scrape(['images', { type: 'attributes', selectors }]));
    expect(parsed.formats).toEqual(['images', 'attributes']);
    expect(parsed.attributes).toEqual(selectors);
  });

  it('refuses attributes without selectors, or with a selector this service cannot run', () => {
    expect(detailsOf(scrape(['attributes']))).toEqual({
      'formats[0]': 'the attributes format needs its selectors: {type: "attributes", selectors}',
    });
    const bad = detailsOf(
      scrape([{ type: 'attributes', selectors: [{ selector: 'a >', attribute: 'href' }] }]),
    );
    expect(bad).toEqual({
      'formats[0].selectors[0].selector': 'the selector ends with a combinator or comma',
    });
  });

  it('reads a format object of a plain name as that name', () => {
    expect(parsedValue(scrape([{ type: 'markdown' }, { type: 'links' }])).formats).toEqual([
      'markdown',
      'links',
    ]);
  });

  it.each([
    'branding',
    'rawBase64',
    'product',
    'menu',
    'question',
    'highlights',
    'query',
    'audio',
    'video',
    'deterministicJson',
    'content',
  ])('refuses the format %s, naming it at its index', (name) => {
    expect(detailsOf(scrape(['markdown', 'html', name]))).toEqual({
      'formats[2]': `the format "${name}" is not supported by this service`,
    });
    expect(detailsOf(scrape([{ type: name, prompt: 'x' }]))).toEqual({
      'formats[0]': `the format "${name}" is not supported by this service`,
    });
  });

  it('reads the json format object as the extraction, and notes where the model formats are', () => {
    const schema = { type: 'object', properties: { price: { type: 'number' } } };
    const options = parsedValue(
      scrape(['markdown', { type: 'json', schema, prompt: 'the price' }, 'summary']),
    );
    expect(options).toMatchObject({
      formats: ['markdown', 'json', 'summary'],
      json: { schema, prompt: 'the price' },
      modelFormatsAt: [1, 2],
    });
  });

  it("reads v1's json and extract formats with jsonOptions or extract, systemPrompt before the prompt", () => {
    const json = parseScrapeRequest(
      { url: 'https://example.com/', formats: ['json'], jsonOptions: { schema: { type: 'object' } } },
      'v1',
    );
    expect(parsedValue(json).json).toEqual({ schema: { type: 'object' }, prompt: null });
    const v1 = parseScrapeRequest(
      { url: 'https://example.com/', formats: ['extract'], extract: { prompt: 'p', systemPrompt: 's' } },
      'v1',
    );
    expect(parsedValue(v1)).toMatchObject({ formats: ['json'], json: { schema: null, prompt: 's\np' } });
  });

  it('refuses a json format without schema or prompt, and a schema that is not of an object', () => {
    expect(detailsOf(scrape([{ type: 'json' }]))).toEqual({
      'formats[0]':
        'the json format needs a schema or a prompt ({type: "json", schema, prompt}; v1: jsonOptions)',
    });
    expect(detailsOf(scrape([{ type: 'json', schema: { type: 'string' } }]))).toEqual({
      'formats[0].schema':
        'must describe an object (type "object"): each of its top-level properties is a field',
    });
  });

  it('reads changeTracking as a name (no modes) and as an object with its modes, schema, prompt and tag', () => {
    expect(parsedValue(scrape(['markdown', 'changeTracking']))).toMatchObject({
      formats: ['markdown', 'changeTracking'],
      changeTracking: { modes: [], schema: null, prompt: null, tag: null },
      modelFormatsAt: [],
    });
    const schema = { type: 'object', properties: { price: { type: 'number' } } };
    const options = parsedValue(
      scrape([
        'markdown',
        {
          type: 'changeTracking',
          modes: ['git-diff', 'json', 'json'],
          schema,
          prompt: 'the price',
          tag: 'daily',
        },
      ]),
    );
    expect(options).toMatchObject({
      formats: ['markdown', 'changeTracking'],
      changeTracking: { modes: ['git-diff', 'json'], schema, prompt: 'the price', tag: 'daily' },
      modelFormatsAt: [1],
    });
  });

  it("reads v1's changeTracking with changeTrackingOptions", () => {
    const parsed = parseScrapeRequest(
      {
        url: 'https://example.com/',
        formats: ['changeTracking', 'markdown'],
        changeTrackingOptions: { modes: ['json'], prompt: 'prices', tag: null },
      },
      'v1',
    );
    expect(parsedValue(parsed)).toMatchObject({
      changeTracking: { modes: ['json'], schema: null, prompt: 'prices', tag: null },
      modelFormatsAt: [0],
    });
  });

  it('refuses changeTracking without markdown, json mode without schema or prompt, and unknown modes', () => {
    expect(detailsOf(scrape(['html', 'changeTracking']))).toEqual({
      'formats[1]':
        'the changeTracking format compares markdown: the markdown format must be asked for as well',
    });
    expect(detailsOf(scrape(['markdown', { type: 'changeTracking', modes: ['json'] }]))).toEqual({
      'formats[1]': 'the json mode of changeTracking needs a schema or a prompt',
    });
    expect(detailsOf(scrape(['markdown', { type: 'changeTracking', modes: ['word-diff'] }]))).toEqual({
      'formats[1].modes[0]': 'must be one of git-diff, json',
    });
    expect(
      detailsOf(
        parseScrapeRequest(
          { url: 'https://example.com/', formats: ['markdown'], changeTrackingOptions: { modes: [] } },
          'v1',
        ),
      ),
    ).toEqual({ changeTrackingOptions: 'is only for the changeTracking format' });
  });

  it('refuses a name Firecrawl does not have', () => {
    expect(detailsOf(scrape(['markdwn']))).toEqual({
      'formats[0]':
        'is not a Firecrawl format: must be one of markdown, html, rawHtml, links, screenshot, json, summary, changeTracking, images, attributes',
    });
  });

  it('refuses an item that is neither a name nor a typed object', () => {
    expect(detailsOf(scrape([3, { fullPage: true }]))).toEqual({
      'formats[0]': 'must be a format name or an object with a type',
      'formats[1]': 'must be a format name or an object with a type',
    });
  });

  it('refuses two screenshot formats, as Firecrawl does', () => {
    expect(detailsOf(scrape(['screenshot', 'screenshot@fullPage']))).toEqual({
      formats: 'you may only specify one screenshot format',
    });
  });

  it('takes a screenshot viewport and quality without a warning, and refuses unknown fields of a format object', () => {
    const shot = parsedValue(
      scrape([{ type: 'screenshot', viewport: { width: 800, height: 600 }, quality: 80 }]),
    );
    expect([shot.formats, shot.warnings, shot.screenshot]).toEqual([
      ['screenshot'],
      [],
      { viewport: { width: 800, height: 600 }, quality: 80, full_page: false },
    ]);
    expect(
      detailsOf(
        scrape([
          { type: 'screenshot', viewport: { width: 800 } },
          { type: 'html', x: 1 },
        ]),
      ),
    ).toEqual({
      'formats[0].viewport.height': expect.any(String),
      'formats[1].x': 'unknown field',
    });
  });

  it('refuses a viewport or quality out of bounds at its field (width 100–3840, height 100–4320, quality 1–100)', () => {
    const shot = (fields: Record<string, unknown>) => detailsOf(scrape([{ type: 'screenshot', ...fields }]));
    expect(shot({ viewport: { width: 99, height: 4321 }, quality: 0 })).toEqual({
      'formats[0].viewport.width': 'must be at least 100',
      'formats[0].viewport.height': 'must be at most 4320',
      'formats[0].quality': 'must be at least 1',
    });
    expect(shot({ viewport: { width: 3841, height: 100.5 }, quality: 101 })).toEqual({
      'formats[0].viewport.width': 'must be at most 3840',
      'formats[0].viewport.height': expect.stringContaining('integer'),
      'formats[0].quality': 'must be at most 100',
    });
    expect(shot({ viewport: { width: 3840, height: 4320, depth: 2 } })).toEqual({
      'formats[0].viewport.depth': 'unknown field',
    });
  });

  it('refuses formats that are not a list', () => {
    expect(detailsOf(scrape('markdown'))).toEqual({ formats: 'must be an array' });
  });
});
