import type { ChangeTypeName, ChangeView, PageChangeView } from '@scrapejobs/contracts';
import type { Database } from '@scrapejobs/db';
import { decodePositionCursor, type Page, pageOf } from '../paging.ts';

/** The filter and page of GET /jobs/{id}/runs/{run_id}/changes (docs/api.md §13). */
export interface RunChangesQuery {
  type?: ChangeTypeName | undefined;
  limit: number;
  cursor?: string | undefined;
}

type Values = Record<string, string | null>;

/** `record` with `url` first, then the job's query names in order, then any other name. */
function ordered(record: Values | null, names: readonly string[]): Values | null {
  if (!record) return null;
  const out: Values = {};
  for (const name of ['url', ...names]) if (name in record) out[name] = record[name] ?? null;
  for (const [name, value] of Object.entries(record)) if (!(name in out)) out[name] = value;
  return out;
}

/**
 * One page of a run's changes against its base run, in the run's result order and then the
 * removed items in the base run's; the caller has checked that the run is the owner's and was
 * compared. `names` orders each record's fields (the job's query names); `key` the key's.
 */
export async function readRunChanges(
  db: Database,
  runId: string,
  query: RunChangesQuery,
  names: readonly string[],
  key: readonly string[],
): Promise<Page<ChangeView | PageChangeView>> {
  const after = decodePositionCursor(query.cursor) ?? -1;
  const values: unknown[] = [runId, query.limit + 1, after];
  if (query.type) values.push(query.type);
  const { rows } = await db.pool.query<{
    seq: number;
    type: ChangeTypeName;
    key: Values;
    data: Values | null;
    previous: Values | null;
    changed_fields: string[];
    kind: 'record' | 'page';
    diff: string | null;
  }>({
    name: query.type ? 'run-changes-type' : 'run-changes',
    text: `SELECT seq, type::text, key, data, previous, changed_fields, kind::text, diff FROM run_changes
            WHERE run_id = $1 AND seq > $3 ${query.type ? 'AND type = $4::"ChangeType"' : ''}
            ORDER BY seq LIMIT $2`,
    values,
  });
  const page = pageOf(rows, query.limit, (row) => String(row.seq));
  return {
    items: page.items.map((row) =>
      row.kind === 'page'
        ? { kind: 'page' as const, type: row.type, url: row.key.url ?? '', diff: row.diff ?? '' }
        : {
            type: row.type,
            key: ordered(row.key, key.length > 0 ? key : names)!,
            data: ordered(row.data, names),
            previous: ordered(row.previous, names),
            changed_fields: row.changed_fields,
          },
    ),
    nextCursor: page.nextCursor,
  };
}
