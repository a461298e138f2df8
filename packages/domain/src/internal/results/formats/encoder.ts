import type { Row } from './columns.ts';

/**
 * Turns records into the text of a file, batch by batch, so a download never holds more than one
 * batch. One encoder serves one download (it may keep state, such as "first row written").
 */
export interface Encoder {
  /** Text before the first record (a header row, an opening bracket). */
  head(): string;
  rows(rows: readonly Row[]): string;
  /** Text after the last record. */
  tail(): string;
}
