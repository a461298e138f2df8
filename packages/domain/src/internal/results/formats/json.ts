import type { Encoder } from './encoder.ts';

/** A JSON array of flat objects, one per record, keys in column order; null stays null. */
export function jsonEncoder(columns: readonly string[]): Encoder {
  // The key of each column, serialised once: `"title":`.
  const keys = columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c)}:`);
  let first = true;
  return {
    head: () => '[',
    rows(rows) {
      let out = '';
      for (const row of rows) {
        out += first ? '\n' : ',\n';
        first = false;
        for (let i = 0; i < keys.length; i++) {
          const v = row[i];
          out += keys[i]! + (v == null ? 'null' : JSON.stringify(v));
        }
        out += '}';
      }
      return out;
    },
    tail: () => (first ? ']' : '\n]'),
  };
}
