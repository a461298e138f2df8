export { PDF_LIMITS, type PdfLimits, type PdfReading, pdfDocument } from './extract.ts';
