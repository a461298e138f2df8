import type pg from 'pg';
import type { RowSource } from './formats/stream.ts';

// A client that stops reading for this long loses its download, so it cannot hold a snapshot
// (and a pool connection) open forever.
const STALLED_CLIENT_TIMEOUT = '5min';

/**
 * Opens a server-side cursor (DECLARE … FETCH) on a connection of its own from the pool. Each
 * FETCH is a short query, so the pool's query timeout still guards every round trip, however
 * long the download. Closing rolls the read-only transaction back and returns the connection;
 * a connection that failed is destroyed instead.
 */
export async function openRowCursor(pool: pg.Pool, sql: string, values: unknown[]): Promise<RowSource> {
  const client = await pool.connect();
  let failed: Error | undefined;
  // A checked-out client reports a lost connection as an 'error' event; without a listener it
  // would crash the process. The next query fails too, which ends the stream.
  const onError = (err: Error) => {
    failed = err;
  };
  client.on('error', onError);
  let done = false;
  // Whatever ended the stream (the end, a client that went away, a failed FETCH), a rollback
  // leaves the connection clean; if even that fails, the pool destroys the connection.
  const close = async () => {
    if (done) return;
    done = true;
    let broken = failed;
    if (!broken) {
      try {
        await client.query('ROLLBACK');
      } catch (err) {
        broken = err as Error;
      }
    }
    client.off('error', onError);
    client.release(broken ?? false);
  };
  try {
    await client.query('BEGIN READ ONLY');
    await client.query(`SET LOCAL idle_in_transaction_session_timeout = '${STALLED_CLIENT_TIMEOUT}'`);
    await client.query({ text: `DECLARE download NO SCROLL CURSOR FOR ${sql}`, values });
  } catch (err) {
    await close();
    throw err;
  }
  return {
    async next(max) {
      if (done) return [];
      const res = await client.query<(string | null)[]>({
        text: `FETCH ${Math.max(1, Math.floor(max))} FROM download`,
        rowMode: 'array',
      });
      return res.rows;
    },
    close,
  };
}
