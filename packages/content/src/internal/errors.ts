/** A page whose content cannot be extracted (an invalid or encrypted PDF, one over a limit); not retryable. */
export class ContentError extends Error {
  readonly code = 'EXTRACTION_ERROR';
  override readonly name = 'ContentError';
}
