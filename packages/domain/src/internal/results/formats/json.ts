import type { Row } from './columns.ts';
import type { Encoder } from './encoder.ts';

/** One JSON object per row, as `objectOf` writes it. */
type ObjectWriter = (row: Row) => string;

/** A JSON array of the rows' objects (`lines`: one object a line, no array; JSON Lines). */
export function objectsEncoder(objectOf: ObjectWriter, lines: boolean): Encoder {
  let first = true;
  return {
    head: () => (lines ? '' : '['),
    rows(rows) {
      let out = '';
      for (const row of rows) {
        if (!lines) out += first ? '\n' : ',\n';
        first = false;
        out += objectOf(row);
        if (lines) out += '\n';
      }
      return out;
    },
    tail: () => (lines ? '' : first ? ']' : '\n]'),
  };
}

/** A record as a flat object, keys in column order; null stays null. */
export function recordObject(columns: readonly string[]): ObjectWriter {
  // The key of each column, serialised once: `"title":`.
  const keys = columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c)}:`);
  return (row) => {
    let out = '';
    for (let i = 0; i < keys.length; i++) {
      const v = row[i];
      out += keys[i]! + (v == null ? 'null' : JSON.stringify(v));
    }
    return `${out}}`;
  };
}

/** A JSON array of flat objects, one per record, keys in column order; null stays null. */
export const jsonEncoder = (columns: readonly string[], lines = false): Encoder =>
  objectsEncoder(recordObject(columns), lines);
