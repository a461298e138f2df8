import { batchStatus, crawlErrorsBody, crawlStatus, errorBody, firecrawlStatus, mapBody } from './bodies.ts';
import type { FirecrawlDocument } from './document.ts';

const page: FirecrawlDocument = { markdown: '# A', metadata: { sourceURL: 'https://example.com/a' } };
const expiresAt = new Date('2030-01-02T03:04:05.678Z');
const urls = { total: 12, successful: 7, failed: 1, skipped: 2 };

describe('firecrawlStatus', () => {
  it.each([
    ['running', 0, 'scraping'],
    ['running', 5, 'scraping'],
    ['success', 3, 'completed'],
    ['success', 0, 'completed'],
    ['failed', 3, 'completed'],
    ['failed', 0, 'failed'],
    ['cancelled', 3, 'cancelled'],
  ] as const)('reads a %s run with %i successful pages as %s', (run, successful, status) => {
    expect(firecrawlStatus(run, successful)).toBe(status);
  });
});

describe('crawlStatus', () => {
  it('answers Firecrawl’s v2 body, with next', () => {
    expect(
      crawlStatus({
        version: 'v2',
        runStatus: 'running',
        urls,
        expiresAt,
        next: 'https://api.example/v2/crawl/r1?skip=100',
        data: [page],
      }),
    ).toEqual({
      success: true,
      status: 'scraping',
      total: 10,
      completed: 7,
      creditsUsed: 7,
      expiresAt: '2030-01-02T03:04:05.678Z',
      next: 'https://api.example/v2/crawl/r1?skip=100',
      data: [page],
    });
  });

  it('answers next: null on v2’s last page', () => {
    expect(
      crawlStatus({ version: 'v2', runStatus: 'success', urls, expiresAt, next: null, data: [] }),
    ).toHaveProperty('next', null);
  });

  it('leaves next out on v1’s last page, as v1’s SDK follows any next key', () => {
    const body = crawlStatus({
      version: 'v1',
      runStatus: 'success',
      urls,
      expiresAt,
      next: null,
      data: [page],
    });
    expect(body).not.toHaveProperty('next');
    expect(body).toMatchObject({ status: 'completed', total: 10, completed: 7, data: [page] });
    expect(
      crawlStatus({
        version: 'v1',
        runStatus: 'success',
        urls,
        expiresAt,
        next: 'https://n.example/',
        data: [],
      }).next,
    ).toBe('https://n.example/');
  });

  it('reads a batch as a crawl', () => {
    const progress = {
      version: 'v2',
      runStatus: 'cancelled',
      urls,
      expiresAt,
      next: null,
      data: [],
    } as const;
    expect(batchStatus(progress)).toEqual(crawlStatus(progress));
    expect(batchStatus(progress).status).toBe('cancelled');
  });
});

describe('crawlErrorsBody', () => {
  it('lists the failed pages and the URLs robots.txt kept out', () => {
    const error = {
      id: 'u1',
      url: 'https://example.com/x',
      error: 'HTTP 500',
      timestamp: '2030-01-01T00:00:00.000Z',
    };
    expect(crawlErrorsBody([error], ['https://example.com/private'])).toEqual({
      errors: [error],
      robotsBlocked: ['https://example.com/private'],
    });
  });
});

describe('mapBody', () => {
  const links = [
    { url: 'https://example.com/a', title: 'A', description: 'About A' },
    { url: 'https://example.com/b', title: undefined, description: '' },
  ];

  it('answers v2 links as objects, without empty fields', () => {
    expect(mapBody(links, 'v2')).toEqual({
      success: true,
      links: [
        { url: 'https://example.com/a', title: 'A', description: 'About A' },
        { url: 'https://example.com/b' },
      ],
    });
  });

  it('answers v1 links as URLs', () => {
    expect(mapBody(links, 'v1')).toEqual({
      success: true,
      links: ['https://example.com/a', 'https://example.com/b'],
    });
  });
});

describe('errorBody', () => {
  it('is Firecrawl’s error shape, with details only when there are some', () => {
    expect(errorBody('Unauthorized')).toEqual({ success: false, error: 'Unauthorized' });
    expect(errorBody('Bad', {})).toEqual({ success: false, error: 'Bad' });
    expect(errorBody('Bad', { 'formats[0]': 'x' })).toEqual({
      success: false,
      error: 'Bad',
      details: { 'formats[0]': 'x' },
    });
  });
});
