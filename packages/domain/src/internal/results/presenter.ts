import type { ResultView } from '@scrapejobs/contracts';
import type { StoredResult } from './service.ts';

// Values are strings; anything else stored is shown as PostgreSQL's `->>` shows it in downloads.
const text = (v: unknown) => (v == null ? null : typeof v === 'string' ? v : JSON.stringify(v));

/** A record as the API shows it: every query name of the job, null where the record has no value. */
export function toResultView(row: StoredResult, queryNames: readonly string[]): ResultView {
  // Query names are the client's (`constructor` and `__proto__` are valid ones): own keys only,
  // into an object without a prototype, which JSON.stringify writes like any other.
  const data = Object.create(null) as Record<string, string | null>;
  for (const name of queryNames) data[name] = text(Object.hasOwn(row.data, name) ? row.data[name] : null);
  return {
    result_id: row.id,
    run_id: row.runId,
    url: row.url,
    data,
    scraped_at: row.scrapedAt.toISOString(),
  };
}
