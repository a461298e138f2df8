import type { Readable } from 'node:stream';
import type { DownloadFormat } from '@scrapejobs/contracts';
import { columnNames } from './columns.ts';
import { csvEncoder } from './csv.ts';
import { jsonEncoder } from './json.ts';
import { sqlEncoder } from './sql.ts';
import { encodeStream, type RowSource } from './stream.ts';
import { sheetEncoder, xlsxStream } from './xlsx.ts';

export interface DownloadFormatSpec {
  ext: string;
  contentType: string;
  /** The file, encoded as the records come from `source`; `leading` columns come before `url`. */
  stream(queryNames: readonly string[], source: RowSource, leading?: readonly string[]): Readable;
}

/** The file formats of GET /jobs/{id}/download (docs/api.md §5). */
export const DOWNLOADS: Record<DownloadFormat, DownloadFormatSpec> = {
  json: {
    ext: 'json',
    contentType: 'application/json',
    stream: (names, source, leading) =>
      encodeStream(source, jsonEncoder(columnNames(names, undefined, leading))),
  },
  jsonl: {
    ext: 'jsonl',
    contentType: 'application/jsonl',
    stream: (names, source, leading) =>
      encodeStream(source, jsonEncoder(columnNames(names, undefined, leading), true)),
  },
  csv: {
    ext: 'csv',
    contentType: 'text/csv; charset=utf-8',
    stream: (names, source, leading) =>
      encodeStream(source, csvEncoder(columnNames(names, undefined, leading))),
  },
  xlsx: {
    ext: 'xlsx',
    contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    stream: (names, source, leading) =>
      xlsxStream(encodeStream(source, sheetEncoder(columnNames(names, undefined, leading)))),
  },
  sql: {
    ext: 'sql',
    contentType: 'application/sql',
    stream: (names, source, leading) => encodeStream(source, sqlEncoder(names, leading)),
  },
};
