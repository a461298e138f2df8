import { parsePage } from './page.ts';
import { selectEach } from './selectors.ts';
import { baseUrlOf, safeUrl } from './urls.ts';

/** Images listed at most: a gallery page has hundreds, none has more worth naming. */
const MAX_IMAGES = 1_000;
/** Values of one selector's attribute kept at most. */
const MAX_VALUES = 1_000;

/** One `{selector, attribute}` of Firecrawl's attributes format, with the values it found. */
export interface AttributeValues {
  selector: string;
  attribute: string;
  values: string[];
}

/**
 * The page's images (`<img src>`, `<img srcset>` candidates, `<source srcset>`, `og:image`)
 * resolved against its base URL: absolute http(s) URLs, each once, in document order, at most
 * MAX_IMAGES.
 */
export function pageImages(html: string, pageUrl: string): string[] {
  const page = parsePage(html);
  const base = baseUrlOf(page.baseHref, pageUrl);
  const found = new Set<string>();
  const add = (raw: string | undefined) => {
    if (raw === undefined || found.size >= MAX_IMAGES) return;
    const url = safeUrl(raw, base);
    if (url !== null && /^https?:/i.test(url)) found.add(url);
  };
  for (const meta of page.metas)
    if (meta.attribs.property === 'og:image' || meta.attribs.name === 'og:image') add(meta.attribs.content);
  for (const element of selectEach(['img', 'source'], page.root)) {
    add(element.attribs.src);
    for (const candidate of (element.attribs.srcset ?? '').split(','))
      add(candidate.trim().split(/\s+/)[0] || undefined);
  }
  return [...found];
}

/** For each `{selector, attribute}`, the attribute's value on every element the selector matches, in document order. */
export function pageAttributes(
  html: string,
  queries: readonly { selector: string; attribute: string }[],
): AttributeValues[] {
  const page = parsePage(html);
  return queries.map(({ selector, attribute }) => {
    const values: string[] = [];
    for (const element of selectEach([selector], page.root)) {
      const value = element.attribs[attribute];
      if (value !== undefined && values.length < MAX_VALUES) values.push(value);
    }
    return { selector, attribute, values };
  });
}
