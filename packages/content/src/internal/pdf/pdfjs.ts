import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { PDFDocumentLoadingTask, PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { ContentError } from '../errors.ts';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let loaded: Promise<PdfJs> | null = null;

/**
 * pdf.js, loaded on the first PDF: it (and the native canvas module it brings) costs tens of MiB
 * in every thread that imports it, and most threads never read a PDF.
 */
export const pdfjs = (): Promise<PdfJs> => {
  loaded ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  return loaded;
};

// The legacy build is the one pdf.js supports in Node. There it never spawns a worker: it runs its
// "fake worker" (pdf.worker.mjs, imported once) on the calling thread, so it works inside a
// worker_thread and leaves no thread, timer or handle behind once the document is destroyed.
const pdfjsDir = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));

// Node's pdf.js reads these with fs.readFile, so they are paths (with the trailing slash), not URLs.
const OPTIONS = {
  // CJK fonts that use predefined CMaps give no text without them.
  cMapUrl: join(pdfjsDir, 'cmaps', '/'),
  cMapPacked: true,
  standardFontDataUrl: join(pdfjsDir, 'standard_fonts', '/'),
  isEvalSupported: false,
  useSystemFonts: false,
  disableFontFace: true,
  enableXfa: false,
} as const;

/**
 * Opens `bytes` with pdf.js, runs `use` on the document and destroys it whatever happens. A file
 * pdf.js cannot open (not a PDF, damaged, password-protected) is a ContentError.
 */
export async function withPdf<T>(bytes: Uint8Array, use: (pdf: PDFDocumentProxy) => Promise<T>): Promise<T> {
  const { getDocument, PasswordException, VerbosityLevel } = await pdfjs();
  let task: PDFDocumentLoadingTask | undefined;
  try {
    let pdf: PDFDocumentProxy;
    try {
      // A copy, as a plain Uint8Array (pdf.js refuses a Buffer): pdf.js takes ownership of
      // (detaches) the buffer it is given, and the caller keeps its bytes.
      task = getDocument({ ...OPTIONS, verbosity: VerbosityLevel.ERRORS, data: new Uint8Array(bytes) });
      pdf = await task.promise;
    } catch (error) {
      throw unreadable(error, error instanceof PasswordException);
    }
    return await use(pdf);
  } finally {
    await task?.destroy();
  }
}

function unreadable(error: unknown, password: boolean): ContentError {
  if (password) {
    return new ContentError('the PDF is encrypted with a password', { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ContentError(`not a readable PDF: ${message}`, { cause: error });
}
