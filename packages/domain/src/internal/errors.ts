import { ERROR_CODES, type ErrorBody, type ErrorStatus } from '@scrapejobs/contracts';

/** An error with a status and body of docs/api.md §9; services throw these, the API maps them. */
export class AppError extends Error {
  readonly status: ErrorStatus;
  readonly extra: Partial<ErrorBody>;
  constructor(status: ErrorStatus, message: string, extra: Partial<ErrorBody> = {}) {
    super(message);
    this.name = 'AppError';
    this.status = status;
    this.extra = extra;
  }

  get code(): string {
    return ERROR_CODES[this.status];
  }

  toBody(): ErrorBody {
    return { error: this.code, message: this.message, ...this.extra };
  }
}

export const validationError = (details: Record<string, string>, message = 'The request is invalid.') =>
  new AppError(400, message, { details });
export const unauthorized = (message: string) => new AppError(401, message, { status: 401 });
export const forbidden = (message: string) => new AppError(403, message, { status: 403 });
export const notFound = (what = 'Resource') => new AppError(404, `${what} not found.`);
export const conflict = (message: string) => new AppError(409, message);
export const unavailable = (what: string) => new AppError(503, `${what} is unavailable; try again shortly.`);
