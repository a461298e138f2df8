/** How a fetched body becomes a document: parsed as HTML, kept as text, read as a PDF, or described only. */
export type BodyKind = 'html' | 'text' | 'pdf' | 'other';

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-

/**
 * The kind of a body by its Content-Type (a missing one sniffed from the body): HTML and XML are
 * parsed as markup, other text (plain, JSON, CSV, JavaScript) kept as it is, PDFs read as PDFs,
 * anything else (images, archives, media) only described by its metadata (docs/api.md §17).
 */
export function bodyKind(contentType: string | null | undefined, body?: Uint8Array): BodyKind {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/pdf' || ((type === '' || type === 'application/octet-stream') && isPdf(body)))
    return 'pdf';
  if (type === '' || type === 'text/html' || type === 'application/xhtml+xml' || /[/+]xml$/.test(type))
    return 'html';
  if (type.startsWith('text/') || /[/+]json$/.test(type) || /javascript|ecmascript/.test(type)) return 'text';
  return 'other';
}

function isPdf(body: Uint8Array | undefined): boolean {
  if (!body || body.length < PDF_MAGIC.length) return false;
  return PDF_MAGIC.every((byte, i) => body[i] === byte);
}
