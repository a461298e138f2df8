import { describe, expect, test } from '@jest/globals';
import { countGlob, expandGlob } from '../index.ts';

function urls(source: string, max = 1000): string[] {
  const result = expandGlob(source, max);
  if (!result.ok) throw new Error(result.message);
  return result.urls;
}

function failure(source: string, max = 1000): string {
  const result = expandGlob(source, max);
  if (result.ok) throw new Error(`expected ${source} to fail`);
  return result.message;
}

describe('expandGlob', () => {
  test('a source without globs is itself', () => {
    expect(urls('https://example.com/a?b=1')).toEqual(['https://example.com/a?b=1']);
  });

  test('numeric ranges include both ends', () => {
    expect(urls('http://x/p/[1-3]')).toEqual(['http://x/p/1', 'http://x/p/2', 'http://x/p/3']);
    expect(urls('http://x/p/[8-11].html')).toEqual([
      'http://x/p/8.html',
      'http://x/p/9.html',
      'http://x/p/10.html',
      'http://x/p/11.html',
    ]);
  });

  test('a leading zero pads every value to the width of the first number', () => {
    expect(urls('http://x/[001-003]')).toEqual(['http://x/001', 'http://x/002', 'http://x/003']);
    expect(urls('http://x/[098-100]')).toEqual(['http://x/098', 'http://x/099', 'http://x/100']);
    expect(urls('http://x/[09-10]')).toEqual(['http://x/09', 'http://x/10']);
  });

  test('letter ranges, lower and upper case', () => {
    expect(urls('http://x/[a-d]')).toEqual(['http://x/a', 'http://x/b', 'http://x/c', 'http://x/d']);
    expect(urls('http://x/[X-Z]')).toEqual(['http://x/X', 'http://x/Y', 'http://x/Z']);
  });

  test('steps for numbers and letters', () => {
    expect(urls('http://x/?o=[0-100:25]')).toEqual([
      'http://x/?o=0',
      'http://x/?o=25',
      'http://x/?o=50',
      'http://x/?o=75',
      'http://x/?o=100',
    ]);
    expect(urls('http://x/[0-10:4]')).toEqual(['http://x/0', 'http://x/4', 'http://x/8']);
    expect(urls('http://x/[a-e:2]')).toEqual(['http://x/a', 'http://x/c', 'http://x/e']);
  });

  test('lists, including empty items and escaped commas', () => {
    expect(urls('http://{www,api}.x.com/')).toEqual(['http://www.x.com/', 'http://api.x.com/']);
    expect(urls('http://x/{a,,b}')).toEqual(['http://x/a', 'http://x/', 'http://x/b']);
    expect(urls('http://x/{a\\,b,c}')).toEqual(['http://x/a,b', 'http://x/c']);
  });

  test('several globs multiply, the rightmost varying fastest', () => {
    expect(urls('http://{a,b}.x/[1-2]/[y-z]')).toEqual([
      'http://a.x/1/y',
      'http://a.x/1/z',
      'http://a.x/2/y',
      'http://a.x/2/z',
      'http://b.x/1/y',
      'http://b.x/1/z',
      'http://b.x/2/y',
      'http://b.x/2/z',
    ]);
  });

  test('escaped brackets and braces are literal', () => {
    expect(urls('http://x/q?a\\[\\]=\\{1\\}')).toEqual(['http://x/q?a[]={1}']);
  });

  test('an IPv6 host literal is not a glob', () => {
    expect(urls('http://[::1]:8080/p[1-2]')).toEqual(['http://[::1]:8080/p1', 'http://[::1]:8080/p2']);
    expect(urls('http://[fe80::1%25eth0]/')).toEqual(['http://[fe80::1%25eth0]/']);
  });

  test('exactly max URLs is allowed, one more fails', () => {
    expect(urls('http://x/[1-1000]', 1000)).toHaveLength(1000);
    expect(failure('http://x/[1-1001]', 1000)).toBe('expands to 1001 URLs, more than the limit of 1000');
    expect(failure('http://x/[1-100]/[1-100]', 1000)).toBe(
      'expands to 10000 URLs, more than the limit of 1000',
    );
  });

  test('a huge glob fails fast without being materialised', () => {
    const started = performance.now();
    expect(failure('http://x/[1-999999]/[1-999999]', 1000)).toBe(
      'expands to 999998000001 URLs, more than the limit of 1000',
    );
    expect(failure('http://x/[1-999999999]/[1-999999999]', 1000)).toBe(
      'expands to more than 9007199254740991 URLs, more than the limit of 1000',
    );
    expect(performance.now() - started).toBeLessThan(100);
  });

  test.each([
    ['http://x/[1-3', "malformed glob: unmatched '[' at position 10"],
    ['http://x/{a,b', "malformed glob: unmatched '{' at position 10"],
    ['http://x/a]', "malformed glob: unmatched ']' at position 11"],
    ['http://x/a}', "malformed glob: unmatched '}' at position 11"],
    ['http://x/{a,{b}}', "malformed glob: nested '{' at position 13 (globs cannot nest)"],
    ['http://x/[5-1]', 'malformed glob: range [5-1] at position 10 goes backwards'],
    ['http://x/[1-5:0]', 'malformed glob: range [1-5:0] at position 10 has a step below 1'],
    ['http://x/[a-Z]', 'malformed glob: range [a-Z] at position 10 mixes upper and lower case'],
    [
      'http://x/[1-z]',
      'malformed glob: bad range [1-z] at position 10: expected [1-10], [001-100], [a-z] or [0-100:10]',
    ],
    [
      'http://x/[]',
      'malformed glob: bad range [] at position 10: expected [1-10], [001-100], [a-z] or [0-100:10]',
    ],
    [
      'http://x/[1-99999999999999999]',
      'malformed glob: range [1-99999999999999999] at position 10 has too large a number',
    ],
  ])('%s is malformed', (source, expected) => {
    expect(failure(source)).toBe(expected);
    expect(countGlob(source)).toEqual({ error: expected });
  });
});

describe('countGlob', () => {
  test('counts without expanding', () => {
    expect(countGlob('http://x/')).toBe(1);
    expect(countGlob('http://x/[1-10]')).toBe(10);
    expect(countGlob('http://x/[0-100:10]/{a,b,c}/[a-z]')).toBe(11 * 3 * 26);
    expect(countGlob('http://x/[1-1000000]/[1-1000000]')).toBe(1e12);
  });
});
