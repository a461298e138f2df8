import { DOCUMENT_LIMITS } from '../document.ts';
import type { ParsedPage } from './page.ts';
import { resolveUrl } from './urls.ts';

/**
 * The page's links (`<a href>`, `<area href>`, anywhere in it) resolved against `base`: the
 * absolute http(s) URLs, each once, in document order, at most `limit`; `truncated` when more
 * were left out. A URL keeps its fragment: it is the link as written, made absolute.
 */
export function pageLinks(
  page: ParsedPage,
  base: string | undefined,
  limit: number = DOCUMENT_LIMITS.links,
): { links: string[]; truncated: boolean } {
  const seen = new Set<string>();
  for (const anchor of page.anchors) {
    const url = resolveUrl(anchor.attribs.href ?? '', base);
    if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:')) continue;
    const href = url.href;
    if (seen.has(href)) continue;
    if (seen.size === limit) return { links: [...seen], truncated: true };
    seen.add(href);
  }
  return { links: [...seen], truncated: false };
}
