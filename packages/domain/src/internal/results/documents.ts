import { unpackDocument } from '@scrapejobs/content';
import type { DocumentView, DownloadFormat } from '@scrapejobs/contracts';
import { Prisma } from '@scrapejobs/db';
import { validationError } from '../errors.ts';
import type { Row } from './formats/columns.ts';
import { objectsEncoder } from './formats/json.ts';
import { encodeStream, type RowSource } from './formats/stream.ts';

/** The formats a document shows: the run's own (a markdown kept only for change tracking is not shown). */
export type ShownFormats = ReadonlySet<string>;

/** A page of a list stops once its documents hold this much JSON (at least one document a page). */
const MAX_LIST_BYTES = 32 * 1024 * 1024;

/** A stored document as its view: `url`, `status_code`, the run's formats, `truncated`. */
export function documentView(
  url: string,
  statusCode: number | null,
  data: Uint8Array,
  shown: ShownFormats,
): DocumentView {
  const { truncated, ...formats } = unpackDocument(data);
  const view: Omit<DocumentView, 'truncated'> = { url, status_code: statusCode };
  for (const [name, value] of Object.entries(formats))
    if (shown.has(name)) Object.assign(view, { [name]: value });
  // `truncated` last, as the contract lists the fields.
  return { ...view, truncated: truncated.filter((name) => shown.has(name.split('.')[0]!)) };
}

/**
 * The formats of a run's documents, from its settings; with the language model's object (`json`)
 * when its job has `extract`, the comparison with the previous scrape (`change_tracking`) when it
 * tracks pages, and its `warning` always (docs/api.md §24).
 */
export function shownFormats(settings: unknown): ShownFormats {
  const { formats, extract, page_tracking } =
    (settings as { formats?: unknown; extract?: unknown; page_tracking?: unknown } | null) ?? {};
  const shown = new Set(
    Array.isArray(formats) ? formats.filter((f): f is string => typeof f === 'string') : [],
  );
  shown.add('warning');
  // Only a render with execute_javascript steps has them (docs/api.md §14).
  shown.add('javascript_returns');
  if (extract) shown.add('json');
  if (page_tracking) shown.add('change_tracking');
  return shown;
}

// A cursor names its run and the last document's seq.
export const encodeDocumentCursor = (runId: string, seq: number) =>
  Buffer.from(`${runId}:${seq}`).toString('base64url');

export function decodeDocumentCursor(cursor: string, runId: string): number {
  const [run = '', seq = ''] = Buffer.from(cursor, 'base64url').toString().split(':');
  if (run !== runId || !/^\d{1,10}$/.test(seq))
    throw validationError({ cursor: 'is not a cursor returned by this endpoint for this run' });
  return Number(seq);
}

/**
 * The next `limit` + 1 documents of a run after `afterSeq`, in its URL order; those past
 * MAX_LIST_BYTES (never the first) come without their data, so they are not read.
 */
export const documentRows = (runId: string, afterSeq: number, limit: number, url: string | undefined) =>
  Prisma.sql`SELECT seq, url, status_code AS "statusCode",
                    CASE WHEN before < ${MAX_LIST_BYTES} THEN data END AS data
      FROM (SELECT seq, url, status_code, data, sum(bytes) OVER (ORDER BY seq) - bytes AS before
              FROM run_documents
             WHERE run_id = ${runId} AND seq > ${afterSeq} ${url === undefined ? Prisma.empty : Prisma.sql`AND url = ${url}`}
             ORDER BY seq LIMIT ${limit + 1}) d
     ORDER BY seq`;

/** A run's documents as download rows: url, status_code, the packed document. */
export const DOCUMENT_DOWNLOAD_SQL = `SELECT url, status_code, data FROM run_documents WHERE run_id = $1 ORDER BY seq`;

/** The documents of a download as a JSON array or JSON Lines, one document at a time when they are large. */
export function documentStream(format: DownloadFormat, source: RowSource, shown: ShownFormats) {
  const objectOf = (row: Row) => {
    const [url, status, data] = row as unknown as [string, number | null, Uint8Array];
    return JSON.stringify(documentView(url, status, data, shown));
  };
  return encodeStream(source, objectsEncoder(objectOf, format === 'jsonl'), 1);
}
