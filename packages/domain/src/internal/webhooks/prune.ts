import type pg from 'pg';

const DAY_MS = 24 * 3600 * 1000;

/**
 * Deletes outbox events fanned out more than `retentionDays` ago, `batchSize` rows per statement
 * and at most `maxBatches` statements per pass, so a large backlog never holds long locks.
 * Events not yet fanned out are never touched. Deliveries carry their own copy of the event (id,
 * kind, body) and no foreign key to it, so their history and resends are unaffected.
 * Concurrent pruners skip each other's rows (SKIP LOCKED) instead of waiting.
 */
export async function pruneEvents(
  pool: pg.Pool,
  opts: { retentionDays: number; batchSize?: number; maxBatches?: number },
  now = Date.now(),
): Promise<number> {
  const batchSize = opts.batchSize ?? 1_000;
  const maxBatches = opts.maxBatches ?? 100;
  // dispatched_at is never before created_at, so this also means "created before the cutoff";
  // it is the column the (dispatched_at, created_at) index serves.
  const cutoff = new Date(now - opts.retentionDays * DAY_MS);
  let deleted = 0;
  for (let i = 0; i < maxBatches; i++) {
    const { rowCount } = await pool.query(
      `DELETE FROM events WHERE id IN (
         SELECT id FROM events WHERE dispatched_at < $1::timestamptz AT TIME ZONE 'UTC'
         ORDER BY dispatched_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [cutoff, batchSize],
    );
    deleted += rowCount ?? 0;
    if ((rowCount ?? 0) < batchSize) break;
  }
  return deleted;
}
