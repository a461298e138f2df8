import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { DOCUMENT_LIMITS, type DocumentFormat, type PageDocument, type PageInfo } from '../document.ts';
import { ContentError } from '../errors.ts';
import { pdfMetadata } from './metadata.ts';
import { pagesHtml, pagesMarkdown, plainText } from './output.ts';
import { type PositionedText, paragraphs } from './paragraphs.ts';
import { withPdf } from './pdfjs.ts';

/** The limits of a PDF and of its document (docs/api.md §17); tests lower them. */
export interface PdfLimits {
  /** A larger file is refused. */
  bytes: number;
  /** A PDF with more pages is refused. */
  pages: number;
  /** Longer markdown or html is cut, links past this count dropped, each named in `truncated`. */
  markdownBytes: number;
  htmlBytes: number;
  links: number;
}

export const PDF_LIMITS: Readonly<PdfLimits> = Object.freeze({
  bytes: DOCUMENT_LIMITS.pdfBytes,
  pages: DOCUMENT_LIMITS.pdfPages,
  markdownBytes: DOCUMENT_LIMITS.markdownBytes,
  htmlBytes: DOCUMENT_LIMITS.htmlBytes,
  links: DOCUMENT_LIMITS.links,
});

/** What of a PDF is read: `maxPages`, its first pages only (the metadata still counts them all). */
export interface PdfReading {
  maxPages?: number | undefined;
}

/**
 * The document of a PDF (the formats asked for; `raw_html` does not apply) and its whole text for
 * regex queries. Markdown is the text page by page, paragraphs rebuilt from the text's layout,
 * pages separated by a `---` thematic break. An unreadable, encrypted or oversized PDF (more pages
 * to read than the limit) is a ContentError; a page that cannot be read gives no text, unless no
 * page gives any.
 */
export async function pdfDocument(
  bytes: Uint8Array,
  page: PageInfo,
  formats: readonly DocumentFormat[],
  limits: Partial<PdfLimits> = {},
  reading: PdfReading = {},
): Promise<{ document: PageDocument; text: string }> {
  const limit = { ...PDF_LIMITS, ...limits };
  if (bytes.byteLength > limit.bytes) {
    throw new ContentError(`the PDF has ${bytes.byteLength} bytes, more than the limit of ${limit.bytes}`);
  }
  return withPdf(bytes, async (pdf) => {
    const toRead = Math.min(pdf.numPages, reading.maxPages ?? pdf.numPages);
    if (toRead > limit.pages) {
      throw new ContentError(`the PDF has ${pdf.numPages} pages, more than the limit of ${limit.pages}`);
    }
    const { pages, links } = await readPages(pdf, toRead, formats.includes('links'));
    const document: PageDocument = { truncated: [] };
    for (const format of formats) {
      if (format === 'markdown' || format === 'html') {
        const { value, cut } =
          format === 'markdown'
            ? pagesMarkdown(pages, limit.markdownBytes)
            : pagesHtml(pages, limit.htmlBytes);
        document[format] = value;
        if (cut) document.truncated.push(format);
      } else if (format === 'links') {
        document.links = [...links].slice(0, limit.links);
        if (links.size > limit.links) document.truncated.push('links');
      } else if (format === 'metadata') {
        document.metadata = await pdfMetadata(pdf, page);
      }
    }
    return { document, text: plainText(pages) };
  });
}

/**
 * The first `count` pages' paragraphs, one page at a time, and the http(s) URLs of their links (once each, in
 * order) when asked. A damaged page (of a truncated download, say) gives no text; unless no page
 * gives any, in which case the PDF is a ContentError.
 */
async function readPages(
  pdf: PDFDocumentProxy,
  count: number,
  wantsLinks: boolean,
): Promise<{ pages: string[][]; links: Set<string> }> {
  const pages: string[][] = [];
  const links = new Set<string>();
  let failure: { number: number; error: unknown } | undefined;
  for (let number = 1; number <= count; number++) {
    try {
      const content = await readPage(pdf, number, wantsLinks);
      pages.push(content.paragraphs);
      for (const link of content.links) links.add(link);
    } catch (error) {
      pages.push([]);
      failure ??= { number, error };
    }
  }
  if (failure && pages.every((paragraphs) => paragraphs.length === 0)) {
    const message = failure.error instanceof Error ? failure.error.message : String(failure.error);
    throw new ContentError(`could not read page ${failure.number} of the PDF: ${message}`, {
      cause: failure.error,
    });
  }
  return { pages, links };
}

/** One page's paragraphs and, when asked, the http(s) URLs of its link annotations. */
async function readPage(
  pdf: PDFDocumentProxy,
  number: number,
  wantsLinks: boolean,
): Promise<{ paragraphs: string[]; links: string[] }> {
  const page = await pdf.getPage(number);
  try {
    const content = await page.getTextContent();
    const items = content.items.filter((item): item is PositionedText & typeof item => 'str' in item);
    return { paragraphs: paragraphs(items), links: wantsLinks ? linkUrls(await page.getAnnotations()) : [] };
  } finally {
    // Frees the page's fonts and parsed content: a long PDF is read one page at a time.
    page.cleanup();
  }
}

function linkUrls(annotations: readonly unknown[]): string[] {
  const urls: string[] = [];
  for (const annotation of annotations as { subtype?: unknown; url?: unknown; unsafeUrl?: unknown }[]) {
    if (annotation.subtype !== 'Link') continue;
    const raw = typeof annotation.url === 'string' ? annotation.url : annotation.unsafeUrl;
    const url = typeof raw === 'string' ? URL.parse(raw.trim()) : null;
    if (url && (url.protocol === 'http:' || url.protocol === 'https:')) urls.push(url.href);
  }
  return urls;
}
