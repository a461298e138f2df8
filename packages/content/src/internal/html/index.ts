import { type ContentOptions, DOCUMENT_LIMITS, type PageDocument, type PageInfo } from '../document.ts';
import { writeCleanHtml } from './clean-html.ts';
import { cutUtf8 } from './limits.ts';
import { pageLinks } from './links.ts';
import { writeMarkdown } from './markdown.ts';
import { pageMetadata } from './metadata.ts';
import { parsePage } from './page.ts';
import { baseUrlOf } from './urls.ts';
import { contentView } from './view.ts';

export { checkSelector } from './selectors.ts';

/**
 * A page's document: the formats `options` asks for, from one parse of `html` (docs/api.md §17).
 * Values over their limit are cut there and named in `truncated`. Pure and synchronous.
 */
export function htmlDocument(html: string, page: PageInfo, options: ContentOptions): PageDocument {
  const formats = new Set(options.formats);
  const document: PageDocument = { truncated: [] };
  const { truncated } = document;
  const wantsContent = formats.has('markdown') || formats.has('html');
  const parsed = wantsContent || formats.has('links') || formats.has('metadata') ? parsePage(html) : null;
  const base = parsed === null ? undefined : baseUrlOf(parsed.baseHref, page.url);
  if (parsed !== null && wantsContent) {
    const view = contentView(parsed, options);
    if (formats.has('markdown')) {
      const { value, cut } = cutUtf8(
        writeMarkdown(view, base, DOCUMENT_LIMITS.markdownBytes),
        DOCUMENT_LIMITS.markdownBytes,
      );
      document.markdown = value;
      if (cut) truncated.push('markdown');
    }
    if (formats.has('html')) {
      const { value, cut } = cutUtf8(
        writeCleanHtml(view, base, DOCUMENT_LIMITS.htmlBytes),
        DOCUMENT_LIMITS.htmlBytes,
      );
      document.html = value;
      if (cut) truncated.push('html');
    }
  }
  if (formats.has('raw_html')) {
    const { value, cut } = cutUtf8(html, DOCUMENT_LIMITS.rawHtmlBytes);
    document.raw_html = value;
    if (cut) truncated.push('raw_html');
  }
  if (parsed !== null && formats.has('links')) {
    const { links, truncated: cut } = pageLinks(parsed, base);
    document.links = links;
    if (cut) truncated.push('links');
  }
  if (parsed !== null && formats.has('metadata')) {
    const { metadata, jsonLdTruncated } = pageMetadata(parsed, page, base);
    document.metadata = metadata;
    if (jsonLdTruncated) truncated.push('metadata.json_ld');
  }
  return document;
}
