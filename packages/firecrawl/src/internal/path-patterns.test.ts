import { depthGuard, hostGuard, pathDepth, seedPathGuard, translatePathPattern } from './path-patterns.ts';

const translate = (pattern: string): RegExp => {
  const out = translatePathPattern(pattern);
  if (!out.ok) throw new Error(out.message);
  return new RegExp(out.pattern);
};

const URLS = [
  'https://example.com/',
  'https://example.com/blog',
  'https://example.com/blog/',
  'https://example.com/blog/post-1',
  'https://example.com/blog/post-1?page=2',
  'https://example.com/en/blog/post',
  'https://example.com/about?next=/blog/x',
  'https://example.com/about#blog',
  'https://blog.example.com/',
  'https://blog.example.com/news',
  'http://example.com:8080/docs/api/v2/index.html',
  'https://example.com/files/report.pdf',
  'https://example.com/files/report.pdf?download=1',
  'https://example.com/files/report.pdfx',
  'https://example.com/a/b/c/d',
  'https://user:pw@example.com/private/x',
  'https://example.com/fr/',
  'https://example.com/search?q=a.b',
];

describe('translatePathPattern', () => {
  it.each([
    '^/blog/.*',
    '^/blog',
    'blog',
    '/blog/',
    '\\.pdf$',
    '^/(en|fr)/',
    '^/en/|^/fr/',
    '^/blog$',
    '^/[^/]+$',
    '^/a/.*/d$',
    'post-\\d+',
    '^/docs/api/v\\d+/',
    '^/private',
    '\\S+\\.pdf',
    '^$',
    '.*',
    'index\\.html$',
    'b.b',
  ])('matches a URL exactly when %s matches its path', (pattern) => {
    const onUrl = translate(pattern);
    const onPath = new RegExp(pattern);
    for (const url of URLS) expect([url, onUrl.test(url)]).toEqual([url, onPath.test(new URL(url).pathname)]);
  });

  it('writes an anchored path pattern as a prefix after the authority', () => {
    const out = translatePathPattern('^/blog/.*');
    expect(out).toEqual({ ok: true, pattern: '^https?://[^/?#]+/blog/[^?#]*' });
  });

  it('never matches an unanchored pattern in the host or the query', () => {
    const blog = translate('blog');
    expect(blog.test('https://blog.example.com/')).toBe(false);
    expect(blog.test('https://example.com/?q=blog')).toBe(false);
    expect(blog.test('https://example.com/my-blog')).toBe(true);
  });

  it('ends a pattern ending in $ at the end of the path, before the query', () => {
    const pdf = translate('\\.pdf$');
    expect(pdf.test('https://example.com/a.pdf?dl=1')).toBe(true);
    expect(pdf.test('https://example.com/a?f=x.pdf')).toBe(false);
  });

  it('accepts RE2 named groups, written (?P<name>…)', () => {
    const out = translatePathPattern('^/(?P<lang>en|fr)/');
    expect(out.ok).toBe(true);
    expect(translate('^/(?P<lang>en|fr)/').test('https://example.com/fr/x')).toBe(true);
  });

  it.each(['^/(?=blog)', '(?!x)', '(?<=a)b', '(?<!a)b', '(a)\\1', '(?<n>a)\\k<n>'])(
    'refuses %s: RE2, which Firecrawl runs, has no look-around or back-reference',
    (pattern) => {
      expect(translatePathPattern(pattern)).toEqual({
        ok: false,
        message: expect.stringContaining('look-around') as string,
      });
    },
  );

  it('refuses a pattern that does not compile, saying why', () => {
    expect(translatePathPattern('^/blog/(')).toEqual({
      ok: false,
      message: 'invalid regular expression: Unterminated group',
    });
  });

  it('refuses a pattern too long for a job once translated', () => {
    const out = translatePathPattern(`^/${'a'.repeat(490)}`);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.message).toMatch(/too long as a URL pattern \(\d+ characters, at most 500\)/);
  });
});

describe('seedPathGuard', () => {
  it('excludes every URL whose path does not start with the seed path', () => {
    const guard = new RegExp(seedPathGuard('https://example.com/blog')!);
    expect(guard.test('https://example.com/blog')).toBe(false);
    expect(guard.test('https://example.com/blog/post')).toBe(false);
    // Firecrawl compares the paths as strings, so this one is under /blog too.
    expect(guard.test('https://example.com/blog-archive')).toBe(false);
    expect(guard.test('https://example.com/about')).toBe(true);
    expect(guard.test('https://example.com/?p=/blog')).toBe(true);
    expect(guard.test('http://www.example.com/blog/x')).toBe(false);
  });

  it('gives no guard for a seed at the root', () => {
    expect(seedPathGuard('https://example.com/')).toBeNull();
    expect(seedPathGuard('https://example.com')).toBeNull();
  });

  it('escapes the seed path', () => {
    const guard = new RegExp(seedPathGuard('https://example.com/a.b+(c)')!);
    expect(guard.test('https://example.com/a.b+(c)/d')).toBe(false);
    expect(guard.test('https://example.com/axb+(c)/d')).toBe(true);
  });
});

describe('hostGuard', () => {
  it('keeps the seed host with or without www, any scheme and port', () => {
    const guard = new RegExp(hostGuard('https://www.example.com/docs', false));
    for (const url of [
      'https://www.example.com/x',
      'http://example.com/x',
      'https://example.com:8443/x',
      'https://example.com',
      'https://example.com?x=1',
    ])
      expect([url, guard.test(url)]).toEqual([url, false]);
    for (const url of [
      'https://blog.example.com/x',
      'https://example.com.evil.org/x',
      'https://notexample.com/x',
      'https://other.org/?u=example.com',
    ])
      expect([url, guard.test(url)]).toEqual([url, true]);
  });

  it('keeps subdomains too when asked', () => {
    const guard = new RegExp(hostGuard('https://example.com/', true));
    expect(guard.test('https://blog.example.com/x')).toBe(false);
    expect(guard.test('https://a.b.example.com/x')).toBe(false);
    expect(guard.test('https://example.com/x')).toBe(false);
    expect(guard.test('https://badexample.com/x')).toBe(true);
    expect(guard.test('https://example.com.evil.org/')).toBe(true);
  });
});

describe('depthGuard and pathDepth', () => {
  it('counts path segments as Firecrawl does', () => {
    expect(pathDepth('https://example.com/')).toBe(0);
    expect(pathDepth('https://example.com/a/b/')).toBe(2);
    expect(pathDepth('https://example.com/a/index.html')).toBe(1);
  });

  it('excludes URLs deeper than the depth', () => {
    const guard = new RegExp(depthGuard(2)!);
    expect(guard.test('https://example.com/a/b')).toBe(false);
    expect(guard.test('https://example.com/a/b/')).toBe(false);
    expect(guard.test('https://example.com/a/b?x=/c/d')).toBe(false);
    expect(guard.test('https://example.com/a/b/c')).toBe(true);
  });

  it('gives no guard for depths past any real URL', () => {
    expect(depthGuard(5000)).toBeNull();
  });
});
