import type { RunUrlView, UrlStatusName } from '@scrapejobs/contracts';
import type { Database } from '@scrapejobs/db';
import { decodePositionCursor, type Page, pageOf } from '../paging.ts';

/** The filter and page of GET /jobs/{id}/runs/{run_id}/urls (docs/api.md §12). */
export interface RunUrlsQuery {
  status?: UrlStatusName | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** The stored states each listed status stands for: a claimed URL (`active`) is still pending. */
const STORED: Record<UrlStatusName, string[]> = {
  pending: ['pending', 'active'],
  success: ['success'],
  failed: ['failed'],
  skipped: ['skipped'],
};

// The columns of an item, read from `u` (the URL) and `p` (the row it was found on, of any kind).
const COLUMNS = `u.seq, u.url, u.status::text, u.depth, p.url, u.http_status, u.records, u.duration_ms,
       to_char(u.fetched_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), u.error_code, u.error_message,
       EXISTS (SELECT 1 FROM run_screenshots s WHERE s.run_id = u.run_id AND s.seq = u.seq), u.unchanged,
       u.rendered, u.render_reason`;

const ALL = `SELECT ${COLUMNS}
               FROM run_urls u LEFT JOIN run_urls p ON p.run_id = u.run_id AND p.seq = u.parent_seq
              WHERE u.run_id = $1 AND u.kind = 'page' AND u.seq > $3
              ORDER BY u.seq LIMIT $2`;

// One ordered range of the (run_id, status, seq) index per stored state, merged: a page costs
// its own rows however many URLs of the run are in other states.
const BY_STATUS = `SELECT ${COLUMNS}
                     FROM unnest($4::"UrlStatus"[]) AS s(status)
                    CROSS JOIN LATERAL (
                          SELECT * FROM run_urls
                           WHERE run_id = $1 AND status = s.status AND kind = 'page' AND seq > $3
                           ORDER BY seq LIMIT $2) u
                     LEFT JOIN run_urls p ON p.run_id = u.run_id AND p.seq = u.parent_seq
                    ORDER BY u.seq LIMIT $2`;

/**
 * One page of a run's URLs (pages only, not the robots.txt and sitemaps it read), in the order the
 * run accepted them; the caller has checked that the run is the owner's.
 */
export async function readRunUrls(
  db: Database,
  runId: string,
  query: RunUrlsQuery,
  screenshotUrl: (seq: number) => string,
): Promise<Page<RunUrlView>> {
  const after = decodePositionCursor(query.cursor) ?? -1;
  const values: unknown[] = [runId, query.limit + 1, after];
  if (query.status) values.push(STORED[query.status]);
  const { rows } = await db.pool.query<unknown[]>({
    name: query.status ? 'run-urls-status' : 'run-urls',
    text: query.status ? BY_STATUS : ALL,
    values,
    rowMode: 'array',
  });
  const page = pageOf(rows, query.limit, (c) => String(c[0]));
  return { items: page.items.map((c) => toRunUrlView(c, screenshotUrl)), nextCursor: page.nextCursor };
}

function toRunUrlView(c: unknown[], screenshotUrl: (seq: number) => string): RunUrlView {
  const status = c[2] === 'active' ? 'pending' : (c[2] as UrlStatusName);
  const code = c[9] as string | null;
  return {
    url: c[1] as string,
    status,
    depth: c[3] as number,
    parent_url: c[4] as string | null,
    http_status: c[5] as number | null,
    records: c[6] as number | null,
    duration_ms: c[7] as number | null,
    fetched_at: c[8] as string | null,
    // A page that succeeded may carry why its language model output is missing (docs/api.md §24).
    error: code === null || status === 'success' ? null : { code, message: (c[10] as string | null) ?? '' },
    warning: code === null || status !== 'success' ? null : { code, message: (c[10] as string | null) ?? '' },
    unchanged: c[12] as boolean,
    rendered: c[13] as boolean | null,
    render_reason: c[14] as string | null,
    screenshot_url: c[11] ? screenshotUrl(c[0] as number) : null,
  };
}
