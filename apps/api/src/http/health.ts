import type { Database } from '@scrapejobs/db';
import { check } from '@scrapejobs/observability';
import { type Request, type Response, Router } from 'express';
import type { Redis } from 'ioredis';

/** `/health`: the process answers. `/ready`: PostgreSQL and Redis answer too. No auth. */
export function healthRoutes(db: Database, redis: Redis): Router {
  const router = Router();
  router.get('/health', (_req: Request, res: Response) => {
    res.json({ status: 'ok' });
  });
  router.get('/ready', async (_req: Request, res: Response) => {
    const [postgres, redisState] = await Promise.all([
      check(() => db.$queryRaw`SELECT 1`),
      check(() => redis.ping()),
    ]);
    const checks = { postgres, redis: redisState };
    if (postgres === 'ok' && redisState === 'ok') res.json({ status: 'ready', checks });
    else
      res
        .status(503)
        .set('Retry-After', '5')
        .json({ error: 'service_unavailable', message: 'A dependency is unreachable.', checks });
  });
  return router;
}
