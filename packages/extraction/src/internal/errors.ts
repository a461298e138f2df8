/** The page limit an extraction ran into (see ExtractionLimits). */
export type ExtractionLimitName = 'time' | 'records' | 'value' | 'total';

/** Thrown when a job cannot be compiled or a page cannot be evaluated; workers report it as EXTRACTION_ERROR. */
export class ExtractionError extends Error {
  readonly code = 'EXTRACTION_ERROR';
  override readonly name = 'ExtractionError';
  /** The limit the page ran into, so callers can count them; undefined for every other failure. */
  readonly limit: ExtractionLimitName | undefined;

  constructor(message: string, options?: ErrorOptions & { limit?: ExtractionLimitName }) {
    super(message, options);
    this.limit = options?.limit;
  }
}

/** A query's failure on a page (a dynamic XPath error, say) as ExtractionError, naming the query by `label`. */
export function failedOnPage(label: string, error: unknown): ExtractionError {
  if (error instanceof ExtractionError) return error;
  const message = String((error as Error)?.message ?? error).split('\n')[0];
  return new ExtractionError(`${label} failed on this page: ${message}`, { cause: error });
}
