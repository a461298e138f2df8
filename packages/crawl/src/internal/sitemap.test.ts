import { gzipSync } from 'node:zlib';
import { describe, expect, test } from '@jest/globals';
import { readSitemap, SitemapError } from '../index.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"';

function urlset(locs: string[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset ${NS}>${locs.map((l) => `<url><loc>${l}</loc></url>`).join('\n')}</urlset>`;
}

/** The SitemapError readSitemap throws for `body` (fails the test when it throws nothing or something else). */
function rejection(body: Uint8Array): SitemapError {
  try {
    readSitemap(body);
  } catch (error) {
    expect(error).toBeInstanceOf(SitemapError);
    return error as SitemapError;
  }
  throw new Error('readSitemap accepted the body');
}

describe('readSitemap XML', () => {
  test('reads the locs of a urlset', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
      <urlset ${NS}>
        <url><loc>https://example.com/a</loc><lastmod>2026-01-01</lastmod></url>
        <url>
          <loc>
            https://example.com/b?x=1&amp;y=2
          </loc>
          <priority>0.5</priority>
        </url>
      </urlset>`;
    expect(readSitemap(bytes(xml))).toEqual({
      kind: 'urlset',
      urls: ['https://example.com/a', 'https://example.com/b?x=1&y=2'],
    });
  });

  test('reads the locs of a sitemap index', () => {
    const xml = `<sitemapindex ${NS}><sitemap><loc>https://example.com/s1.xml.gz</loc></sitemap><sitemap><loc>https://example.com/s2.xml</loc><lastmod>2026-01-01</lastmod></sitemap></sitemapindex>`;
    expect(readSitemap(bytes(xml))).toEqual({
      kind: 'index',
      urls: ['https://example.com/s1.xml.gz', 'https://example.com/s2.xml'],
    });
  });

  test('handles prefixes, CDATA, entities and a byte order mark', () => {
    const xml = `\uFEFF<?xml version="1.0"?><!-- generated --><sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
      <sm:url><sm:loc><![CDATA[https://example.com/c?a=1&b=2]]></sm:loc><image:image><image:loc>https://example.com/img.png</image:loc></image:image></sm:url>
      <sm:url><sm:loc>https://example.com/caf&#233;?q=&lt;x&gt;</sm:loc></sm:url>
    </sm:urlset>`;
    expect(readSitemap(bytes(xml)).urls).toEqual([
      'https://example.com/c?a=1&b=2',
      'https://example.com/café?q=<x>',
    ]);
  });

  test('keeps only absolute http(s) locs', () => {
    const xml = urlset([
      '/relative',
      'ftp://example.com/f',
      'javascript:alert(1)',
      'HTTPS://Example.com/ok',
      '',
      'http://',
    ]);
    expect(readSitemap(bytes(xml)).urls).toEqual(['HTTPS://Example.com/ok']);
  });

  test('ignores locs outside url entries', () => {
    const xml = `<urlset><loc>https://example.com/stray</loc><url><loc>https://example.com/a</loc></url></urlset>`;
    expect(readSitemap(bytes(xml)).urls).toEqual(['https://example.com/a']);
  });

  test('an empty urlset is a sitemap without URLs', () => {
    expect(readSitemap(bytes(`<urlset ${NS}/>`))).toEqual({ kind: 'urlset', urls: [] });
  });

  test('returns at most 50,000 URLs', () => {
    const locs = Array.from({ length: 60_000 }, (_, i) => `https://example.com/p/${i}`);
    const { urls } = readSitemap(bytes(urlset(locs)));
    expect(urls).toHaveLength(50_000);
    expect(urls[49_999]).toBe('https://example.com/p/49999');
  });

  test('truncated XML gives the URLs before the cut, not a shortened one', () => {
    const xml = urlset(['https://example.com/a', 'https://example.com/b', 'https://example.com/ccccc']);
    const cut = xml.indexOf('ccccc') + 2;
    expect(readSitemap(bytes(xml.slice(0, cut))).urls).toEqual([
      'https://example.com/a',
      'https://example.com/b',
    ]);
  });

  test('broken XML throws nothing but SitemapError', () => {
    const samples = [
      '<urlset><url><loc>https://example.com/a</url></loc><<<>>></urlset>',
      '<urlset><url><loc>https://example.com/a</loc></url></sitemapindex>',
      '<urlset><url><loc>https://example.com/a</loc></url><url><loc><![CDATA[https://x',
      '<',
      '<!-- only a comment -->',
      '<?xml version="1.0"?>',
      '<urlset xmlns:a:b:c="x"><a:b:url><a:b:loc>https://example.com/z</a:b:loc></a:b:url></urlset>',
      '<constructor><url><loc>https://example.com/a</loc></url></constructor>',
      `<urlset>${'<url>'.repeat(100_000)}`,
    ];
    for (const xml of samples) {
      try {
        const sitemap = readSitemap(bytes(xml));
        expect(sitemap.urls.every((u) => u.startsWith('https://example.com/'))).toBe(true);
      } catch (error) {
        expect(error).toBeInstanceOf(SitemapError);
      }
    }
  });
});

describe('readSitemap gzip', () => {
  test('reads a gzipped urlset', () => {
    const body = gzipSync(urlset(['https://example.com/a', 'https://example.com/b']));
    expect(readSitemap(body)).toEqual({
      kind: 'urlset',
      urls: ['https://example.com/a', 'https://example.com/b'],
    });
  });

  test('a gzip bomb stops at 50 MiB uncompressed', () => {
    const bomb = gzipSync(Buffer.alloc(60 * 1024 * 1024, ' '), { level: 9 });
    expect(bomb.length).toBeLessThan(200 * 1024);
    expect(rejection(bomb).message).toBe('sitemap larger than 50 MiB uncompressed');
  });

  test('a truncated gzip gives the URLs before the cut', () => {
    const locs = Array.from({ length: 2000 }, (_, i) => `https://example.com/p/${i}`);
    const body = gzipSync(urlset(locs));
    const urls = readSitemap(body.subarray(0, Math.floor(body.length / 2))).urls;
    expect(urls.length).toBeGreaterThan(10);
    expect(urls.length).toBeLessThan(2000);
    expect(urls).toEqual(locs.slice(0, urls.length));
  });

  test('corrupt gzip data is a SitemapError', () => {
    expect(rejection(Uint8Array.of(0x1f, 0x8b, 1, 2, 3, 4, 5, 6, 7, 8)).message).toBe(
      'not a sitemap: invalid gzip data',
    );
  });
});

describe('readSitemap text', () => {
  test('one http(s) URL per line is a urlset', () => {
    const text = '\uFEFFhttps://example.com/a\r\n\r\n  http://example.com/b?x=1  \nhttps://example.com/c';
    expect(readSitemap(bytes(text))).toEqual({
      kind: 'urlset',
      urls: ['https://example.com/a', 'http://example.com/b?x=1', 'https://example.com/c'],
    });
  });

  test('a text sitemap gives at most 50,000 URLs', () => {
    const text = Array.from({ length: 60_000 }, (_, i) => `https://example.com/${i}`).join('\n');
    expect(readSitemap(bytes(text)).urls).toHaveLength(50_000);
  });

  test('a line that is not an http(s) URL rejects the file', () => {
    expect(rejection(bytes('https://example.com/a\nhello world\n')).message).toBe(
      'not a sitemap: neither XML nor one http(s) URL per line',
    );
    expect(rejection(bytes('https://example.com/a\n/relative\n')).message).toMatch(/^not a sitemap: /);
  });
});

describe('readSitemap rejects what is not a sitemap', () => {
  test('an HTML page', () => {
    const html =
      '<!DOCTYPE html>\n<html><head><title>Jobs</title></head><body><a href="https://example.com/a">a</a></body></html>';
    expect(rejection(bytes(html)).message).toBe('not a sitemap: root element <html>');
  });

  test('JSON', () => {
    expect(rejection(bytes('{"urls": ["https://example.com/a"]}')).message).toMatch(/^not a sitemap: /);
    expect(rejection(bytes('["https://example.com/a"]')).message).toMatch(/^not a sitemap: /);
  });

  test('another XML document', () => {
    expect(rejection(bytes('<rss version="2.0"><channel></channel></rss>')).message).toBe(
      'not a sitemap: root element <rss>',
    );
  });

  test('elements nested deeper than 32 levels', () => {
    expect(rejection(bytes(`<urlset>${'<url>'.repeat(1_000_000)}`)).message).toBe(
      'not a sitemap: elements nested deeper than 32',
    );
  });

  test('an empty or blank body', () => {
    expect(rejection(new Uint8Array(0)).message).toBe('not a sitemap: empty');
    expect(rejection(bytes(' \n\t ')).message).toBe('not a sitemap: empty');
  });

  test('binary data', () => {
    const binary = Uint8Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256);
    expect(rejection(binary).message).toMatch(/^not a sitemap: /);
    expect(rejection(Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)).message).toMatch(
      /^not a sitemap: /,
    );
  });

  test('a body over 50 MiB', () => {
    const big = new Uint8Array(50 * 1024 * 1024 + 1).fill(0x20);
    expect(rejection(big).message).toBe('sitemap larger than 50 MiB');
  });
});
