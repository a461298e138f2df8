export type ExtractedRecord = { [queryName: string]: string | null };

export interface RecordColumn {
  readonly name: string;
  readonly join: boolean;
}

/**
 * Assembles records from each query's matches (docs/api.md §4). A joined query gives one
 * value: its non-empty matches joined with a single space, or null when it matched nothing.
 * The other queries form rows (row i holds each one's i-th match, null where it has fewer);
 * joined values repeat in every row. No match at all gives no record; a page where only
 * joined queries matched gives one record.
 */
export function buildRecords(
  columns: readonly RecordColumn[],
  matches: readonly string[][],
): ExtractedRecord[] {
  let rows = 0;
  let anyMatch = false;
  for (let i = 0; i < columns.length; i++) {
    const count = matches[i]?.length ?? 0;
    if (count > 0) anyMatch = true;
    if (!columns[i]?.join && count > rows) rows = count;
  }
  if (!anyMatch) return [];
  const joined = columns.map((column, i) => (column.join ? joinMatches(matches[i] ?? []) : null));
  const records: ExtractedRecord[] = [];
  for (let row = 0; row < Math.max(rows, 1); row++) {
    // fromEntries defines own properties, so a query named __proto__ stays an ordinary key.
    records.push(
      Object.fromEntries(
        columns.map((column, i) => [
          column.name,
          column.join ? (joined[i] ?? null) : (matches[i]?.[row] ?? null),
        ]),
      ),
    );
  }
  return records;
}

function joinMatches(values: readonly string[]): string | null {
  if (values.length === 0) return null;
  return values.filter((value) => value !== '').join(' ');
}
