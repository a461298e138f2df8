import { describe, expect, test } from '@jest/globals';
import {
  compileJob,
  compileLinks,
  ExtractionError,
  type ExtractionLimits,
  extract,
  extractPage,
  type QuerySpec,
  type QueryType,
} from './index.ts';

const PAGE_URL = 'https://shop.example/list/page1.html';

const PAGE = `<!DOCTYPE html>
<html><head><title>Shop</title></head>
<body>
  <ul>
    <li class="item"><a href="/p/1">Apple</a></li>
    <li class="item"><a href="p/2">Pear</a></li>
    <li class="item"><a href="https://other.example/p/3">Plum</a></li>
  </ul>
  <a class="next" rel="next" href="?page=2">Next</a>
  <a class="next" rel="next">Next without href</a>
  <span class="url">/from/text</span>
</body></html>`;

/** What a crawler's accept does at least: resolve, keep http(s). */
function absolute(raw: string, base: string): string | null {
  const url = URL.parse(raw, base);
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:') ? url.href : null;
}

type Follow = { type: QueryType; query: string };

const NO_RECORDS: QuerySpec[] = [];

function links(
  follow: Follow[],
  html = PAGE,
  options: { accept?: (raw: string, base: string) => string | null; queries?: QuerySpec[] } = {},
): string[] {
  const job = compileJob(options.queries ?? NO_RECORDS);
  const compiled = compileLinks(follow);
  return extractPage(job, html, { compiled, accept: options.accept ?? absolute, baseUrl: PAGE_URL }).links;
}

function failure(task: () => unknown): ExtractionError {
  try {
    task();
  } catch (error) {
    if (error instanceof ExtractionError) return error;
    throw error;
  }
  throw new Error('expected an ExtractionError');
}

describe('css link queries', () => {
  test('::attr(href) gives each attribute value as a URL', () => {
    expect(links([{ type: 'css', query: 'a.next::attr(href)' }])).toEqual([
      'https://shop.example/list/page1.html?page=2',
    ]);
  });

  test('a selector of elements gives their href, skipping elements without one', () => {
    expect(links([{ type: 'css', query: 'a.next' }])).toEqual([
      'https://shop.example/list/page1.html?page=2',
    ]);
    expect(links([{ type: 'css', query: 'li a' }])).toEqual([
      'https://shop.example/p/1',
      'https://shop.example/list/p/2',
      'https://other.example/p/3',
    ]);
  });

  test('::text gives the element own text as the URL', () => {
    expect(links([{ type: 'css', query: 'span.url::text' }])).toEqual(['https://shop.example/from/text']);
  });
});

describe('xpath link queries', () => {
  test('attribute nodes give their value', () => {
    expect(links([{ type: 'xpath', query: '//li/a/@href' }])).toEqual([
      'https://shop.example/p/1',
      'https://shop.example/list/p/2',
      'https://other.example/p/3',
    ]);
  });

  test('an element on the fast path gives its href, skipping elements without one', () => {
    expect(links([{ type: 'xpath', query: "//a[@rel='next']" }])).toEqual([
      'https://shop.example/list/page1.html?page=2',
    ]);
  });

  test('an element from fontoxpath gives its href too', () => {
    expect(links([{ type: 'xpath', query: "(//a[@rel='next'])[1]" }])).toEqual([
      'https://shop.example/list/page1.html?page=2',
    ]);
    expect(links([{ type: 'xpath', query: "(//a[@rel='next'])[2]" }])).toEqual([]);
  });

  test('text nodes and string results give the string itself', () => {
    expect(links([{ type: 'xpath', query: "//span[@class='url']/text()" }])).toEqual([
      'https://shop.example/from/text',
    ]);
    expect(links([{ type: 'xpath', query: 'concat("/p/", count(//li))' }])).toEqual([
      'https://shop.example/p/3',
    ]);
  });

  test('a dynamic XPath error fails the page, naming the follow query', () => {
    const error = failure(() => links([{ type: 'xpath', query: 'exactly-one(//li)' }]));
    expect(error.message).toMatch(/^xpath follow query 1 failed on this page: FORG0005/);
    expect(error.limit).toBeUndefined();
  });
});

describe('regex link queries', () => {
  test('give group 1 when the pattern has a group', () => {
    expect(links([{ type: 'regex', query: '<li class="item"><a href="([^"]+)"' }])).toEqual([
      'https://shop.example/p/1',
      'https://shop.example/list/p/2',
      'https://other.example/p/3',
    ]);
  });

  test('give the whole match when it has none', () => {
    expect(links([{ type: 'regex', query: 'https://other\\.example/p/\\d+' }])).toEqual([
      'https://other.example/p/3',
    ]);
  });
});

describe('relative URLs', () => {
  const page = (head: string) =>
    `<html><head>${head}</head><body><a href="next.html">n</a> <a href="/root">r</a></body></html>`;
  const follow: Follow[] = [{ type: 'css', query: 'a' }];
  const regexFollow: Follow[] = [{ type: 'regex', query: '<a href="([^"]+)"' }];

  test('resolve against the page URL when the page has no <base href>', () => {
    const html = page('<base target="_blank">');
    const expected = ['https://shop.example/list/next.html', 'https://shop.example/root'];
    expect(links(follow, html)).toEqual(expected);
    expect(links(regexFollow, html)).toEqual(expected);
  });

  test('resolve against an absolute <base href>, parsed or not', () => {
    const html = page('<base href="https://cdn.example/a/b/">');
    const expected = ['https://cdn.example/a/b/next.html', 'https://cdn.example/root'];
    expect(links(follow, html)).toEqual(expected);
    expect(links(regexFollow, html)).toEqual(expected);
  });

  test('resolve against a relative <base href>, itself resolved against the page URL', () => {
    const html = page('<base target="x"><base href="../sub/"><base href="/ignored/">');
    const expected = ['https://shop.example/sub/next.html', 'https://shop.example/root'];
    expect(links(follow, html)).toEqual(expected);
    expect(links(regexFollow, html)).toEqual(expected);
  });

  test('accept is given the resolved base and the raw match', () => {
    const calls: [string, string][] = [];
    links(follow, page('<base href="/sub/">'), {
      accept: (raw, base) => {
        calls.push([raw, base]);
        return null;
      },
    });
    expect(calls).toEqual([
      ['next.html', 'https://shop.example/sub/'],
      ['/root', 'https://shop.example/sub/'],
    ]);
  });

  test('a base that does not parse or is a javascript: URL is ignored', () => {
    expect(links(follow, page('<base href="http://[bad">'))[0]).toBe('https://shop.example/list/next.html');
    expect(links(follow, page('<base href="javascript:void(0)">'))[0]).toBe(
      'https://shop.example/list/next.html',
    );
  });

  test('a <base> after the head counts in a parsed page, but is not looked for without a parse', () => {
    const html = '<html><head></head><body><base href="/late/"><a href="x">x</a></body></html>';
    expect(links(regexFollow, html)).toEqual(['https://shop.example/list/x']);
    expect(links([{ type: 'css', query: 'a' }], html)).toEqual(['https://shop.example/late/x']);
  });
});

describe('the links of a page', () => {
  test('are dropped where accept returns null', () => {
    const sameOrigin = (raw: string, base: string) => {
      const url = absolute(raw, base);
      return url !== null && new URL(url).origin === 'https://shop.example' ? url : null;
    };
    expect(links([{ type: 'css', query: 'a' }], PAGE, { accept: sameOrigin })).toEqual([
      'https://shop.example/p/1',
      'https://shop.example/list/p/2',
      'https://shop.example/list/page1.html?page=2',
    ]);
  });

  test('are deduplicated in first-seen order across queries', () => {
    const html =
      '<a href="/b">1</a><a href="/a">2</a><a href="/b#x">3</a><a href="https://shop.example/a">4</a>';
    const withoutFragment = (raw: string, base: string) => absolute(raw, base)?.replace(/#.*$/, '') ?? null;
    expect(
      links(
        [
          { type: 'css', query: 'a' },
          { type: 'regex', query: 'href="([^"]+)"' },
          { type: 'xpath', query: '//a/@href' },
        ],
        html,
        { accept: withoutFragment },
      ),
    ).toEqual(['https://shop.example/b', 'https://shop.example/a']);
  });

  test('stop at 10,000 URLs, evaluating no further', () => {
    const html = Array.from({ length: 20_000 }, (_, i) => `<a href="/p/${i}">${i}</a>`).join('\n');
    let calls = 0;
    const counting = (raw: string, base: string) => {
      calls++;
      return absolute(raw, base);
    };
    const found = links(
      [
        { type: 'css', query: 'a' },
        { type: 'regex', query: 'href="([^"]+)"' },
      ],
      html,
      { accept: counting },
    );
    expect(found).toHaveLength(10_000);
    expect(found[0]).toBe('https://shop.example/p/0');
    expect(found[9999]).toBe('https://shop.example/p/9999');
    expect(calls).toBe(10_000);
  });

  test('ignore raw matches longer than 4096 characters', () => {
    const long = `/${'x'.repeat(4096)}`;
    const html = `<a href="${long}">long</a><a href="/${'y'.repeat(4095)}">fits</a>`;
    const found = links([{ type: 'xpath', query: '//a/@href' }], html);
    expect(found).toEqual([`https://shop.example/${'y'.repeat(4095)}`]);
  });

  test('are an empty list when extractPage is not given link queries', () => {
    const job = compileJob([{ name: 'name', type: 'css', query: 'li a' }]);
    expect(extractPage(job, PAGE)).toEqual({ records: extract(job, PAGE), links: [] });
  });
});

describe('records beside links', () => {
  const queries: QuerySpec[] = [
    { name: 'name', type: 'css', query: 'li a' },
    { name: 'href', type: 'xpath', query: '//li/a/@href' },
    { name: 'title', type: 'regex', query: '<title>(.*?)</title>', join: true },
  ];

  test('are the records extract gives, with the links beside them', () => {
    const job = compileJob(queries);
    const page = extractPage(job, PAGE, {
      compiled: compileLinks([{ type: 'css', query: 'a.next' }]),
      accept: absolute,
      baseUrl: PAGE_URL,
    });
    expect(page.records).toEqual(extract(job, PAGE));
    expect(page.records).toHaveLength(3);
    expect(page.links).toEqual(['https://shop.example/list/page1.html?page=2']);
  });

  test('a page where no record query matches still gives its links', () => {
    const job = compileJob([{ name: 'price', type: 'css', query: '.price' }]);
    const page = extractPage(job, PAGE, {
      compiled: compileLinks([{ type: 'xpath', query: "//a[@rel='next']" }]),
      accept: absolute,
      baseUrl: PAGE_URL,
    });
    expect(page).toEqual({ records: [], links: ['https://shop.example/list/page1.html?page=2'] });
  });

  test('link matches do not count toward the records limit', () => {
    const limits: ExtractionLimits = { maxRecords: 2 };
    const job = compileJob([{ name: 'first', type: 'css', query: 'li:first-child a' }], limits);
    const page = extractPage(job, PAGE, {
      compiled: compileLinks([{ type: 'css', query: 'a' }]),
      accept: absolute,
      baseUrl: PAGE_URL,
    });
    expect(page.records).toEqual([{ first: 'Apple' }]);
    expect(page.links).toHaveLength(4);
  });
});

describe('the time limit of a page with links', () => {
  const evil = `${'a'.repeat(50)}!`;

  test('stops a hostile link query as it stops a record query', () => {
    const job = compileJob([{ name: 'v', type: 'css', query: 'p' }], { timeLimitMs: 100 });
    const started = performance.now();
    const error = failure(() =>
      extractPage(job, evil, {
        compiled: compileLinks([
          { type: 'css', query: 'a' },
          { type: 'regex', query: '(a+)+$' },
        ]),
        accept: absolute,
        baseUrl: PAGE_URL,
      }),
    );
    expect(error.message).toBe(
      'extraction exceeded its time limit of 100 ms (regex follow query 2 was running)',
    );
    expect(error.limit).toBe('time');
    expect(performance.now() - started).toBeLessThan(2000);
  });

  test('covers accept too', () => {
    const job = compileJob([], { timeLimitMs: 100 });
    const error = failure(() =>
      extractPage(job, '<a href="x">x</a>', {
        compiled: compileLinks([{ type: 'css', query: 'a::attr(href)' }]),
        accept: () => (/(a+)+$/.test(evil) ? 'never' : null),
        baseUrl: PAGE_URL,
      }),
    );
    expect(error.message).toBe(
      'extraction exceeded its time limit of 100 ms (css follow query 1 was running)',
    );
  });
});

describe('compileLinks', () => {
  test('names the follow query that does not compile', () => {
    expect(() =>
      compileLinks([
        { type: 'css', query: 'a' },
        { type: 'xpath', query: '//a[' },
      ]),
    ).toThrow(/^follow query 2: invalid XPath: XPST0003/);
    expect(() => compileLinks([{ type: 'css', query: 'a >' }])).toThrow(
      'follow query 1: invalid CSS selector: the selector ends with a combinator',
    );
    expect(() => compileLinks([{ type: 'xml' as QueryType, query: 'a' }])).toThrow(
      'follow query 1: unknown type "xml"',
    );
  });

  test('names a follow query that is too expensive to compile', () => {
    expect(() => compileLinks([{ type: 'xpath', query: 'count((1 to 100000000000) ! 1)' }])).toThrow(
      'follow query 1: too expensive to compile (took longer than 1000 ms)',
    );
  });

  test('takes 1 to 10 queries', () => {
    const follow = (count: number): Follow[] =>
      Array.from({ length: count }, () => ({ type: 'css', query: 'a' }));
    expect(() => compileLinks(follow(0))).toThrow(ExtractionError);
    expect(() => compileLinks(follow(11))).toThrow('a crawl needs 1 to 10 follow queries, got 11');
    expect(() => compileLinks(follow(10))).not.toThrow();
  });
});
