import { isDatabaseUnavailable } from '@scrapejobs/db';
import type { Logger } from '@scrapejobs/logging';
import type { NextFunction, Request, Response } from 'express';
import { AppError, unavailable } from '../errors.ts';

const REDIS_DOWN =
  /Stream isn't writeable|Connection is closed|ECONNREFUSED|ETIMEDOUT|Command timed out|MaxRetriesPerRequest|enableOfflineQueue/i;

/** Whether an error means Redis could not be reached. */
export const isRedisUnavailable = (err: unknown): boolean =>
  err instanceof Error && (REDIS_DOWN.test(err.message) || err.name === 'MaxRetriesPerRequestError');

/** The one place that turns errors into the contract's bodies; anything unknown is a logged 500. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isDatabaseUnavailable(err)) return unavailable('The database');
  if (isRedisUnavailable(err)) return unavailable('The queue store');
  return new AppError(500, 'An internal error occurred.');
}

export function errorHandler(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const appErr = toAppError(err);
    if (appErr.status === 503)
      log.warn({ err: (err as Error).message, req_id: req.requestId }, 'dependency unavailable');
    else if (appErr.status >= 500)
      log.error({ err, req_id: req.requestId, path: req.path }, 'request failed');
    if (appErr.status === 503) res.set('Retry-After', '5');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(appErr.status).json(appErr.toBody());
  };
}
