import type { ResultView } from '@scrapejobs/contracts';
import type { StoredResult } from './service.ts';

// Values are strings; anything else stored is shown as PostgreSQL's `->>` shows it in downloads.
const text = (v: unknown) => (v == null ? null : typeof v === 'string' ? v : JSON.stringify(v));

/**
 * A record as the API shows it: every query name of the job, null where the record has no value;
 * of a job with extract (`extracted` its fields, empty without a schema: the object's own), the
 * extracted values as they are, any JSON (docs/api.md §24).
 */
export function toResultView(
  row: StoredResult,
  queryNames: readonly string[],
  extracted: readonly string[] | null = null,
): ResultView {
  // Names are the client's (`constructor` and `__proto__` are valid ones): own keys only,
  // into an object without a prototype, which JSON.stringify writes like any other.
  const data = Object.create(null) as Record<string, unknown>;
  const own = (name: string) => (Object.hasOwn(row.data, name) ? row.data[name] : null);
  if (extracted === null) for (const name of queryNames) data[name] = text(own(name));
  else
    for (const name of extracted.length ? extracted : Object.keys(row.data)) data[name] = own(name) ?? null;
  return {
    result_id: row.id,
    run_id: row.runId,
    url: row.url,
    data,
    scraped_at: row.scrapedAt.toISOString(),
  };
}
