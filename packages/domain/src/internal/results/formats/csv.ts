import type { Encoder } from './encoder.ts';

const NEEDS_QUOTES = /[",\r\n]/;
// A spreadsheet would run a cell that starts with one of these as a formula (CSV injection),
// also after leading white space it trims (space, no-break space, BOM, line feed: all in \s)
// and in their full-width forms, which some spreadsheets read as the ASCII ones.
const FORMULA_START = /^\s*[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/** One RFC 4180 field: guarded against formula injection, quoted when needed, quotes doubled. */
export function csvField(value: string | null): string {
  if (value === null || value === '') return '';
  const v = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

/** RFC 4180 CSV: a header row, CRLF line ends; a missing value is an empty field. */
export function csvEncoder(columns: readonly string[]): Encoder {
  const line = (cells: readonly (string | null)[]) => {
    let out = '';
    for (let i = 0; i < cells.length; i++) out += (i ? ',' : '') + csvField(cells[i] ?? null);
    return `${out}\r\n`;
  };
  return {
    head: () => line(columns),
    rows(rows) {
      let out = '';
      for (const row of rows) out += line(row);
      return out;
    },
    tail: () => '',
  };
}
