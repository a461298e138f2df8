import { formatsSchema } from '@scrapejobs/contracts';
import {
  type FirecrawlDocument,
  firecrawlDocument,
  firecrawlFormats,
  readJobOptions,
} from '@scrapejobs/firecrawl';
import type pg from 'pg';
import { documentView } from '../results/documents.ts';
import type { PageEventData } from './firecrawl.ts';

// The document of a `crawl.page` (`batch_scrape.page`) delivery (docs/api.md §18), read from the
// page's stored document: RunStore writes the page event in the transaction that stores it.

/** A page delivery's document is at most this much JSON; formats are left out until it fits. */
export const MAX_PAGE_DOCUMENT_BYTES = 1024 * 1024;

/** The formats a page delivery leaves out first when its document is too large, in that order. */
const LEFT_OUT_FIRST = ['rawHtml', 'html', 'links', 'markdown'] as const;

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '');

/** The document without its largest formats (rawHtml, then html, links, markdown) until its JSON is at most `max` bytes. */
export function cappedDocument(doc: FirecrawlDocument, max = MAX_PAGE_DOCUMENT_BYTES): FirecrawlDocument {
  let size = jsonBytes(doc);
  if (size <= max) return doc;
  const out = { ...doc };
  for (const name of LEFT_OUT_FIRST) {
    if (size <= max) break;
    if (out[name] === undefined) continue;
    // The field's `"name":value,` counted as its JSON in an object of its own, less the braces.
    size -= jsonBytes({ [name]: out[name] }) - 1;
    delete out[name];
  }
  return out;
}

interface DocumentRow {
  event_id: string;
  url: string | null;
  status_code: number | null;
  data: Buffer | null;
  formats: unknown;
  /** The request's own formats, actions and attributes (docs/api.md §26). */
  firecrawl: unknown;
}

/**
 * The Firecrawl document of each page event (by event id), with its job's formats, capped. A page
 * whose document is gone (never stored) is shown by its URL and metadata alone.
 */
export async function pageDocuments(
  pool: pg.Pool,
  events: readonly { id: string; data: unknown }[],
): Promise<Map<string, FirecrawlDocument>> {
  const pages = events.map((e) => ({ id: e.id, ...(e.data as PageEventData) }));
  const { rows } = await pool.query<DocumentRow>({
    name: 'firecrawl-page-documents',
    text: `SELECT p.event_id, d.url, d.status_code, d.data, j.formats, j.firecrawl
             FROM unnest($1::text[], $2::text[], $3::int[]) AS p(event_id, run_id, seq)
             LEFT JOIN runs r ON r.id = p.run_id
             LEFT JOIN jobs j ON j.id = r.job_id
             LEFT JOIN run_documents d ON d.run_id = p.run_id AND d.seq = p.seq`,
    values: [pages.map((p) => p.id), pages.map((p) => p.run_id), pages.map((p) => p.seq)],
  });
  const byId = new Map(rows.map((row) => [row.event_id, row]));
  return new Map(
    pages.map((page) => {
      const row = byId.get(page.id);
      const formats = formatsSchema.safeParse(row?.formats).data ?? [];
      const asked = readJobOptions(row?.firecrawl);
      const view =
        row?.data && row.url !== null
          ? documentView(row.url, row.status_code, row.data, new Set([...formats, 'javascript_returns']))
          : { url: page.url, status_code: null, truncated: [] };
      const doc = firecrawlDocument(view, {
        version: 'v2',
        formats: asked?.formats ?? firecrawlFormats(formats),
        screenshotUrl: page.screenshot_url ?? null,
        actions: asked?.actions,
        attributes: asked?.attributes,
      });
      return [page.id, cappedDocument(doc)];
    }),
  );
}
