import {
  type DocumentFormat,
  htmlDocument,
  type PageDocument,
  type PageInfo,
  pdfDocument,
} from '@scrapejobs/content';
import { type FirecrawlDocument, firecrawlDocument } from './document.ts';
import type { ParseRequest } from './parse-request.ts';

/** The kinds of file POST /v2/parse converts. */
export type FileKind = 'html' | 'pdf';

/** An uploaded file as the form gave it. */
export interface UploadedFile {
  name: string;
  /** The part's Content-Type; empty when none was given. */
  type: string;
  bytes: Uint8Array;
}

/** Why a file is not converted: a 415 for a kind this service does not read, else a 400 at `file`. */
export type FileKindProblem = { status: 400 | 415; message: string };

/** What the 415 names as supported. */
export const SUPPORTED_FILES = 'HTML (.html, .htm, .xhtml) and PDF (.pdf)';

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const HTML_EXTENSIONS = new Set(['html', 'htm', 'xhtml']);
/** Types that say nothing of the content: the bytes decide. */
const UNTYPED = new Set(['', 'application/octet-stream', 'text/plain']);
const PDF_MAGIC = '%PDF-';
/** Bytes read to sniff HTML: a BOM, white space and comments before `<html` fit well within them. */
const SNIFF_BYTES = 1024;
/** A document that starts as HTML (after a BOM, white space or comments). */
const LOOKS_LIKE_HTML = /^(?:\uFEFF)?\s*(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html|head|body)[\s>]/i;

const extensionOf = (name: string) => /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase() ?? '';
const mediaType = (type: string) => type.split(';')[0]!.trim().toLowerCase();
const startsWith = (bytes: Uint8Array, text: string) =>
  bytes.length >= text.length && [...text].every((c, i) => bytes[i] === c.charCodeAt(0));

/**
 * The kind of an uploaded file: a PDF by its first bytes (a file named or typed a PDF without them
 * is a 400); HTML by its type or name, or an untyped file by its first bytes. Any other kind
 * (Word, OpenDocument, RTF, spreadsheets, images) is a 415 naming the kinds read.
 */
export function fileKind(file: UploadedFile): FileKind | FileKindProblem {
  const type = mediaType(file.type);
  const extension = extensionOf(file.name);
  if (startsWith(file.bytes, PDF_MAGIC)) return 'pdf';
  if (type === 'application/pdf' || extension === 'pdf')
    return { status: 400, message: `is not a PDF: it does not start with ${PDF_MAGIC}` };
  if (HTML_TYPES.has(type) || (UNTYPED.has(type) && HTML_EXTENSIONS.has(extension))) return 'html';
  if (UNTYPED.has(type) && extension === '') {
    const head = new TextDecoder('utf-8').decode(file.bytes.subarray(0, SNIFF_BYTES));
    if (LOOKS_LIKE_HTML.test(head)) return 'html';
  }
  const named = [type && !UNTYPED.has(type) ? type : '', extension && `.${extension}`].filter(Boolean);
  const what = named.length > 0 ? `this file (${named.join(', ')})` : 'this file';
  return {
    status: 415,
    message: `${what} cannot be parsed: this service parses ${SUPPORTED_FILES} files`,
  };
}

/** The file's content to convert: HTML already decoded to text, or a PDF's bytes. */
export type FileContent = { kind: 'html'; html: string } | { kind: 'pdf'; bytes: Uint8Array };

type FileOptions = Pick<
  ParseRequest,
  'formats' | 'attributes' | 'onlyMainContent' | 'includeTags' | 'excludeTags' | 'maxPages'
>;

/** This service's document formats that the Firecrawl formats asked for need (metadata always). */
function documentFormats(kind: FileKind, options: FileOptions): DocumentFormat[] {
  const asked = new Set(options.formats);
  const formats: DocumentFormat[] = ['metadata'];
  if (asked.has('markdown')) formats.push('markdown');
  if (asked.has('html')) formats.push('html');
  if (asked.has('links')) formats.push('links');
  // The images and attributes formats are read from the HTML as it came.
  if (kind === 'html' && (asked.has('rawHtml') || asked.has('images') || asked.has('attributes')))
    formats.push('raw_html');
  return formats;
}

/**
 * An uploaded file's Firecrawl Document, made by the converters a scraped page's document is
 * (HTML to markdown with its main content, a PDF's text page by page). The file's name stands for
 * its URL: only absolute URLs (or ones under a `<base href>`) resolve. CPU-bound: run it off the
 * event loop, within time and memory limits.
 */
export async function parsedFileDocument(
  content: FileContent,
  file: { name: string; type: string },
  options: FileOptions,
): Promise<FirecrawlDocument> {
  const page: PageInfo = {
    sourceUrl: file.name,
    url: file.name,
    statusCode: null,
    contentType: file.type || null,
  };
  const formats = documentFormats(content.kind, options);
  const document: PageDocument =
    content.kind === 'html'
      ? htmlDocument(content.html, page, { ...options, formats })
      : (await pdfDocument(content.bytes, page, formats, {}, { maxPages: options.maxPages ?? undefined }))
          .document;
  const parsed = firecrawlDocument(
    { url: file.name, status_code: null, ...document },
    { version: 'v2', formats: options.formats, screenshotUrl: null, attributes: options.attributes },
  );
  // Nothing was fetched, through a proxy or otherwise.
  delete parsed.metadata.proxyUsed;
  return parsed;
}
