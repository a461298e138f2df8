export { pageDiff } from './internal/diff.ts';
export {
  type ContentOptions,
  DOCUMENT_LIMITS,
  type DocumentFormat,
  type Metadata,
  type PageDocument,
  type PageInfo,
} from './internal/document.ts';
export { ContentError } from './internal/errors.ts';
export { checkSelector, htmlDocument } from './internal/html/index.ts';
export { type AttributeValues, pageAttributes, pageImages } from './internal/html/picks.ts';
export {
  LITTLE_TEXT_CHARS,
  type PlainPageSignals,
  plainPageSignals,
  type RenderSignal,
} from './internal/html/render-need.ts';
export { type BodyKind, bodyKind } from './internal/kind.ts';
export { type PdfReading, pdfDocument } from './internal/pdf/index.ts';
export { textDocument } from './internal/plain.ts';
export { markdownHash, type PackedDocument, packDocument, unpackDocument } from './internal/stored.ts';
export {
  CHANGE_STATUSES,
  type ChangeStatus,
  compareMarkdown,
  type DiffChange,
  type DiffJson,
  diffJson,
  type FieldChange,
  fieldChanges,
  type PageChangeTracking,
  type PreviousScrape,
} from './internal/tracking.ts';
