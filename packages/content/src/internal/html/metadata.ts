import { nestsDeeperThan } from '@scrapejobs/contracts';
import type { Element } from 'domhandler';
import { DOCUMENT_LIMITS, type Metadata, type PageInfo } from '../document.ts';
import { collapse, textContent } from './dom.ts';
import type { ParsedPage } from './page.ts';
import { resolveUrl, withoutCredentials } from './urls.ts';

/** What the page's `<meta>` elements say, first non-empty value of each name winning. */
interface MetaValues {
  named: Map<string, string>;
  og: Record<string, string>;
  twitter: Record<string, string>;
}

const NO_SKIP = () => false;

/**
 * The page's metadata (docs/api.md §17). `title` is the `<title>`, else og:title; `description`
 * the meta description, else og:description; `language` the `<html lang>`, else the
 * Content-Language meta; `favicon` the first `<link rel~=icon>`, else `/favicon.ico` of the page's
 * origin. `published_time` is article:published_time, else the first JSON-LD datePublished (of a
 * block or its `@graph`), else microdata `itemprop="datePublished"`; `modified_time` likewise with
 * article:modified_time, og:updated_time, dateModified; both as the page writes them.
 * `jsonLdTruncated` is set when a JSON-LD block was left out for its size or past the block limit.
 */
export function pageMetadata(
  page: ParsedPage,
  info: PageInfo,
  base: string | undefined,
): { metadata: Metadata; jsonLdTruncated: boolean } {
  const meta = readMetas(page.metas);
  const { blocks, truncated } = readJsonLd(page.jsonLd);
  const title = page.title === null ? '' : collapse(textContent(page.title, NO_SKIP));
  const metadata: Metadata = {
    title: title || (meta.og.title ?? null),
    description: meta.named.get('description') ?? meta.og.description ?? null,
    language: nonEmpty(page.htmlElement?.attribs.lang) ?? meta.named.get('content-language') ?? null,
    canonical_url: linkHref(page.linkElements, 'canonical', base),
    keywords: meta.named.get('keywords') ?? null,
    robots: meta.named.get('robots') ?? null,
    favicon: linkHref(page.linkElements, 'icon', base) ?? defaultFavicon(info.url),
    og: meta.og,
    twitter: meta.twitter,
    published_time:
      meta.named.get('article:published_time') ??
      jsonLdDate(blocks, 'datePublished') ??
      microdataDate(page.dated, 'datePublished'),
    modified_time:
      meta.named.get('article:modified_time') ??
      meta.og.updated_time ??
      jsonLdDate(blocks, 'dateModified') ??
      microdataDate(page.dated, 'dateModified'),
    json_ld: blocks,
    status_code: info.statusCode,
    content_type: info.contentType,
    source_url: info.sourceUrl,
    url: info.url,
  };
  return { metadata, jsonLdTruncated: truncated };
}

function readMetas(metas: readonly Element[]): MetaValues {
  const values: MetaValues = { named: new Map(), og: {}, twitter: {} };
  for (const { attribs } of metas) {
    const content = attribs.content?.trim();
    if (content === undefined || content === '') continue;
    // Sites write og:* as `name` and twitter:* as `property` too.
    for (const key of [attribs.property, attribs.name, attribs['http-equiv']]) {
      if (key === undefined) continue;
      const name = key.trim().toLowerCase();
      if (name.startsWith('og:')) setFirst(values.og, name.slice(3), content);
      else if (name.startsWith('twitter:')) setFirst(values.twitter, name.slice(8), content);
      else if (name !== '' && !values.named.has(name)) values.named.set(name, content);
    }
  }
  return values;
}

function setFirst(record: Record<string, string>, key: string, value: string): void {
  if (key !== '' && !Object.hasOwn(record, key)) record[key] = value;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** The absolute URL of the first `<link>` whose rel has `token` and whose href resolves. */
function linkHref(links: readonly Element[], token: string, base: string | undefined): string | null {
  for (const { attribs } of links) {
    if (attribs.href === undefined || attribs.rel === undefined) continue;
    if (
      !attribs.rel
        .toLowerCase()
        .split(/[ \t\n\r\f]+/)
        .includes(token)
    )
      continue;
    const url = resolveUrl(attribs.href, base);
    if (url !== null && (url.protocol === 'https:' || url.protocol === 'http:')) return url.href;
  }
  return null;
}

function defaultFavicon(pageUrl: string): string | null {
  const url = URL.parse('/favicon.ico', withoutCredentials(pageUrl));
  return url !== null && (url.protocol === 'https:' || url.protocol === 'http:') ? url.href : null;
}

/** The JSON-LD blocks that parse, at most DOCUMENT_LIMITS.jsonLdBlocks of at most jsonLdBytes each. */
function readJsonLd(scripts: readonly Element[]): { blocks: unknown[]; truncated: boolean } {
  const blocks: unknown[] = [];
  let truncated = false;
  for (const script of scripts) {
    const text = textContent(script, NO_SKIP);
    if (Buffer.byteLength(text) > DOCUMENT_LIMITS.jsonLdBytes) {
      truncated = true;
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      continue;
    }
    // The API serialises stored documents recursively: a block nested past the limit is left out.
    if (nestsDeeperThan(parsed, DOCUMENT_LIMITS.jsonLdDepth)) {
      truncated = true;
      continue;
    }
    if (blocks.length === DOCUMENT_LIMITS.jsonLdBlocks) {
      truncated = true;
      break;
    }
    blocks.push(parsed);
  }
  return { blocks, truncated };
}

/** The first string `key` of a JSON-LD block's top-level objects or of their `@graph`. */
function jsonLdDate(blocks: readonly unknown[], key: string): string | null {
  for (const block of blocks) {
    for (const item of Array.isArray(block) ? block : [block]) {
      if (!isObject(item)) continue;
      const graph = item['@graph'];
      for (const node of [item, ...(Array.isArray(graph) ? graph : [])]) {
        if (!isObject(node)) continue;
        const value = node[key];
        if (typeof value === 'string' && value.trim() !== '') return value.trim();
      }
    }
  }
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function microdataDate(elements: readonly Element[], itemprop: string): string | null {
  for (const element of elements) {
    if (element.attribs.itemprop !== itemprop) continue;
    const value = element.attribs.content ?? element.attribs.datetime ?? textContent(element, NO_SKIP);
    const trimmed = collapse(value);
    if (trimmed !== '') return trimmed;
  }
  return null;
}
