import type { ContentOptions, Metadata, PageDocument, PageInfo } from './document.ts';
import { DOCUMENT_LIMITS } from './document.ts';

/** The metadata of a page known only by how it was fetched (no markup to read). */
export function fetchedMetadata(page: PageInfo): Metadata {
  return {
    title: null,
    description: null,
    language: null,
    canonical_url: null,
    keywords: null,
    robots: null,
    favicon: null,
    og: {},
    twitter: {},
    published_time: null,
    modified_time: null,
    json_ld: [],
    status_code: page.statusCode,
    content_type: page.contentType,
    source_url: page.sourceUrl,
    url: page.url,
  };
}

/** `text` cut to at most `maxBytes` UTF-8 bytes, never inside a character; null when it fits. */
export function cutUtf8(text: string, maxBytes: number): string | null {
  // A character takes at most 3 bytes in UTF-16 terms (a surrogate pair: 2 units, 4 bytes).
  if (text.length * 3 <= maxBytes) return null;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return null;
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));

/**
 * The document of a body that is text without markup (plain text, JSON, CSV): its markdown is the
 * text itself, its html the text in a <pre>; a body of another kind (an image, an archive) gives
 * metadata only (`text` null).
 */
export function textDocument(text: string | null, page: PageInfo, options: ContentOptions): PageDocument {
  const document: PageDocument = { truncated: [] };
  const keep = (name: 'markdown' | 'html' | 'raw_html', value: string, maxBytes: number) => {
    const cut = cutUtf8(value, maxBytes);
    if (cut !== null) document.truncated.push(name);
    document[name] = cut ?? value;
  };
  for (const format of options.formats) {
    if (format === 'metadata') document.metadata = fetchedMetadata(page);
    else if (text === null) continue;
    else if (format === 'markdown') keep('markdown', text, DOCUMENT_LIMITS.markdownBytes);
    else if (format === 'html') keep('html', `<pre>${escapeHtml(text)}</pre>`, DOCUMENT_LIMITS.htmlBytes);
    else if (format === 'raw_html') keep('raw_html', text, DOCUMENT_LIMITS.rawHtmlBytes);
    else if (format === 'links') document.links = [];
  }
  return document;
}
