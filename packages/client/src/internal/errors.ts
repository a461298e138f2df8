import type { ErrorBody, ErrorCode, Run } from './types.ts';

/** Every error the client throws; `code` is stable and tells what happened. */
export class ScrapeJobsError extends Error {
  override name = 'ScrapeJobsError';
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** The API answered with an error body (docs/api.md §9). */
export class ApiError extends ScrapeJobsError {
  override name = 'ApiError';
  declare readonly code: ErrorCode | (string & NonNullable<unknown>);
  readonly status: number;
  /** Field path → what is wrong (400 `validation_error`). */
  readonly details: Record<string, string> | undefined;
  /** Seconds to wait before trying again (429 and 503): the body's `retry_after`, else `Retry-After`. */
  readonly retryAfter: number | undefined;
  /** The `X-Request-Id` of the answer, to quote to the operator. */
  readonly requestId: string | undefined;
  /** The error body as the API sent it. */
  readonly body: ErrorBody;

  constructor(
    status: number,
    body: ErrorBody,
    retryAfter: number | undefined,
    requestId: string | undefined,
  ) {
    super(body.error, body.message);
    this.status = status;
    this.details = body.details;
    this.retryAfter = retryAfter;
    this.requestId = requestId;
    this.body = body;
  }

  /** Whether the same request may succeed later (429 and 503). */
  get retryable(): boolean {
    return this.status === 429 || this.status === 503;
  }
}

/** 400 `validation_error`: `details` maps each field path to what is wrong. */
export class ValidationError extends ApiError {
  override name = 'ValidationError';
}
/** 401 `unauthorized`: the key is missing, malformed, unknown or revoked. */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
}
/** 403 `forbidden`: the key lacks the scope the endpoint needs. */
export class PermissionError extends ApiError {
  override name = 'PermissionError';
}
/** 404 `not_found`: unknown, someone else's, or of the other mode. */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}
/** 409 `conflict`: the job's state does not allow the action. */
export class ConflictError extends ApiError {
  override name = 'ConflictError';
}
/** 429 `rate_limited`, still over the limit once the retry budget was spent. */
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
}
/** 503 `service_unavailable`, still so once the retry budget was spent. */
export class ServiceUnavailableError extends ApiError {
  override name = 'ServiceUnavailableError';
}

const BY_STATUS: Record<number, typeof ApiError> = {
  400: ValidationError,
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  429: RateLimitError,
  503: ServiceUnavailableError,
};

/** The typed error for an answer's status. */
export function apiError(
  status: number,
  body: ErrorBody,
  retryAfter: number | undefined,
  requestId: string | undefined,
): ApiError {
  const Class = BY_STATUS[status] ?? ApiError;
  return new Class(status, body, retryAfter, requestId);
}

/** No answer came: the address is wrong, the service is down, or the request timed out. */
export class ConnectionError extends ScrapeJobsError {
  override name = 'ConnectionError';
  constructor(message: string, cause: unknown) {
    super('connection_error', message, { cause });
  }
}

export type WebhookVerificationCode =
  | 'missing_signature'
  | 'invalid_signature'
  | 'timestamp_out_of_tolerance'
  | 'invalid_body';

/** A webhook delivery that is not proven to come from the service with this secret. */
export class WebhookVerificationError extends ScrapeJobsError {
  override name = 'WebhookVerificationError';
  declare readonly code: WebhookVerificationCode;
  constructor(code: WebhookVerificationCode, message: string) {
    super(code, message);
  }
}

/** `runs.wait` gave up: the run was still running when its timeout passed. */
export class WaitTimeoutError extends ScrapeJobsError {
  override name = 'WaitTimeoutError';
  /** The run as last seen. */
  readonly run: Run;
  constructor(run: Run, timeoutMs: number) {
    super('wait_timeout', `run ${run.run_id} still running after ${timeoutMs} ms`);
    this.run = run;
  }
}
