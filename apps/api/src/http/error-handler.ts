import { isDatabaseUnavailable } from '@scrapejobs/db';
import { AppError, notFound, unavailable, validationError } from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';
import type { NextFunction, Request, Response } from 'express';

const REDIS_DOWN =
  /Stream isn't writeable|Connection is closed|ECONNREFUSED|ETIMEDOUT|Command timed out|MaxRetriesPerRequest|enableOfflineQueue/i;

/** Whether an error means Redis could not be reached. */
export const isRedisUnavailable = (err: unknown): boolean =>
  err instanceof Error && (REDIS_DOWN.test(err.message) || err.name === 'MaxRetriesPerRequestError');

// SQLSTATE class 22, data exception: PostgreSQL refused a value (bad encoding, too long, out of range).
const DATA_EXCEPTION = /^22[0-9A-Z]{3}$/;

/**
 * The SQLSTATE of a data exception, looked for in a pg error and in Prisma's wrapping of one
 * (`meta.driverAdapterError.cause.originalCode`); null for any other error.
 */
function dataExceptionCode(err: unknown): string | null {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0 && seen.size < 10) {
    const e = queue.shift();
    if (typeof e !== 'object' || e === null || seen.has(e)) continue;
    seen.add(e);
    const o = e as {
      code?: unknown;
      originalCode?: unknown;
      cause?: unknown;
      meta?: { driverAdapterError?: unknown };
    };
    for (const code of [o.code, o.originalCode])
      if (typeof code === 'string' && DATA_EXCEPTION.test(code)) return code;
    queue.push(o.cause, o.meta?.driverAdapterError);
  }
  return null;
}

/** The router's error for a path parameter that is not valid percent-encoding (`/jobs/%`). */
const isMalformedParam = (err: unknown): boolean =>
  err instanceof URIError && (err as { status?: unknown }).status === 400;

/** The one place that turns errors into the bodies of docs/api.md §9; anything unknown is a logged 500. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  // docs/api.md §1: a malformed id is an unknown one.
  if (isMalformedParam(err)) return notFound();
  if (isDatabaseUnavailable(err)) return unavailable('The database');
  if (isRedisUnavailable(err)) return unavailable('The queue store');
  if (dataExceptionCode(err))
    return validationError(
      { body: 'contains a value the database cannot store (a character, length or number out of range)' },
      'The request contains a value that cannot be stored.',
    );
  return new AppError(500, 'An internal error occurred.');
}

export function errorHandler(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const appErr = toAppError(err);
    if (appErr.status === 503)
      log.warn({ err: (err as Error).message, req_id: req.requestId }, 'dependency unavailable');
    else if (appErr.status >= 500)
      log.error({ err, req_id: req.requestId, path: req.path }, 'request failed');
    else if (!(err instanceof AppError) && dataExceptionCode(err))
      // Input that validation let through: worth knowing, not an outage.
      log.warn(
        { sqlstate: dataExceptionCode(err), req_id: req.requestId, path: req.path },
        'value refused by the database',
      );
    if (appErr.status === 503) res.set('Retry-After', '5');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(appErr.status).json(appErr.toBody());
  };
}
