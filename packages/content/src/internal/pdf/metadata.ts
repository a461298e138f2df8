import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { Metadata, PageInfo } from '../document.ts';
import { fetchedMetadata } from '../plain.ts';
import { pdfjs } from './pdfjs.ts';

/**
 * The metadata of a PDF: the page's fetch fields, `title`, `keywords` and `language` from the PDF,
 * and the PDF's own `author`, `pages`, `subject`, `creator`, `producer`, `created`, `modified`
 * (ISO 8601). A field the PDF lacks is null; the HTML-only fields stay null or empty.
 */
export async function pdfMetadata(pdf: PDFDocumentProxy, page: PageInfo): Promise<Metadata> {
  const { PDFDateString } = await pdfjs();
  const { info, metadata: xmp } = await pdf.getMetadata();
  const fields = (info ?? {}) as Record<string, unknown>;
  const field = (name: string) => text(fields[name]);
  // PDF 2.0 keeps title and author in the XMP stream only.
  const xmpText = (name: string) => {
    const value: unknown = xmp?.get(name);
    return Array.isArray(value)
      ? text(value.filter((each) => typeof each === 'string').join(', '))
      : text(value);
  };
  return {
    ...fetchedMetadata(page),
    title: field('Title') ?? xmpText('dc:title'),
    keywords: field('Keywords'),
    language: field('Language'),
    author: field('Author') ?? xmpText('dc:creator'),
    pages: pdf.numPages,
    subject: field('Subject'),
    creator: field('Creator'),
    producer: field('Producer'),
    created: isoDate(PDFDateString, fields.CreationDate),
    modified: isoDate(PDFDateString, fields.ModDate),
  };
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}

/** A PDF date (`D:YYYYMMDDHHmmSS+HH'mm'`, its prefix sometimes missing) as ISO 8601 in UTC. */
function isoDate(dates: Awaited<ReturnType<typeof pdfjs>>['PDFDateString'], value: unknown): string | null {
  if (typeof value !== 'string' || !value.trim()) return null;
  const raw = value.trim();
  const date = dates.toDateObject(raw.startsWith('D:') ? raw : `D:${raw}`);
  return date && !Number.isNaN(date.getTime()) ? date.toISOString() : null;
}
