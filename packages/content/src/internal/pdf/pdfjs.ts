import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  getDocument,
  PasswordException,
  type PDFDocumentLoadingTask,
  type PDFDocumentProxy,
  VerbosityLevel,
} from 'pdfjs-dist/legacy/build/pdf.mjs';
import { ContentError } from '../errors.ts';

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
  verbosity: VerbosityLevel.ERRORS,
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
  let task: PDFDocumentLoadingTask | undefined;
  try {
    let pdf: PDFDocumentProxy;
    try {
      // A copy, as a plain Uint8Array (pdf.js refuses a Buffer): pdf.js takes ownership of
      // (detaches) the buffer it is given, and the caller keeps its bytes.
      task = getDocument({ ...OPTIONS, data: new Uint8Array(bytes) });
      pdf = await task.promise;
    } catch (error) {
      throw unreadable(error);
    }
    return await use(pdf);
  } finally {
    await task?.destroy();
  }
}

function unreadable(error: unknown): ContentError {
  if (error instanceof PasswordException) {
    return new ContentError('the PDF is encrypted with a password', { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ContentError(`not a readable PDF: ${message}`, { cause: error });
}
