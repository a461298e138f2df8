/** The search engine failed: it could not be reached, or answered an error or something that is not its JSON (502). */
export class SearchUnavailableError extends Error {
  override name = 'SearchUnavailableError';
  readonly status = 502;
}

/** The search engine did not answer within the request's timeout (504). */
export class SearchTimeoutError extends Error {
  override name = 'SearchTimeoutError';
  readonly status = 504;
}
