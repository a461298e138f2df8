import { describe, expect, test } from '@jest/globals';
import { htmlDocument } from './index.ts';

const PAGE = {
  sourceUrl: 'https://example.com/',
  url: 'https://example.com/dir/page',
  statusCode: 200,
  contentType: 'text/html',
};

function links(html: string): { links: string[]; truncated: string[] } {
  const document = htmlDocument(html, PAGE, {
    formats: ['links'],
    onlyMainContent: true,
    includeTags: [],
    excludeTags: [],
  });
  return { links: document.links!, truncated: document.truncated };
}

describe('links', () => {
  test('are the absolute http(s) links of the whole page, in document order, each once', () => {
    const html =
      '<html><head><link rel="stylesheet" href="/s.css"></head><body><nav><a href="/">Home</a></nav>' +
      '<main><a href="b">B</a><a href="https://other.example/x?y=1">X</a><a href="/">Home again</a>' +
      '<map><area href="/area" alt="area"></map></main><footer><a href="HTTPS://EXAMPLE.COM/dir/b">B again</a></footer></body></html>';
    expect(links(html).links).toEqual([
      'https://example.com/',
      'https://example.com/dir/b',
      'https://other.example/x?y=1',
      'https://example.com/area',
    ]);
  });

  test('leave out mailto:, tel:, javascript:, data: and links that do not parse', () => {
    const html =
      '<a href="mailto:a@example.com">m</a><a href="tel:+1">t</a><a href="javascript:void(0)">j</a>' +
      '<a href="data:text/html,x">d</a><a href="http://[bad">b</a><a name="anchor">n</a><a href="ftp://example.com/f">f</a>';
    expect(links(html).links).toEqual([]);
  });

  test('resolve against <base href> and keep their fragment', () => {
    const html =
      '<head><base href="https://cdn.example.org/docs/"></head><a href="guide#setup">g</a><a href="#top">t</a>';
    expect(links(html).links).toEqual([
      'https://cdn.example.org/docs/guide#setup',
      'https://cdn.example.org/docs/#top',
    ]);
  });

  test('stop at 10,000, named in truncated', () => {
    const anchors = Array.from({ length: 10_050 }, (_, i) => `<a href="/p/${i}">${i}</a>`).join('');
    const result = links(`<body>${anchors}</body>`);
    expect(result.links).toHaveLength(10_000);
    expect(result.links[9_999]).toBe('https://example.com/p/9999');
    expect(result.truncated).toEqual(['links']);
  });

  test('exactly 10,000 distinct links are not truncated', () => {
    const anchors = Array.from(
      { length: 10_000 },
      (_, i) => `<a href="/p/${i}">${i}</a><a href="/p/${i}">again</a>`,
    ).join('');
    expect(links(anchors).truncated).toEqual([]);
  });
});
