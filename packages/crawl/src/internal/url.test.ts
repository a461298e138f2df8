import { describe, expect, test } from '@jest/globals';
import { normalizeUrl, originOf, urlKey } from '../index.ts';

describe('normalizeUrl', () => {
  test('removes the fragment and keeps the query as it is', () => {
    expect(normalizeUrl('https://example.com/a?b=1&a=2#top')).toBe('https://example.com/a?b=1&a=2');
    expect(normalizeUrl('https://example.com/a#')).toBe('https://example.com/a');
    expect(normalizeUrl('https://example.com/a?q=A%2fb+c')).toBe('https://example.com/a?q=A%2fb+c');
  });

  test('lower-cases scheme and host but not the path', () => {
    expect(normalizeUrl('HTTPS://Example.COM/Path/X')).toBe('https://example.com/Path/X');
  });

  test('removes the default ports 80 and 443 and keeps the others', () => {
    expect(normalizeUrl('http://example.com:80/a')).toBe('http://example.com/a');
    expect(normalizeUrl('https://example.com:443/a')).toBe('https://example.com/a');
    expect(normalizeUrl('https://example.com:80/a')).toBe('https://example.com:80/a');
    expect(normalizeUrl('http://example.com:8080/a')).toBe('http://example.com:8080/a');
  });

  test('gives an empty path as /', () => {
    expect(normalizeUrl('https://example.com')).toBe('https://example.com/');
    expect(normalizeUrl('https://example.com?x=1')).toBe('https://example.com/?x=1');
  });

  test('resolves relative links against the base', () => {
    const base = 'https://example.com/jobs/list/page.html?p=1#f';
    expect(normalizeUrl('../detail/7', base)).toBe('https://example.com/jobs/detail/7');
    expect(normalizeUrl('?p=2', base)).toBe('https://example.com/jobs/list/page.html?p=2');
    expect(normalizeUrl('next.html', base)).toBe('https://example.com/jobs/list/next.html');
    expect(normalizeUrl('/root', base)).toBe('https://example.com/root');
    expect(normalizeUrl('#section', base)).toBe('https://example.com/jobs/list/page.html?p=1');
    expect(normalizeUrl('', base)).toBe('https://example.com/jobs/list/page.html?p=1');
  });

  test('resolves protocol-relative links with the scheme of the base', () => {
    expect(normalizeUrl('//other.example/x', 'https://example.com/a')).toBe('https://other.example/x');
    expect(normalizeUrl('//other.example/x', 'http://example.com/a')).toBe('http://other.example/x');
  });

  test('rejects schemes other than http and https', () => {
    const base = 'https://example.com/';
    expect(normalizeUrl('javascript:alert(1)', base)).toBeNull();
    expect(normalizeUrl(' JavaScript:void(0)', base)).toBeNull();
    expect(normalizeUrl('mailto:jobs@example.com', base)).toBeNull();
    expect(normalizeUrl('data:text/html,<p>x</p>', base)).toBeNull();
    expect(normalizeUrl('ftp://example.com/file', base)).toBeNull();
    expect(normalizeUrl('tel:+331234', base)).toBeNull();
    expect(normalizeUrl('x', 'file:///etc/passwd')).toBeNull();
  });

  test('rejects what does not parse', () => {
    expect(normalizeUrl('http://exa mple.com/')).toBeNull();
    expect(normalizeUrl('/relative/without/base')).toBeNull();
    expect(normalizeUrl('https://[::1/')).toBeNull();
    expect(normalizeUrl('a', 'not a base')).toBeNull();
    expect(normalizeUrl('')).toBeNull();
  });

  test('rejects results longer than 2048 characters', () => {
    const prefix = 'https://example.com/';
    expect(normalizeUrl(prefix + 'a'.repeat(2048 - prefix.length))).toHaveLength(2048);
    expect(normalizeUrl(prefix + 'a'.repeat(2049 - prefix.length))).toBeNull();
    // Encoding makes it longer than the raw text.
    expect(normalizeUrl(`${prefix}${'"'.repeat(700)}x`)).toBeNull();
    // The fragment does not count.
    expect(normalizeUrl(`${prefix}a#${'f'.repeat(5000)}`)).toBe(`${prefix}a`);
  });

  test('trims ASCII white space around the link', () => {
    expect(normalizeUrl(' \t\n https://example.com/a \r\n\f', undefined)).toBe('https://example.com/a');
    expect(normalizeUrl('\n  ../b  \n', 'https://example.com/x/y')).toBe('https://example.com/b');
  });
});

describe('originOf', () => {
  test('gives scheme, host and a non-default port', () => {
    expect(originOf('https://Example.com:443/a?b#c')).toBe('https://example.com');
    expect(originOf('http://example.com:8080/a')).toBe('http://example.com:8080');
  });
});

describe('urlKey', () => {
  test('is the first 16 bytes of SHA-256 of "kind url"', () => {
    const key = urlKey('page', 'https://example.com/');
    expect(key).toHaveLength(16);
    // sha256("page https://example.com/") computed independently with sha256sum.
    expect(key.toString('hex')).toBe(EXPECTED_PAGE_KEY);
  });

  test('differs by kind', () => {
    expect(urlKey('sitemap', 'https://example.com/').equals(urlKey('page', 'https://example.com/'))).toBe(
      false,
    );
  });
});

const EXPECTED_PAGE_KEY = '45a7c6a2617c38a6a967884987b2a4a0';
