import { describe, expect, test } from '@jest/globals';
import { canonicalPath, patternMatches } from './robots-path.ts';

describe('canonicalPath', () => {
  test('leaves unreserved and reserved characters alone', () => {
    expect(canonicalPath('/a-b_c.d~e/f:g@h!$&()*+,;=?x=[1]')).toBe('/a-b_c.d~e/f:g@h!$&()*+,;=?x=[1]');
  });

  test('decodes percent-encoded unreserved characters and upper-cases the rest', () => {
    expect(canonicalPath('/%41%7e%2f%3f%c3%a4')).toBe('/A~%2F%3F%C3%A4');
  });

  test('encodes non-ASCII as UTF-8 and unsafe ASCII as %XX', () => {
    expect(canonicalPath('/ä ツ😀"<>`{}^|\\\'')).toBe(
      '/%C3%A4%20%E3%83%84%F0%9F%98%80%22%3C%3E%60%7B%7D%5E%7C%5C%27',
    );
  });

  test('encodes a % that starts no escape, and a lone surrogate as U+FFFD', () => {
    expect(canonicalPath('/100%/%zz/%4')).toBe('/100%25/%25zz/%254');
    expect(canonicalPath('/\uD800x')).toBe('/%EF%BF%BDx');
  });
});

describe('patternMatches', () => {
  // A RegExp is fine as a reference here: the test controls the patterns.
  function reference(pattern: string, path: string): boolean {
    const anchored = pattern.endsWith('$');
    const body = (anchored ? pattern.slice(0, -1) : pattern)
      .split('*')
      .map((piece) => piece.replace(/[.$?()[\]\\^+{}|/]/g, '\\$&'))
      .join('.*');
    return new RegExp(`^${body}${anchored ? '$' : ''}`, 's').test(path);
  }

  test('agrees with a regular expression on 5,000 random small patterns and paths', () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const word = (alphabet: string, length: number) =>
      Array.from({ length }, () => alphabet[random(alphabet.length)]).join('');
    for (let i = 0; i < 5000; i++) {
      const pattern = `/${word('ab*', random(7))}${random(3) === 0 ? '$' : ''}`;
      const path = `/${word('ab$', random(9))}`;
      expect([pattern, path, patternMatches(pattern, path)]).toEqual([
        pattern,
        path,
        reference(pattern, path),
      ]);
    }
  });
});
