import { cacheKeyOf, jobOptions, readJobOptions } from './job-options.ts';
import { scrapeJob } from './jobs.ts';
import { parseScrapeRequest } from './scrape-request.ts';
import { parsedValue } from './testing.ts';

const keyOf = (fields: Record<string, unknown>, url = 'https://example.com/a') => {
  const request = parsedValue(parseScrapeRequest({ url, ...fields }, 'v2'));
  return cacheKeyOf(request.url, scrapeJob(request).job, request);
};

describe('cacheKeyOf', () => {
  it('is the same for the same URL and options, whatever the timeout, maxAge or storeInCache', () => {
    const key = keyOf({ formats: ['markdown'] });
    expect(keyOf({ formats: ['markdown'], timeout: 60_000, maxAge: 5, storeInCache: false })).toBe(key);
  });

  it('differs with the URL, the formats, the content options, headers, actions and attributes', () => {
    const key = keyOf({ formats: ['markdown'] });
    for (const other of [
      keyOf({ formats: ['markdown'] }, 'https://example.com/b'),
      keyOf({ formats: ['markdown', 'links'] }),
      keyOf({ formats: ['markdown'], onlyMainContent: false }),
      keyOf({ formats: ['markdown'], headers: { 'X-Key': 'a' } }),
      keyOf({ formats: ['markdown'], actions: [{ type: 'scrape' }] }),
      keyOf({ formats: [{ type: 'attributes', selectors: [{ selector: 'a', attribute: 'href' }] }] }),
    ])
      expect(other).not.toBe(key);
    expect(keyOf({ formats: ['markdown'], headers: { 'X-Key': 'a' } })).not.toBe(
      keyOf({ formats: ['markdown'], headers: { 'X-Key': 'b' } }),
    );
  });
});

describe('jobOptions', () => {
  it('stores the formats, actions and attributes asked, and reads them back', () => {
    const request = parsedValue(
      parseScrapeRequest(
        { url: 'https://example.com/', formats: ['images'], actions: [{ type: 'scrape' }] },
        'v2',
      ),
    );
    const stored = JSON.parse(JSON.stringify(jobOptions(request)));
    expect(readJobOptions(stored)).toEqual({
      formats: ['images'],
      actions: { screenshots: 0, scrapes: 1, scripts: 0 },
      attributes: [],
    });
    expect(readJobOptions(null)).toBeNull();
  });
});
