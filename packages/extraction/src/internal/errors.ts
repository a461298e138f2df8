/** Thrown when a job cannot be compiled or a page cannot be evaluated; workers report it as EXTRACTION_ERROR. */
export class ExtractionError extends Error {
  readonly code = 'EXTRACTION_ERROR';
  override readonly name = 'ExtractionError';
}
