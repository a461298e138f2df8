import type { Database, Mode } from '@scrapejobs/db';
import {
  forbidden,
  hashToken,
  type KeyCache,
  type Principal,
  type Scope,
  TOKEN_FORMAT,
  unauthorized,
} from '@scrapejobs/domain';
import type { NextFunction, Request, Response } from 'express';

type AuthOutcome = { principal: Principal } | { failure: string };

declare module 'express-serve-static-core' {
  interface Request {
    auth?: AuthOutcome;
    requestId: string;
  }
}

const LAST_USED_EVERY_MS = 60_000;

/**
 * Finds the principal of an API key (its format already checked): from the cache, else from the
 * database; null for an unknown or revoked key. Marks the key used, at most once a minute.
 */
export function keyLookup(db: Database, cache: KeyCache): (token: string) => Promise<Principal | null> {
  const lastTouched = new Map<string, number>();
  const touch = (keyId: string) => {
    const now = Date.now();
    if (now - (lastTouched.get(keyId) ?? 0) < LAST_USED_EVERY_MS) return;
    lastTouched.set(keyId, now);
    db.apiKey.update({ where: { id: keyId }, data: { lastUsedAt: new Date(now) } }).catch(() => {
      lastTouched.delete(keyId);
    });
  };
  return async (token) => {
    const hash = hashToken(token);
    let principal = cache.get(hash);
    if (!principal) {
      const generation = cache.generation();
      // A prepared statement: this lookup runs on every request the cache cannot answer.
      const { rows } = await db.pool.query<[string, string, Mode, string[]]>({
        name: 'auth-key-by-hash',
        text: 'SELECT id, user_id, mode::text, scopes FROM api_keys WHERE token_hash = $1 AND revoked_at IS NULL',
        values: [hash],
        rowMode: 'array',
      });
      const key = rows[0];
      if (key) {
        const [keyId, userId, mode, scopes] = key;
        principal = { keyId, userId, mode, scopes };
        cache.remember(hash, principal, generation);
      }
    }
    if (principal) touch(principal.keyId);
    return principal ?? null;
  };
}

/**
 * Resolves the bearer token (if any) to a principal without answering yet, so the rate
 * limiter can count per key and unknown routes still answer 404.
 */
export function resolveAuth(db: Database, cache: KeyCache) {
  const lookup = keyLookup(db, cache);
  return async (req: Request, _res: Response, next: NextFunction) => {
    const header = req.get('authorization');
    const token = header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
    if (!header)
      req.auth = { failure: 'Missing Authorization header; send "Authorization: Bearer <token>".' };
    else if (!token) req.auth = { failure: 'The Authorization header must use the Bearer scheme.' };
    else if (!TOKEN_FORMAT.test(token)) req.auth = { failure: 'The token is not a valid API key.' };
    else {
      const principal = await lookup(token);
      req.auth = principal ? { principal } : { failure: 'The API key is unknown or has been revoked.' };
    }
    next();
  };
}

/** The authenticated principal of a request that passed `requireScope`. */
export function principalOf(req: Request): Principal {
  if (req.auth && 'principal' in req.auth) return req.auth.principal;
  throw unauthorized('Authentication required.');
}

/** Answers 401 without a valid key and 403 without the scope. */
export const requireScope = (scope: Scope) => (req: Request, _res: Response, next: NextFunction) => {
  const auth = req.auth;
  if (!auth || 'failure' in auth) throw unauthorized(auth?.failure ?? 'Authentication required.');
  if (!auth.principal.scopes.includes(scope)) throw forbidden(`This API key lacks the ${scope} scope.`);
  next();
};
