import { cutUtf8 } from '../plain.ts';

/** Between two pages' markdown: a thematic break (a paragraph that is itself `---` comes out as `\---`). */
export const MARKDOWN_PAGE_BREAK = '\n\n---\n\n';
const HTML_PAGE_BREAK = '\n<hr>\n';

/** A value cut to its limit, and whether it was cut. */
export interface Bounded {
  value: string;
  cut: boolean;
}

/** The text of the pages for regex queries: paragraphs and pages separated by a blank line. */
export function plainText(pages: readonly string[][]): string {
  return pages.map((paragraphs) => paragraphs.join('\n\n')).join('\n\n');
}

/** The pages as CommonMark paragraphs, pages separated by `---`; at most `maxBytes` UTF-8 bytes. */
export function pagesMarkdown(pages: readonly string[][], maxBytes: number): Bounded {
  const { value, cut } = join(
    pages.map((paragraphs) => paragraphs.map(escapeMarkdown).join('\n\n')),
    MARKDOWN_PAGE_BREAK,
    maxBytes,
  );
  // A cut between a backslash and the character it escaped leaves a stray backslash.
  return { value: cut && /(?<!\\)(\\\\)*\\$/.test(value) ? value.slice(0, -1) : value, cut };
}

/** The pages as `<p>` paragraphs (text escaped), pages separated by `<hr>`; at most `maxBytes` UTF-8 bytes. */
export function pagesHtml(pages: readonly string[][], maxBytes: number): Bounded {
  const { value, cut } = join(
    pages.map((paragraphs) => paragraphs.map((text) => `<p>${escapeHtml(text)}</p>`).join('\n')),
    HTML_PAGE_BREAK,
    maxBytes - '</p>'.length,
  );
  if (!cut) return { value, cut };
  // Never end inside a tag or an entity, and close the paragraph the cut left open.
  const whole = value.replace(/<[^>]*$/, '').replace(/&[^;]*$/, '');
  return { value: whole.lastIndexOf('<p>') > whole.lastIndexOf('</p>') ? `${whole}</p>` : whole, cut };
}

/** Joins `parts` with `separator`, stopping once past `maxBytes` so a huge document is never built whole. */
function join(parts: readonly string[], separator: string, maxBytes: number): Bounded {
  const kept: string[] = [];
  let bytes = 0;
  for (const [index, part] of parts.entries()) {
    const piece = index === 0 ? part : separator + part;
    kept.push(piece);
    bytes += Buffer.byteLength(piece);
    if (bytes > maxBytes) break;
  }
  const value = kept.join('');
  const cut = cutUtf8(value, maxBytes);
  return cut === null ? { value, cut: false } : { value: cut, cut: true };
}

/**
 * Text as a CommonMark (GFM) paragraph that renders as that text, escaping only what would not:
 * emphasis, code and strikethrough marks, what would open a link, an HTML tag or an entity, and a
 * leading heading, quote, bullet or thematic-break marker (`1. ` may become a list: it looks the same).
 */
export function escapeMarkdown(text: string): string {
  return text
    .replace(/[\\`*~]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])|\](?=[([:])|<(?=[\p{L}/!?])|&(?=#?\w+;)/gu, '\\$&')
    .replace(/^(?:#{1,6}(?=\s|$)|>|[-+](?=\s|$)|-(?=[-\s]*$))/, '\\$&');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}
