import { describe, expect, test } from '@jest/globals';
import { type ContentOptions, DOCUMENT_LIMITS, type DocumentFormat } from '../document.ts';
import { checkSelector, htmlDocument } from './index.ts';

const PAGE = {
  sourceUrl: 'https://example.com/',
  url: 'https://example.com/page',
  statusCode: 200,
  contentType: 'text/html',
};
const ALL: DocumentFormat[] = ['markdown', 'html', 'raw_html', 'links', 'metadata'];

function convert(html: string, options: Partial<ContentOptions> = {}) {
  return htmlDocument(html, PAGE, {
    formats: ALL,
    onlyMainContent: true,
    includeTags: [],
    excludeTags: [],
    ...options,
  });
}

/** CPU time of this process for `fn`, in ms: other processes on the machine do not count. */
function cpuMs(fn: () => void): number {
  const started = process.cpuUsage();
  fn();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

describe('htmlDocument: formats', () => {
  test('holds only the formats asked for', () => {
    const html = '<title>t</title><p>text <a href="/a">a</a></p>';
    expect(convert(html, { formats: [] })).toEqual({ truncated: [] });
    expect(Object.keys(convert(html, { formats: ['links'] })).sort()).toEqual(['links', 'truncated']);
    expect(Object.keys(convert(html, { formats: ['metadata', 'html'] })).sort()).toEqual([
      'html',
      'metadata',
      'truncated',
    ]);
  });

  test('raw_html is the input as is', () => {
    const html = '<p onclick="x()">raw <script>1</script></p><!-- kept -->';
    expect(convert(html, { formats: ['raw_html'] })).toEqual({ raw_html: html, truncated: [] });
  });
});

describe('htmlDocument: limits', () => {
  test('markdown over 5 MiB is cut there, on a character boundary, and named in truncated', () => {
    // 3-byte characters: 5 MiB is not a whole number of them.
    const text = '€'.repeat(1_800_000);
    const document = convert(`<p>${text}</p>`, { formats: ['markdown'], onlyMainContent: false });
    const bytes = Buffer.byteLength(document.markdown!);
    expect(bytes).toBeLessThanOrEqual(DOCUMENT_LIMITS.markdownBytes);
    expect(bytes).toBeGreaterThan(DOCUMENT_LIMITS.markdownBytes - 3);
    expect(text.startsWith(document.markdown!)).toBe(true);
    expect(document.truncated).toEqual(['markdown']);
  });

  test('html over 5 MiB is cut without splitting a surrogate pair', () => {
    const text = '😀'.repeat(1_400_000);
    const document = convert(`<p>${text}</p>`, { formats: ['html'], onlyMainContent: false });
    expect(Buffer.byteLength(document.html!)).toBeLessThanOrEqual(DOCUMENT_LIMITS.htmlBytes);
    expect(document.html!.endsWith('\ud83d')).toBe(false);
    expect(document.truncated).toEqual(['html']);
  });

  test('raw_html over 10 MiB is cut there', () => {
    const html = `<p>${'a'.repeat(11 * 1024 * 1024)}</p>`;
    const document = convert(html, { formats: ['raw_html', 'links'] });
    expect(document.raw_html).toHaveLength(DOCUMENT_LIMITS.rawHtmlBytes);
    expect(document.truncated).toEqual(['raw_html']);
  });

  test('every cut value is named, in the order of the fields', () => {
    const links = Array.from({ length: 10_001 }, (_, i) => `<a href="/${i}">${'é'.repeat(300)}</a>`).join('');
    const document = convert(`<div>${links}</div>`, { onlyMainContent: false });
    expect(document.truncated).toEqual(['markdown', 'html', 'links']);
  });
});

describe('htmlDocument: hostile pages', () => {
  test('a page nested 100,000 deep converts in time, with its text', () => {
    const n = 100_000;
    const html = `<body>${'<div><span>'.repeat(n)}deep text${'</span></div>'.repeat(n)}<p>after it</p></body>`;
    let document: ReturnType<typeof convert> | undefined;
    // Against a flat page of as many elements: a walk quadratic in the depth would be thousands of times it.
    const flat = cpuMs(() =>
      convert(`<body>${'<div></div><span></span>'.repeat(n)}deep text<p>after it</p></body>`),
    );
    expect(cpuMs(() => (document = convert(html)))).toBeLessThan(20 * Math.max(flat, 10));
    expect(document!.markdown).toContain('deep text');
    expect(document!.markdown).toContain('after it');
    expect(document!.html).toContain('deep text');
  });

  test('deeply nested lists and quotes are written flat past a depth', () => {
    const n = 5_000;
    const lists = convert(`${'<ul><li>'.repeat(n)}x`, { onlyMainContent: false }).markdown!;
    expect(lists.trimStart()).toMatch(/^- /);
    expect(lists.split('\n').every((line) => line.length < 100)).toBe(true);
    const quotes = convert(`${'<blockquote>'.repeat(n)}y`, { onlyMainContent: false }).markdown!;
    expect(quotes.split('\n').every((line) => line.length < 100)).toBe(true);
    expect(quotes).toContain('y');
  });

  test('unclosed tags, stray end tags and broken attributes do not throw', () => {
    const document = convert('<div><p><b>bold <i>both</p></div></b></i><a href="/x>link<img src=">');
    expect(document.markdown).toContain('bold');
  });

  test('a page without body, head or html is converted', () => {
    expect(convert('<p>just a paragraph, not much else</p>').markdown).toBe(
      'just a paragraph, not much else',
    );
    expect(convert('plain text').markdown).toBe('plain text');
    expect(convert('<html><head><title>only a head</title></head></html>').markdown).toBe('');
  });

  test('an empty page gives empty values', () => {
    const document = convert('');
    expect(document).toMatchObject({ markdown: '', html: '', raw_html: '', links: [], truncated: [] });
    expect(document.metadata!.title).toBeNull();
  });

  test('a page that is only a navigation bar gives its links', () => {
    const document = convert('<nav><ul><li><a href="/a">A</a></li><li><a href="/b">B</a></li></ul></nav>');
    expect(document.markdown).toBe('- [A](https://example.com/a)\n- [B](https://example.com/b)');
    expect(document.links).toEqual(['https://example.com/a', 'https://example.com/b']);
  });

  test('100,000 links, huge attributes and long runs of special characters stay linear', () => {
    const links = Array.from({ length: 100_000 }, (_, i) => `<a href="/l/${i}">l${i}</a>`).join(' ');
    const huge = 'x'.repeat(2_000_000);
    const specials = `${'_'.repeat(100_000)}${'*'.repeat(100_000)}${'&'.repeat(100_000)}${' \n'.repeat(100_000)}`;
    const html =
      `<div class="${huge}" style="${huge}"><p><a href="/${huge}">big</a> words, and more of them, in a sentence.</p>` +
      `<img srcset="a${','.repeat(100_000)}b,"></div>` +
      `<p>${specials}</p><pre>${'`'.repeat(100_000)}</pre><p>${links}</p>`;
    let document: ReturnType<typeof convert> | undefined;
    expect(cpuMs(() => (document = convert(html, { onlyMainContent: true })))).toBeLessThan(5_000);
    expect(document!.links).toHaveLength(10_000);
    expect(document!.truncated).toContain('links');
    expect(document!.markdown).toContain('big');
  });
});

describe('checkSelector', () => {
  test('is null for selectors css-select runs', () => {
    for (const selector of [
      'div',
      '.a > p:first-child',
      'article, main',
      '[data-x="1"] ~ span',
      'div:has(> p)',
      'a:not(.b)',
    ]) {
      expect(checkSelector(selector)).toBeNull();
    }
  });

  test('says what is wrong with the others', () => {
    expect(checkSelector('')).toBe('the selector is empty');
    expect(checkSelector('  ')).toBe('the selector is empty');
    expect(checkSelector('div >')).toBe('the selector ends with a combinator or comma');
    expect(checkSelector('a,')).toBe('the selector ends with a combinator or comma');
    expect(checkSelector('p::before')).toBe('pseudo-elements (::name) are not supported');
    expect(checkSelector(':nope')).toMatch(/nope/);
    expect(checkSelector('a[')).toMatch(/end of selector|Expected/);
  });
});
