import { parseParseOptions } from './parse-request.ts';
import { detailsOf, parsedValue } from './testing.ts';

const options = (fields: Record<string, unknown>) => parseParseOptions(JSON.stringify(fields));

describe('parseParseOptions', () => {
  it('gives Firecrawl’s defaults without an options part, or an empty one', () => {
    const defaults = {
      formats: ['markdown'],
      attributes: [],
      modelFormatsAt: [],
      onlyMainContent: true,
      includeTags: [],
      excludeTags: [],
      timeout: 30_000,
      maxPages: null,
      warnings: [],
    };
    expect(parsedValue(parseParseOptions(undefined))).toEqual(defaults);
    expect(parsedValue(parseParseOptions(' '))).toEqual(defaults);
    expect(parsedValue(options({}))).toEqual(defaults);
  });

  it('reads what the SDK and the MCP server send: formats, content options, timeout, origin', () => {
    const value = parsedValue(
      options({
        formats: [
          'markdown',
          'html',
          'rawHtml',
          'links',
          'images',
          { type: 'attributes', selectors: [{ selector: 'a', attribute: 'href' }] },
        ],
        onlyMainContent: false,
        includeTags: ['main'],
        excludeTags: ['.ads', 'nav'],
        timeout: 5000,
        origin: 'js-sdk@4.42.0',
        zeroDataRetention: true,
        proxy: 'auto',
        maxAge: 0,
        storeInCache: false,
        removeBase64Images: true,
      }),
    );
    expect(value).toMatchObject({
      formats: ['markdown', 'html', 'rawHtml', 'links', 'images', 'attributes'],
      attributes: [{ selector: 'a', attribute: 'href' }],
      onlyMainContent: false,
      includeTags: ['main'],
      excludeTags: ['.ads', 'nav'],
      timeout: 5000,
      warnings: [],
    });
  });

  it('takes maxPages from pdfOptions, or from a pdf parser as the MCP server sends it', () => {
    expect(parsedValue(options({ pdfOptions: { maxPages: 3 } })).maxPages).toBe(3);
    expect(parsedValue(options({ parsers: [{ type: 'pdf', maxPages: 2 }] })).maxPages).toBe(2);
    expect(parsedValue(options({ parsers: ['pdf'] })).maxPages).toBeNull();
    expect(detailsOf(options({ pdfOptions: { maxPages: 0 } }))).toEqual({
      'options.pdfOptions.maxPages': expect.stringMatching(/at least 1|>=1/),
    });
  });

  it('warns of parsers and parser options it does not honour', () => {
    const value = parsedValue(options({ parsers: ['image', { type: 'pdf', mode: 'ocr', maxPages: 4 }] }));
    expect(value.maxPages).toBe(4);
    expect(value.warnings).toEqual([
      'the parser "image" is not known to this service and is ignored',
      "the pdf parser's options mode are ignored: only maxPages is read",
    ]);
  });

  it('is a 400 at options for JSON that does not parse or is not an object', () => {
    expect(detailsOf(parseParseOptions('{"formats": ['))).toEqual({
      options: expect.stringMatching(/^is not valid JSON: /),
    });
    expect(detailsOf(parseParseOptions('[1]'))).toEqual({ options: 'must be a JSON object' });
    expect(detailsOf(parseParseOptions('null'))).toEqual({ options: 'must be a JSON object' });
  });

  it('is a 400 at options.formats[i] for formats a file has no page for, or unknown ones', () => {
    expect(detailsOf(options({ formats: ['markdown', 'screenshot', { type: 'changeTracking' }] }))).toEqual({
      'options.formats[1]': 'parse does not support the screenshot format',
      'options.formats[2]': 'parse does not support the changeTracking format',
    });
    expect(detailsOf(options({ formats: ['markdown', 'pictures'] }))).toEqual({
      'options.formats[1]': expect.stringMatching(/^is not a Firecrawl format/),
    });
  });

  it('marks the formats the language model writes, for the route to answer', () => {
    const value = parsedValue(
      options({ formats: ['markdown', 'summary', { type: 'json', prompt: 'the title' }] }),
    );
    expect(value.modelFormatsAt).toEqual([1, 2]);
  });

  it('is a 400 at each option a file cannot honour, with Firecrawl’s words', () => {
    expect(
      detailsOf(
        options({ waitFor: 1000, actions: [], location: { country: 'US' }, mobile: true, proxy: 'stealth' }),
      ),
    ).toEqual({
      'options.waitFor': 'parse does not support waitFor',
      'options.actions': 'parse does not support actions',
      'options.location': 'parse does not support location overrides',
      'options.mobile': 'parse does not support mobile rendering',
      'options.proxy': expect.stringContaining('basic'),
    });
    expect(detailsOf(options({ url: 'https://example.com/' }))).toEqual({ 'options.url': 'unknown field' });
  });

  it('is a 400 at the selector of includeTags or excludeTags that does not compile, and at a bad timeout', () => {
    expect(
      detailsOf(options({ includeTags: ['main', 'div >'], excludeTags: ['::before'], timeout: 10 })),
    ).toEqual({
      'options.includeTags[1]': 'the selector ends with a combinator or comma',
      'options.excludeTags[0]': 'pseudo-elements (::name) are not supported',
      'options.timeout': expect.stringMatching(/1000/),
    });
  });
});
