/** The job.failed error codes (docs/api.md §6) that fetching can produce. */
export type FetchErrorCode = 'TIMEOUT' | 'HTTP_ERROR' | 'NETWORK_ERROR' | 'BLOCKED_TARGET' | 'PROXY_ERROR';

interface FetchErrorInit {
  url: string;
  retryable: boolean;
  status?: number;
  cause?: unknown;
}

/**
 * A page that could not be fetched. `retryable` says whether the failure is transient in kind
 * (a later try may succeed); fetchPage has already spent its own retries when it throws one.
 */
export class FetchError extends Error {
  override name = 'FetchError';
  code: FetchErrorCode;
  retryable: boolean;
  status?: number;
  url: string;

  constructor(code: FetchErrorCode, message: string, init: FetchErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = code;
    this.retryable = init.retryable;
    this.url = init.url;
    if (init.status !== undefined) this.status = init.status;
  }
}
