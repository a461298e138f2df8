export { PDF_LIMITS, type PdfLimits, pdfDocument } from './extract.ts';
