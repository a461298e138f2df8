import type pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts';
import { startTcpProxy } from '../../../test/support/tcp-proxy.ts';
import { createDatabase, type Database, isDatabaseUnavailable, transaction } from './index.ts';

let tdb: TestDatabase;
let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
let db: Database;

beforeAll(async () => {
  tdb = await createTestDatabase();
  proxy = await startTcpProxy(5432);
  const url = new URL(tdb.url);
  url.port = String(proxy.port);
  db = createDatabase({ url: url.toString(), max: 2, queryTimeoutMs: 300 });
});

afterAll(async () => {
  await db.pool.end().catch(() => {});
  await proxy.stop();
  await tdb.drop();
});

afterEach(() => proxy.restore());

async function failure(p: Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const started = Date.now();
  try {
    await p;
  } catch (err) {
    return { err, ms: Date.now() - started };
  }
  throw new Error('expected a failure');
}

describe('query time-out', () => {
  it('fails a query the server leaves unanswered, as unavailable, and the pool recovers', async () => {
    expect((await db.pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await proxy.freeze();
    const { err, ms } = await failure(db.pool.query('SELECT 2'));
    expect(isDatabaseUnavailable(err)).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(ms).toBeLessThan(1_000);
    await proxy.restore();
    expect((await db.pool.query('SELECT 3 AS three')).rows).toEqual([{ three: 3 }]);
  });

  it('lets a slow query that is answered in time finish', async () => {
    const res = await db.pool.query('SELECT pg_sleep(0.2), 4 AS four');
    expect(res.rows[0].four).toBe(4);
  });

  it('fails a transaction whose connection stops answering, without crashing the process', async () => {
    const { err } = await failure(
      transaction(db.pool, async (client: pg.PoolClient) => {
        await client.query('SELECT 1');
        await proxy.freeze();
        await client.query('SELECT 2');
      }),
    );
    expect(isDatabaseUnavailable(err)).toBe(true);
    await proxy.restore();
    expect((await db.pool.query('SELECT 5 AS five')).rows).toEqual([{ five: 5 }]);
  });

  it('fails a checked-out connection that is cut, without crashing the process', async () => {
    const client = await db.pool.connect();
    await proxy.stall(); // drops every open connection
    const { err } = await failure(client.query('SELECT 1'));
    expect(isDatabaseUnavailable(err)).toBe(true);
    client.release(err as Error);
    await proxy.restore();
    expect((await db.pool.query('SELECT 6 AS six')).rows).toEqual([{ six: 6 }]);
  });
});

describe('waiting for a connection', () => {
  it('lets a request wait for a busy pool longer than a connection may take to be made', async () => {
    const busy = createDatabase({ url: tdb.url, max: 1, queryTimeoutMs: 20_000 });
    try {
      const held = await busy.pool.connect();
      const waiting = busy.pool.query('SELECT 7 AS seven');
      // Past the 1.5 s a new connection has to be made.
      await new Promise((r) => setTimeout(r, 2_000));
      held.release();
      expect((await waiting).rows).toEqual([{ seven: 7 }]);
    } finally {
      await busy.pool.end();
    }
  });

  it('gives up making a connection to a server that never answers long before a busy pool’s wait ends', async () => {
    const url = new URL(tdb.url);
    url.port = String(proxy.port);
    const stalled = createDatabase({ url: url.toString(), max: 1, queryTimeoutMs: 20_000 });
    try {
      await proxy.stall();
      const { err, ms } = await failure(stalled.pool.query('SELECT 8'));
      expect(isDatabaseUnavailable(err)).toBe(true);
      expect(ms).toBeLessThan(10_000);
    } finally {
      await stalled.pool.end();
    }
  });
});
