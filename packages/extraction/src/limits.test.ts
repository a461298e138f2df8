import { describe, expect, test } from '@jest/globals';
import {
  compileJob,
  DEFAULT_EXTRACTION_LIMITS,
  ExtractionError,
  type ExtractionLimits,
  extract,
  MAX_RECORDS_LIMIT,
  type QuerySpec,
} from './index.ts';

const MIB = 1024 * 1024;

function failure(queries: QuerySpec[], html: string, limits?: ExtractionLimits): ExtractionError {
  const job = compileJob(queries, limits);
  try {
    extract(job, html);
  } catch (error) {
    if (error instanceof ExtractionError) return error;
    throw error;
  }
  throw new Error('expected the page to fail');
}

function values(type: QuerySpec['type'], query: string, html: string, limits?: ExtractionLimits) {
  return extract(compileJob([{ name: 'v', type, query }], limits), html).map((record) => record.v);
}

function timed<T>(task: () => T): { result: T; ms: number } {
  const started = performance.now();
  const result = task();
  return { result, ms: performance.now() - started };
}

/** `depth` nested divs, each opening with `text`. */
function nestedDivs(depth: number, text: string): string {
  return `${`<div>${text}`.repeat(depth)}${'</div>'.repeat(depth)}`;
}

const items = (count: number, text = 'x') => `<ul>${`<li>${text}</li>`.repeat(count)}</ul>`;

describe('default limits', () => {
  test('are those of docs/api.md §16', () => {
    expect(DEFAULT_EXTRACTION_LIMITS).toEqual({
      timeLimitMs: 5000,
      maxRecords: 10_000,
      maxValueBytes: MIB,
      maxTotalBytes: 16 * MIB,
    });
  });
});

describe('the time limit of a page', () => {
  // Selectors of names, attributes and `>` or white space are matched in one pass, each element
  // once (stream.test.ts); a pseudo-class sends this one to css-select, which backtracks.
  test('stops a css selector that backtracks over 200 nested divs, naming the query', () => {
    const hostile = nestedDivs(200, '');
    const { result: error, ms } = timed(() =>
      failure([{ name: 'evil', type: 'css', query: 'x div div div div div div:not(p)' }], hostile, {
        timeLimitMs: 1000,
      }),
    );
    expect(error.message).toBe(
      'extraction exceeded its time limit of 1000 ms (css query "evil" was running)',
    );
    expect(error.limit).toBe('time');
    expect(error.code).toBe('EXTRACTION_ERROR');
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(2500);
  });

  test('stops an XPath that counts through a huge sequence', () => {
    // On its own, without //p, the expression is already too expensive to compile (compile.test.ts).
    const query = 'count(//p ! (1 to 100000000)[. mod 7 = 0])';
    const { result: error, ms } = timed(() =>
      failure([{ name: 'sevens', type: 'xpath', query }], '<p/>', {
        timeLimitMs: 300,
      }),
    );
    expect(error.message).toBe(
      'extraction exceeded its time limit of 300 ms (xpath query "sevens" was running)',
    );
    expect(ms).toBeLessThan(2000);
  });

  test('stops a backtracking regex on a long run of a', () => {
    const error = failure([{ name: 'evil', type: 'regex', query: '(a+)+$' }], `${'a'.repeat(5000)}b`, {
      timeLimitMs: 200,
    });
    expect(error.message).toBe(
      'extraction exceeded its time limit of 200 ms (regex query "evil" was running)',
    );
  });

  test('covers every query of the page together and names the one that was running', () => {
    const error = failure(
      [
        { name: 'fine', type: 'css', query: 'div' },
        { name: 'evil', type: 'regex', query: '(a+)+$' },
      ],
      `<div>${'a'.repeat(5000)}b</div>`,
      { timeLimitMs: 200 },
    );
    expect(error.message).toBe(
      'extraction exceeded its time limit of 200 ms (regex query "evil" was running)',
    );
  });

  test('covers parsing the page', () => {
    const huge = items(300_000, 'some text');
    const error = failure([{ name: 'v', type: 'css', query: 'li' }], huge, { timeLimitMs: 1 });
    expect(error.message).toBe('extraction exceeded its time limit of 1 ms (while parsing the page)');
    expect(error.limit).toBe('time');
  });
});

describe('the records limit of a page', () => {
  test('fails a row query with more matches than the limit, naming the limit', () => {
    const error = failure([{ name: 'items', type: 'css', query: 'li' }], items(10_001));
    expect(error.message).toBe(
      'css query "items" gave more than 10000 matches, over the limit of 10000 records per page',
    );
    expect(error.limit).toBe('records');
  });

  test('lets a page give exactly the limit', () => {
    expect(values('css', 'li', items(10_000))).toHaveLength(10_000);
  });

  test('stops an XPath sequence at the limit instead of building it', () => {
    const { result: error, ms } = timed(() =>
      failure([{ name: 'n', type: 'xpath', query: '//p ! (1 to 100000000)' }], '<p/>'),
    );
    expect(error.message).toBe(
      'xpath query "n" gave more than 10000 matches, over the limit of 10000 records per page',
    );
    expect(ms).toBeLessThan(1000);
  });

  test('stops empty regex matches at the limit', () => {
    const error = failure([{ name: 'empty', type: 'regex', query: 'x*' }], 'a'.repeat(50_000));
    expect(error.limit).toBe('records');
  });

  test('does not count the matches of a joined query, which give one value', () => {
    expect(
      extract(compileJob([{ name: 'all', type: 'css', query: 'li', join: true }]), items(20_000)),
    ).toEqual([{ all: Array(20_000).fill('x').join(' ') }]);
  });

  test('keeps nothing for the empty matches of a joined query', () => {
    const job = compileJob([{ name: 'empty', type: 'regex', query: 'x*', join: true }]);
    const { result, ms } = timed(() => extract(job, 'a'.repeat(2_000_000)));
    expect(result).toEqual([{ empty: '' }]);
    expect(ms).toBeLessThan(2000);
  });

  test('is configurable', () => {
    expect(values('css', 'li', items(2), { maxRecords: 2 })).toEqual(['x', 'x']);
    expect(failure([{ name: 'v', type: 'css', query: 'li' }], items(3), { maxRecords: 2 }).message).toBe(
      'css query "v" gave more than 2 matches, over the limit of 2 records per page',
    );
  });

  // The view `results` numbers a page's records in 14 bits; a larger page would give two of a
  // run's records one seq (prisma/migrations/20261201120000_result_pages).
  test('cannot be set past 2^14 records, the most a stored page can hold', () => {
    expect(MAX_RECORDS_LIMIT).toBe(2 ** 14);
    expect(values('css', 'li', items(2 ** 14), { maxRecords: MAX_RECORDS_LIMIT })).toHaveLength(2 ** 14);
    expect(() => compileJob([{ name: 'v', type: 'css', query: 'li' }], { maxRecords: 20_000 })).toThrow(
      new RangeError('maxRecords must be at most 16384 (the records a stored page can hold), got 20000'),
    );
  });
});

describe('the value limit of a page', () => {
  test('fails a css value over 1 MiB without building more of it than the limit', () => {
    const html = `<div>${`<p>${'0123456789abcdef'.repeat(64)}</p>`.repeat(3200)}</div>`; // 3.2 MiB of text
    const before = process.memoryUsage().heapUsed;
    const { result: error, ms } = timed(() => failure([{ name: 'big', type: 'css', query: 'div' }], html));
    expect(error.message).toBe(
      'css query "big" gave a value over the limit of 1048576 bytes (1 MiB per value)',
    );
    expect(error.limit).toBe('value');
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(100 * MIB);
    expect(ms).toBeLessThan(3000);
  });

  test('counts UTF-8 bytes, not characters', () => {
    const limits = { maxValueBytes: 10 };
    expect(values('css', 'p', '<p>€€€</p><p>aaaaaaaaaa</p>', limits)).toEqual(['€€€', 'aaaaaaaaaa']);
    expect(failure([{ name: 'v', type: 'css', query: 'p' }], '<p>€€€€</p>', limits).message).toBe(
      'css query "v" gave a value over the limit of 10 bytes (10 bytes per value)',
    );
    expect(failure([{ name: 'v', type: 'css', query: 'p' }], '<p>aaaaaaaaaaa</p>', limits).limit).toBe(
      'value',
    );
  });

  test('counts the value after white space is collapsed', () => {
    expect(
      values('css', 'p', `<p>a${' '.repeat(100)}b${'\n'.repeat(100)}</p>`, { maxValueBytes: 3 }),
    ).toEqual(['a b']);
    expect(values('css', 'p', `<p>${'<b>a</b>      '.repeat(1000)}</p>`, { maxValueBytes: 2000 })).toEqual([
      Array(1000).fill('a').join(' '),
    ]);
  });

  test('applies to ::text, attributes, regex matches and every kind of XPath result', () => {
    const limits = { maxValueBytes: 100 };
    const long = 'y'.repeat(101);
    const html = `<p title="${long}">${long}<b>x</b></p>`;
    const cases: [QuerySpec['type'], string][] = [
      ['css', 'p::text'],
      ['css', 'p::attr(title)'],
      ['regex', 'y+'],
      ['xpath', '//p'],
      ['xpath', '//p/@title'],
      ['xpath', '//p/text()'],
      ['xpath', '(//p)'],
      ['xpath', 'string-join(1 to 100)'],
      ['xpath', 'array { 1 to 100 }'],
      ['xpath', 'map { "a": string-join(1 to 100) }'],
    ];
    for (const [type, query] of cases) {
      expect({ query, limit: failure([{ name: 'v', type, query }], html, limits).limit }).toEqual({
        query,
        limit: 'value',
      });
    }
  });

  test('stops serialising a huge XPath array early', () => {
    const { result: error, ms } = timed(() =>
      failure([{ name: 'v', type: 'xpath', query: 'array { //p ! (1 to 300000) }' }], '<p/>', {
        maxValueBytes: 1000,
      }),
    );
    expect(error.message).toBe(
      'xpath query "v" gave a value over the limit of 1000 bytes (1000 bytes per value)',
    );
    expect(ms).toBeLessThan(4000);
  });

  test('applies to a joined value as a whole', () => {
    const error = failure([{ name: 'all', type: 'css', query: 'li', join: true }], items(4, 'aaaa'), {
      maxValueBytes: 18,
    });
    expect(error.message).toBe(
      'css query "all" gave a joined value over the limit of 18 bytes (18 bytes per value)',
    );
    expect(values('css', 'li', items(4, 'aaaa'), { maxValueBytes: 19 })).toHaveLength(4);
  });

  test('lets a joined value exactly at the limit take more empty matches', () => {
    const job = compileJob([{ name: 'all', type: 'css', query: 'li', join: true }], { maxValueBytes: 9 });
    expect(extract(job, '<li>aaaa</li><li>aaaa</li><li> </li>')).toEqual([{ all: 'aaaa aaaa' }]);
  });
});

describe('the total limit of a page', () => {
  test('fails 1,000 nested divs of 1 MiB in all quickly and without building their values', () => {
    const html = nestedDivs(1000, 'x'.repeat(1037)); // each div's text is its own and its descendants'
    expect(html.length).toBeLessThan(MIB);
    for (const [type, query] of [
      ['css', 'div'],
      ['xpath', '//div'],
      ['xpath', '(//div)'],
    ] as const) {
      const before = process.memoryUsage().heapUsed;
      const { result: error, ms } = timed(() => failure([{ name: 'v', type, query }], html));
      expect(error.message).toBe(
        `${type} query "v" took the page's values over the limit of 16777216 bytes (16 MiB of values in all)`,
      );
      expect(error.limit).toBe('total');
      expect(process.memoryUsage().heapUsed - before).toBeLessThan(100 * MIB);
      expect(ms).toBeLessThan(3000);
    }
  });

  test('adds up the values of every query', () => {
    const queries: QuerySpec[] = [
      { name: 'a', type: 'css', query: 'li' },
      { name: 'b', type: 'regex', query: '<li>(x+)' },
    ];
    const html = items(3, 'xxxxxxxxxx');
    expect(extract(compileJob(queries, { maxTotalBytes: 60 }), html)).toHaveLength(3);
    expect(failure(queries, html, { maxTotalBytes: 59 }).message).toBe(
      'regex query "b" took the page\'s values over the limit of 59 bytes (59 bytes of values in all)',
    );
  });

  test('counts multi-byte characters exactly near the limit', () => {
    const limits = { maxTotalBytes: 100 };
    const e20 = 'é'.repeat(20); // 40 bytes
    expect(values('css', 'li', items(2, e20), limits)).toEqual([e20, e20]);
    expect(failure([{ name: 'v', type: 'css', query: 'li' }], items(3, e20), limits).limit).toBe('total');
    expect(values('css', 'li', items(5, 'e'.repeat(20)), limits)).toHaveLength(5);
  });

  test('counts a joined value once per record it is repeated in', () => {
    const queries: QuerySpec[] = [
      { name: 'title', type: 'css', query: 'title', join: true },
      { name: 'item', type: 'css', query: 'li' },
    ];
    const title = `<title>${'t'.repeat(2000)}</title>`;
    // 8,000 records of 2,001 bytes: under 16 MiB; 10,000: over.
    expect(extract(compileJob(queries), title + items(8000, 'x'))).toHaveLength(8000);
    const error = failure(queries, title + items(10_000, 'x'));
    expect(error.message).toBe(
      "the page's values go over the limit of 16777216 bytes (16 MiB of values in all) once its joined values repeat in each of its 10000 records",
    );
    expect(error.limit).toBe('total');
  });

  test('is configurable', () => {
    expect(values('css', 'li', items(3, 'abc'), { maxTotalBytes: 9 })).toHaveLength(3);
    expect(
      failure([{ name: 'v', type: 'css', query: 'li' }], items(4, 'abc'), { maxTotalBytes: 9 }).limit,
    ).toBe('total');
  });
});

describe('values PostgreSQL can store', () => {
  test('NUL characters are dropped from every kind of value', () => {
    const html = '<p title="a\0b">a\0b <i>c \0 d</i></p>';
    expect(values('css', 'p', html)).toEqual(['ab c d']);
    expect(values('css', 'p::attr(title)', html)).toEqual(['ab']);
    expect(values('css', 'p::text', html)).toEqual(['ab']);
    expect(values('regex', 'a.b', html)).toEqual(['ab', 'ab']);
    expect(values('xpath', '//p', html)).toEqual(['ab c d']);
    expect(values('xpath', '(//p/@title)', html)).toEqual(['ab']);
  });

  test('lone surrogates are replaced by U+FFFD', () => {
    expect(values('regex', '.', '😀')).toEqual(['\uFFFD', '\uFFFD']);
    expect(values('css', 'p', '<p>a\uD800b</p>')).toEqual(['a\uFFFDb']);
    expect(values('xpath', '//p/@title', '<p title="\uDC00"></p>')).toEqual(['\uFFFD']);
    expect(values('regex', '/./u', '😀')).toEqual(['😀']);
  });
});
