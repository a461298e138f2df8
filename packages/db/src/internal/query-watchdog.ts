import type pg from 'pg';

/**
 * Fails every query that PostgreSQL has not answered within `timeoutMs` by destroying its
 * connection, so a stalled server gives an error ("Connection terminated") instead of a hang.
 *
 * One timer per pool looks at every busy client. pg's own `query_timeout` arms a timer per query
 * whose closure keeps the query, rows and all, reachable in a way that makes V8 promote them to
 * the old generation: with it, about 2.5 MB per young-generation collection of the API's job list
 * reached the old generation and forced a full collection every half second (bench/README.md).
 */
export function watchQueries(pool: pg.Pool, timeoutMs: number): void {
  // A busy client and when its oldest unanswered query started.
  const busySince = new Map<pg.PoolClient, number>();
  pool.on('connect', (client) => {
    const query = client.query;
    client.query = function (this: pg.PoolClient, ...args: unknown[]) {
      if (!busySince.has(client)) busySince.set(client, Date.now());
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof client.query;
    // pg emits 'drain' when its queue is empty; its own readyForQuery handler runs first and
    // either starts the next query (still busy: a new start) or drains (no longer busy).
    client.on('drain', () => busySince.delete(client));
    client.connection.on('readyForQuery', () => {
      if (busySince.has(client)) busySince.set(client, Date.now());
    });
    client.on('end', () => busySince.delete(client));
  });
  const timer = setInterval(
    () => {
      if (pool.ended) return clearInterval(timer);
      const now = Date.now();
      for (const [client, since] of busySince) {
        if (now - since <= timeoutMs) continue;
        busySince.delete(client);
        client.connection.stream.destroy(new Error('Query read timeout'));
      }
    },
    Math.max(10, Math.min(100, timeoutMs / 10)),
  );
  timer.unref();
}
