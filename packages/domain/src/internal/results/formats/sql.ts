import { columnNames } from './columns.ts';
import type { Encoder } from './encoder.ts';

export const SQL_TABLE = 'scrape_results';

/** A double-quoted identifier, inner quotes doubled. */
export const sqlIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * A single-quoted string literal, quotes doubled, or NULL. Backslashes stay as they are (standard
 * strings, as PostgreSQL since 9.1 and SQLite read them). NUL is removed: no PostgreSQL text value
 * can hold it and both loaders would cut the statement there. A CR LF is split into two literals
 * joined with `||` (`'a\r' || '\nb'`), because the sqlite3 shell drops a CR that ends a line.
 */
export const sqlLiteral = (value: string | null) =>
  value === null
    ? 'NULL'
    : `'${value.replaceAll('\0', '').replaceAll("'", "''").replaceAll('\r\n', "\r' || '\n")}'`;

/**
 * SQL that loads into PostgreSQL and SQLite as it is: one transaction with `CREATE TABLE IF NOT
 * EXISTS` (text columns) and one INSERT per record. Column names are made distinct the way both
 * databases compare them (SQLite ignores case; PostgreSQL keeps the first 63 bytes).
 */
export function sqlEncoder(queryNames: readonly string[], leading: readonly string[] = []): Encoder {
  const columns = columnNames(queryNames, (n) => n.toLowerCase().slice(0, 63), leading).map(sqlIdentifier);
  const table = sqlIdentifier(SQL_TABLE);
  const insert = `INSERT INTO ${table} (${columns.join(', ')}) VALUES (`;
  return {
    head: () =>
      `BEGIN;\nCREATE TABLE IF NOT EXISTS ${table} (${columns.map((c) => `${c} text`).join(', ')});\n`,
    rows(rows) {
      let out = '';
      for (const row of rows) {
        out += insert;
        for (let i = 0; i < columns.length; i++) out += (i ? ', ' : '') + sqlLiteral(row[i] ?? null);
        out += ');\n';
      }
      return out;
    },
    tail: () => 'COMMIT;\n',
  };
}
