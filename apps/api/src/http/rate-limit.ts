import { AppError } from '@scrapejobs/domain';
import { LuaScript } from '@scrapejobs/queues';
import type { NextFunction, Request, Response } from 'express';
import type { Redis } from 'ioredis';

const WINDOW_MS = 60_000;

// One round trip: count this request in the current window and set the window's expiry.
const SCRIPT = new LuaScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`);

/**
 * Fixed one-minute windows per API key (or per client address without a valid key), kept in
 * Redis so every API process shares the budget. Sets the RateLimit-* headers on every answer.
 */
export function rateLimit(redis: Redis, prefix: string, limit: number) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const auth = req.auth;
    const who = auth && 'principal' in auth ? `key:${auth.principal.keyId}` : `ip:${req.ip}`;
    const now = Date.now();
    const window = Math.floor(now / WINDOW_MS);
    const count = Number(
      await SCRIPT.run(redis, 1, `${prefix}:ratelimit:${who}:${window}`, WINDOW_MS + 1_000),
    );
    const reset = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    res.set({
      'RateLimit-Limit': String(limit),
      'RateLimit-Remaining': String(Math.max(0, limit - count)),
      'RateLimit-Reset': String(reset),
    });
    if (count > limit) {
      res.set('Retry-After', String(reset));
      throw new AppError(429, `Rate limit of ${limit} requests per minute exceeded.`, { retry_after: reset });
    }
    next();
  };
}
