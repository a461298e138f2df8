import { AppError, validationError } from '@scrapejobs/domain';
import express, { type NextFunction, type Request, type Response } from 'express';

export const MAX_BODY_BYTES = 1024 * 1024;

const parseJson = express.json({ limit: MAX_BODY_BYTES, strict: false, type: () => true });

const hasBody = (req: Request) =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** docs/api.md §1: a body must be JSON (415), at most 1 MiB (413) and well-formed (400 at `body`). */
export function jsonBody(req: Request, res: Response, next: NextFunction) {
  if (!hasBody(req)) {
    req.body = undefined;
    return next();
  }
  if (!req.is('application/json')) {
    throw new AppError(415, 'The request body must be application/json.');
  }
  parseJson(req, res, (err?: unknown) => {
    if (!err) return next();
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large')
      return next(new AppError(413, `The request body exceeds ${MAX_BODY_BYTES} bytes.`));
    if (type === 'encoding.unsupported' || type === 'charset.unsupported')
      return next(new AppError(415, 'The request body must be UTF-8 JSON.'));
    if (type === 'entity.parse.failed')
      return next(
        validationError({ body: `malformed JSON: ${(err as Error).message}` }, 'The body is not valid JSON.'),
      );
    // Any other client fault while reading (bad compression, a body cut short).
    const { status, expose } = err as { status?: unknown; expose?: unknown };
    if (expose === true && typeof status === 'number' && status >= 400 && status < 500)
      return next(
        validationError(
          { body: 'could not be read (invalid compression, or cut short)' },
          'The body could not be read.',
        ),
      );
    next(err);
  });
}
