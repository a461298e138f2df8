import { describe, expect, test } from '@jest/globals';
import type { Metadata, PageInfo } from '../document.ts';
import { htmlDocument } from './index.ts';

const PAGE: PageInfo = {
  sourceUrl: 'http://example.com/old',
  url: 'https://example.com/blog/post',
  statusCode: 203,
  contentType: 'text/html; charset=utf-8',
};

function metadata(
  head: string,
  body = '',
  page: PageInfo = PAGE,
): { metadata: Metadata; truncated: string[] } {
  const html = `<!doctype html><html lang="fr"><head>${head}</head><body>${body}</body></html>`;
  const document = htmlDocument(html, page, {
    formats: ['metadata'],
    onlyMainContent: true,
    includeTags: [],
    excludeTags: [],
  });
  return { metadata: document.metadata!, truncated: document.truncated };
}

describe('metadata', () => {
  test('reads every field of the page and of PageInfo', () => {
    const head = `
      <title>  The
        Title </title>
      <meta name="description" content=" Desc ">
      <meta name="Keywords" content="a, b">
      <meta name="robots" content="noindex">
      <link rel="canonical" href="/blog/post?ref=canon">
      <link rel="shortcut icon" href="/fav.png">
      <meta property="og:title" content="OG title">
      <meta property="og:image" content="https://example.com/1.png">
      <meta property="og:image" content="https://example.com/2.png">
      <meta name="og:site_name" content="Site">
      <meta name="twitter:card" content="summary">
      <meta property="twitter:site" content="@site">
      <meta property="article:published_time" content="2024-05-01T10:00:00Z">
      <meta property="article:modified_time" content="2024-05-02T10:00:00Z">
      <script type="application/ld+json">{"@type":"Article","datePublished":"1999-01-01"}</script>`;
    expect(metadata(head).metadata).toEqual({
      title: 'The Title',
      description: 'Desc',
      language: 'fr',
      canonical_url: 'https://example.com/blog/post?ref=canon',
      keywords: 'a, b',
      robots: 'noindex',
      favicon: 'https://example.com/fav.png',
      og: { title: 'OG title', image: 'https://example.com/1.png', site_name: 'Site' },
      twitter: { card: 'summary', site: '@site' },
      published_time: '2024-05-01T10:00:00Z',
      modified_time: '2024-05-02T10:00:00Z',
      json_ld: [{ '@type': 'Article', datePublished: '1999-01-01' }],
      status_code: 203,
      content_type: 'text/html; charset=utf-8',
      source_url: 'http://example.com/old',
      url: 'https://example.com/blog/post',
    });
  });

  test('falls back to og:title and og:description, and /favicon.ico of the origin', () => {
    const { metadata: m } = metadata(
      '<meta property="og:title" content="OG"><meta property="og:description" content="OD">',
    );
    expect([m.title, m.description, m.favicon]).toEqual(['OG', 'OD', 'https://example.com/favicon.ico']);
  });

  test('an empty page has nulls, empty records and the PageInfo fields', () => {
    const document = htmlDocument('', PAGE, {
      formats: ['metadata'],
      onlyMainContent: true,
      includeTags: [],
      excludeTags: [],
    });
    expect(document.metadata).toMatchObject({
      title: null,
      description: null,
      language: null,
      canonical_url: null,
      keywords: null,
      robots: null,
      favicon: 'https://example.com/favicon.ico',
      og: {},
      twitter: {},
      published_time: null,
      modified_time: null,
      json_ld: [],
    });
  });

  test('a <title> inside SVG is not the page title', () => {
    expect(metadata('', '<svg><title>icon</title></svg>').metadata.title).toBeNull();
  });

  test('dates fall back to JSON-LD (a block or its @graph), then microdata', () => {
    const graph =
      '<script type="application/ld+json">{"@graph":[{"@type":"WebPage"},{"@type":"BlogPosting","datePublished":"2024-01-01","dateModified":"2024-02-02"}]}</script>';
    expect(metadata(graph).metadata).toMatchObject({
      published_time: '2024-01-01',
      modified_time: '2024-02-02',
    });
    const micro =
      '<time itemprop="datePublished" datetime="2023-03-03">March</time><meta itemprop="dateModified" content="2023-04-04">';
    expect(metadata('', micro).metadata).toMatchObject({
      published_time: '2023-03-03',
      modified_time: '2023-04-04',
    });
  });

  test('og:updated_time is the modified time when article:modified_time is missing', () => {
    expect(metadata('<meta property="og:updated_time" content="2022-02-02">').metadata.modified_time).toBe(
      '2022-02-02',
    );
  });

  test('JSON-LD: invalid blocks are skipped, blocks over 64 KiB skipped and named in truncated', () => {
    const big = `{"@type":"Thing","text":"${'x'.repeat(70 * 1024)}"}`;
    const head =
      '<script type="application/ld+json">{ not json }</script>' +
      `<script type="application/ld+json">${big}</script>` +
      '<script type="application/ld+json">[{"@type":"A"}]</script>';
    const result = metadata(head);
    expect(result.metadata.json_ld).toEqual([[{ '@type': 'A' }]]);
    expect(result.truncated).toEqual(['metadata.json_ld']);
  });

  test('JSON-LD: a block nesting past 32 levels is skipped and named in truncated', () => {
    const deep = `${'{"a":'.repeat(8_000)}1${'}'.repeat(8_000)}`;
    const within = `${'['.repeat(32)}${']'.repeat(32)}`;
    const result = metadata(
      `<script type="application/ld+json">${deep}</script><script type="application/ld+json">${within}</script>`,
    );
    expect(result.metadata.json_ld).toEqual([JSON.parse(within)]);
    expect(result.truncated).toEqual(['metadata.json_ld']);
  });

  test('JSON-LD: at most 20 blocks, the rest named in truncated', () => {
    const head = Array.from(
      { length: 22 },
      (_, i) => `<script type="application/ld+json">{"n":${i}}</script>`,
    ).join('');
    const result = metadata(head);
    expect(result.metadata.json_ld).toHaveLength(20);
    expect(result.metadata.json_ld[19]).toEqual({ n: 19 });
    expect(result.truncated).toEqual(['metadata.json_ld']);
  });

  test('canonical and favicon resolve against <base href>', () => {
    const { metadata: m } = metadata(
      '<base href="https://cdn.example.net/x/"><link rel="canonical" href="c"><link rel="icon" href="i.ico">',
    );
    expect([m.canonical_url, m.favicon]).toEqual([
      'https://cdn.example.net/x/c',
      'https://cdn.example.net/x/i.ico',
    ]);
  });

  test('URLs resolved against the page leave out the credentials it was fetched with', () => {
    const page = { ...PAGE, url: 'https://user:secret@example.com/blog/post' };
    expect(metadata('', '', page).metadata.favicon).toBe('https://example.com/favicon.ico');
    expect(metadata('<link rel="canonical" href="/c">', '', page).metadata.canonical_url).toBe(
      'https://example.com/c',
    );
  });
});
