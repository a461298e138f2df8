import { describe, expect, test } from '@jest/globals';
import { compileUrlPattern, LinkFilter } from '../index.ts';

describe('compileUrlPattern', () => {
  test('compiles JavaScript RegExp syntax without flags', () => {
    const compiled = compileUrlPattern('/jobs/\\d+$');
    expect(compiled.ok && compiled.regex.source).toBe('\\/jobs\\/\\d+$');
    expect(compiled.ok && compiled.regex.flags).toBe('');
  });

  test('explains an invalid pattern in a short message', () => {
    expect(compileUrlPattern('/jobs/(')).toEqual({
      ok: false,
      message: 'invalid regular expression: Unterminated group',
    });
    expect(compileUrlPattern('*x')).toEqual({
      ok: false,
      message: 'invalid regular expression: Nothing to repeat',
    });
  });

  test('refuses patterns longer than 500 characters', () => {
    expect(compileUrlPattern('a'.repeat(500)).ok).toBe(true);
    expect(compileUrlPattern('a'.repeat(501))).toEqual({
      ok: false,
      message: 'pattern longer than 500 characters',
    });
  });
});

describe('LinkFilter', () => {
  const open = { seedOrigins: ['https://example.com'], sameOrigin: false, include: [], exclude: [] };

  test('same origin keeps only the seed origins, port and scheme included', () => {
    const filter = new LinkFilter({ ...open, sameOrigin: true });
    expect(filter.accepts('https://example.com/a')).toBe(true);
    expect(filter.accepts('https://example.com:443/a')).toBe(true);
    expect(filter.accepts('http://example.com/a')).toBe(false);
    expect(filter.accepts('https://example.com:8443/a')).toBe(false);
    expect(filter.accepts('https://www.example.com/a')).toBe(false);
    expect(filter.accepts('https://example.com.evil.test/a')).toBe(false);
    expect(filter.accepts('not a url')).toBe(false);
  });

  test('same origin accepts any of several seed origins', () => {
    const filter = new LinkFilter({
      ...open,
      sameOrigin: true,
      seedOrigins: ['https://a.example', 'http://b.example:8080', 'https://C.example/some/seed?x=1'],
    });
    expect(filter.accepts('https://a.example/x')).toBe(true);
    expect(filter.accepts('http://b.example:8080/y')).toBe(true);
    expect(filter.accepts('http://b.example/y')).toBe(false);
    expect(filter.accepts('https://c.example/z')).toBe(true);
    expect(filter.accepts('https://d.example/')).toBe(false);
  });

  test('without same origin any host passes', () => {
    expect(new LinkFilter(open).accepts('https://elsewhere.test/')).toBe(true);
  });

  test('a link must match one include pattern when there are any', () => {
    const filter = new LinkFilter({ ...open, include: ['/jobs/', '/careers/'] });
    expect(filter.accepts('https://example.com/jobs/1')).toBe(true);
    expect(filter.accepts('https://example.com/en/careers/2')).toBe(true);
    expect(filter.accepts('https://example.com/about')).toBe(false);
  });

  test('a link matching any exclude pattern is dropped, even when included', () => {
    const filter = new LinkFilter({ ...open, include: ['/jobs/'], exclude: ['\\?sort=', '\\.pdf$'] });
    expect(filter.accepts('https://example.com/jobs/1')).toBe(true);
    expect(filter.accepts('https://example.com/jobs/?sort=date')).toBe(false);
    expect(filter.accepts('https://example.com/jobs/1.pdf')).toBe(false);
  });

  test('patterns are unanchored', () => {
    const filter = new LinkFilter({ ...open, include: ['example'] });
    expect(filter.accepts('https://example.com/')).toBe(true);
  });

  test('throws on a pattern that does not compile', () => {
    expect(() => new LinkFilter({ ...open, exclude: ['('] })).toThrow(
      'exclude pattern "(": invalid regular expression: Unterminated group',
    );
  });
});
