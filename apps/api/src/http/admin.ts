import { timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import { type NextFunction, type Request, type Response, Router } from 'express';

export const ADMIN_PATH = '/admin/queues';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The operator token from `Authorization: Bearer …` or from Basic auth's password (for browsers). */
function presentedToken(req: Request): string | null {
  const header = req.get('authorization') ?? '';
  const bearer = header.match(/^Bearer\s+(\S+)$/i)?.[1];
  if (bearer) return bearer;
  const basic = header.match(/^Basic\s+(\S+)$/i)?.[1];
  if (!basic) return null;
  const decoded = Buffer.from(basic, 'base64').toString();
  return decoded.slice(decoded.indexOf(':') + 1);
}

/** Bull Board for the operators, behind `ADMIN_TOKEN`; without a token it is not mounted at all. */
export function adminRoutes(token: string | undefined, queues: readonly Queue[]): Router {
  const router = Router();
  if (!token) return router;
  const board = new ExpressAdapter();
  board.setBasePath(ADMIN_PATH);
  createBullBoard({ queues: queues.map((q) => new BullMQAdapter(q)), serverAdapter: board });
  router.use(
    ADMIN_PATH,
    (req: Request, res: Response, next: NextFunction) => {
      const given = presentedToken(req);
      if (given !== null && sameSecret(given, token)) return next();
      res
        .status(401)
        .set('WWW-Authenticate', 'Basic realm="queues", charset="UTF-8"')
        .json({ error: 'unauthorized', message: 'The operator token is missing or wrong.', status: 401 });
    },
    board.getRouter(),
  );
  return router;
}
