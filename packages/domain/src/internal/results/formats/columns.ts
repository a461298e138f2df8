/** One record of a download: url, scraped_at, then one value per query of the job (null when missing). */
export type Row = readonly (string | null)[];

/** The fixed columns that come before the query names (docs/api.md §5). */
export const FIXED_COLUMNS = ['url', 'scraped_at'] as const;

/**
 * The column names of a download: `url`, `scraped_at`, then the query names in the job's order
 * (after `leading` columns: `change` in a download of changes).
 * A query named like an earlier column (a query called `url`) gets a suffix (`url_2`), because
 * every format needs distinct names. `key` says when two names are the same for the target:
 * SQLite compares identifiers case-insensitively, PostgreSQL cuts them at 63 bytes.
 */
export function columnNames(
  queryNames: readonly string[],
  key: (name: string) => string = (n) => n,
  leading: readonly string[] = [],
): string[] {
  const taken = new Set<string>();
  const out: string[] = [];
  for (const wanted of [...leading, ...FIXED_COLUMNS, ...queryNames]) {
    let name = wanted;
    for (let n = 2; taken.has(key(name)); n++) name = `${wanted.slice(0, 60 - String(n).length)}_${n}`;
    taken.add(key(name));
    out.push(name);
  }
  return out;
}
