import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client.ts';
import { watchQueries } from './internal/query-watchdog.ts';

export interface DatabaseOptions {
  url: string;
  /** Pool size of this process. */
  max?: number;
  /** Fail a query that the server has not answered after this long (keeps requests from hanging). */
  queryTimeoutMs?: number;
}

export type Database = PrismaClient & { pool: pg.Pool };

/** A new connection not made in this long means PostgreSQL is unreachable. */
const CONNECT_TIMEOUT_MS = 1_500;

/** A pg client that gives up connecting after CONNECT_TIMEOUT_MS, whatever its pool waits for a free one. */
class Client extends pg.Client {
  constructor(config: pg.ClientConfig = {}) {
    super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  }
}

/**
 * A Prisma client over a pg pool that fails fast when PostgreSQL is unreachable (a connection not
 * made within 1.5 s), while a burst of requests waits for a busy pool's connections as long as a
 * query may take: a busy pool is no outage.
 */
export function createDatabase({ url, max = 10, queryTimeoutMs = 10_000 }: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    Client,
    connectionTimeoutMillis: queryTimeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
  });
  // An idle client whose server went away emits 'error'; the pool replaces it on next use. A
  // checked-out one emits it too, after failing its queries; without a listener that would
  // crash the process.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  watchQueries(pool, queryTimeoutMs);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return Object.assign(prisma, { pool });
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
]);
const UNAVAILABLE_TEXT =
  /connection terminated|timeout exceeded when trying to connect|^timeout expired$|query read timeout|connection refused|can't reach database|server closed the connection|the database system is (starting up|shutting down)|terminating connection/i;

/**
 * Whether an error means "PostgreSQL is unreachable" rather than a bug or a constraint, or that it
 * is too busy for now: a transaction that could not start or ran out of time waiting for locks
 * (P2028), a deadlock or write conflict (P2034, 40P01, 40001), a lock not available (55P03). Either
 * way the same request may succeed when tried again.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 6; depth++) {
    const o = e as { code?: unknown; message?: unknown; cause?: unknown; errorCode?: unknown };
    if (
      typeof o.code === 'string' &&
      (UNAVAILABLE_CODES.has(o.code) ||
        /^P10(01|02|17)$|^P20(28|34)$|^57P0[1-3]$|^40P01$|^40001$|^55P03$/.test(o.code))
    )
      return true;
    if (typeof o.errorCode === 'string' && /^P10(01|02|17)$/.test(o.errorCode)) return true;
    if (typeof o.message === 'string' && UNAVAILABLE_TEXT.test(o.message)) return true;
    e = o.cause;
  }
  return false;
}
