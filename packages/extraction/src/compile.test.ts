import { describe, expect, test } from '@jest/globals';
import {
  compileJob,
  compileQuery,
  DEFAULT_COMPILE_TIME_LIMIT_MS,
  ExtractionError,
  tooExpensiveToCompile,
} from './index.ts';

function message(type: 'css' | 'xpath' | 'regex', query: string): string {
  const result = compileQuery(type, query);
  if (result.ok) throw new Error(`expected ${type} ${query} to be rejected`);
  return result.message;
}

describe('compileQuery for css', () => {
  test('accepts selectors and both Scrapy suffixes', () => {
    for (const query of ['li.item > a', 'a::text', 'a::attr(href)', 'div ::text', 'li:has(a)', '::text']) {
      expect(compileQuery('css', query)).toEqual({ ok: true });
    }
  });

  test('rejects malformed selectors with a short message', () => {
    expect(message('css', 'div[')).toBe('invalid CSS selector: Expected name, found end of selector');
    expect(message('css', 'a >')).toBe('invalid CSS selector: the selector ends with a combinator');
    expect(message('css', '   ')).toBe('invalid CSS selector: the selector is empty');
    expect(message('css', 'a::before')).toBe(
      'invalid CSS selector: only ::text and ::attr(name) may end a selector',
    );
    expect(message('css', 'a::attr()')).toBe('invalid CSS selector: ::attr() needs an attribute name');
  });
});

describe('compileQuery for xpath', () => {
  test('accepts XPath 3.1 expressions', () => {
    for (const query of [
      '//div',
      'count(//li)',
      '//a/@href',
      'let $x := 1 return $x + 1',
      '//li ! string(.)',
    ]) {
      expect(compileQuery('xpath', query)).toEqual({ ok: true });
    }
  });

  test('accepts expressions that fail only on some pages', () => {
    expect(compileQuery('xpath', 'exactly-one(//title)')).toEqual({ ok: true });
  });

  test('rejects syntax errors with the error code and position', () => {
    expect(message('xpath', '//div[')).toBe(
      'invalid XPath: XPST0003: Failed to parse script. Expected end of input at line 1, column 6',
    );
  });

  test('rejects an expression that cannot finish even on an empty page, evaluating it once', () => {
    const started = performance.now();
    expect(message('xpath', 'count((1 to 100000000000) ! (. * 2))')).toBe(
      'too expensive to compile (took longer than 1000 ms)',
    );
    expect(performance.now() - started).toBeLessThan(1800);
  });

  test('rejects counting through a huge sequence', () => {
    expect(compileQuery('xpath', 'count((1 to 100000000)[. mod 7 = 0])', { timeLimitMs: 100 })).toEqual({
      ok: false,
      message: 'too expensive to compile (took longer than 100 ms)',
    });
  });

  test('takes its time limit from the options', () => {
    const started = performance.now();
    expect(compileQuery('xpath', 'count((1 to 100000000000) ! (. * 2))', { timeLimitMs: 100 })).toEqual({
      ok: false,
      message: 'too expensive to compile (took longer than 100 ms)',
    });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test('rejects unknown functions and variables', () => {
    expect(message('xpath', 'nosuch(1)')).toMatch(
      /^invalid XPath: XPST0017: Function .*nosuch with arity of 1/,
    );
    expect(message('xpath', '$x')).toBe('invalid XPath: XPST0008: The variable x is not in scope.');
  });
});

describe('compileQuery for regex', () => {
  test('accepts bare and /body/flags patterns', () => {
    for (const query of ['a(b)c', '/a/i', '/a/imsu', '/(?<=x)y/', '(a)\\1']) {
      expect(compileQuery('regex', query)).toEqual({ ok: true });
    }
  });

  test('rejects invalid patterns, repeated flags and empty patterns', () => {
    expect(message('regex', '(a')).toBe('invalid regex: Unterminated group');
    expect(message('regex', '/a/ii')).toBe('invalid regex: repeated flag in "ii"');
    expect(message('regex', '//i')).toBe('invalid regex: the pattern is empty');
    expect(message('regex', '/\\p{Nope}/u')).toBe('invalid regex: Invalid property name');
  });

  test('rejects a pattern whose group count backtracks past the time limit', () => {
    const started = performance.now();
    expect(compileQuery('regex', '(?:(|)\\1){40}x', { timeLimitMs: 100 })).toEqual({
      ok: false,
      message: 'too expensive to compile (took longer than 100 ms)',
    });
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('compileQuery options', () => {
  test('a css selector compiles within the limit too', () => {
    expect(compileQuery('css', 'x div div div div div div', { timeLimitMs: 100 })).toEqual({ ok: true });
  });

  test('a time limit that is not a positive integer is a RangeError', () => {
    expect(() => compileQuery('css', 'a', { timeLimitMs: 0 })).toThrow(RangeError);
    expect(() => compileQuery('css', 'a', { timeLimitMs: 1.5 })).toThrow(RangeError);
  });

  test('tooExpensiveToCompile gives the answer of a query stopped by its caller', () => {
    expect(tooExpensiveToCompile(DEFAULT_COMPILE_TIME_LIMIT_MS)).toEqual({
      ok: false,
      message: 'too expensive to compile (took longer than 1000 ms)',
    });
  });
});

describe('compileJob', () => {
  test('throws ExtractionError naming the query that does not compile', () => {
    expect(() => compileJob([{ name: 'bad', type: 'xpath', query: '//a[' }])).toThrow(ExtractionError);
    expect(() => compileJob([{ name: 'bad', type: 'xpath', query: '//a[' }])).toThrow(
      /^query "bad": invalid XPath: XPST0003/,
    );
  });

  test('names a query that is too expensive to compile within the page time limit, and never allows it less than 1 s', () => {
    const slow = [{ name: 'slow', type: 'xpath' as const, query: 'count((1 to 100000000000) ! 1)' }];
    expect(() => compileJob(slow, { timeLimitMs: 1500 })).toThrow(
      'query "slow": too expensive to compile (took longer than 1500 ms)',
    );
    expect(() => compileJob(slow, { timeLimitMs: 100 })).toThrow(
      'query "slow": too expensive to compile (took longer than 1000 ms)',
    );
  });

  test('limits that are not positive integers are a RangeError', () => {
    const queries = [{ name: 'a', type: 'css' as const, query: 'a' }];
    expect(() => compileJob(queries, { maxRecords: 0 })).toThrow(RangeError);
    expect(() => compileJob(queries, { timeLimitMs: Number.NaN })).toThrow(RangeError);
    expect(() => compileJob(queries, { maxTotalBytes: -1 })).toThrow(
      'maxTotalBytes must be a positive integer, got -1',
    );
  });

  test('rejects a repeated query name', () => {
    expect(() =>
      compileJob([
        { name: 'a', type: 'css', query: 'a' },
        { name: 'a', type: 'css', query: 'b' },
      ]),
    ).toThrow('query name "a" is used twice');
  });

  test('ExtractionError carries the stable code and name', () => {
    const error = new ExtractionError('x');
    expect(error.code).toBe('EXTRACTION_ERROR');
    expect(error.name).toBe('ExtractionError');
    expect(error.limit).toBeUndefined();
    expect(new ExtractionError('y', { limit: 'records' }).limit).toBe('records');
    expect(error).toBeInstanceOf(Error);
  });
});
