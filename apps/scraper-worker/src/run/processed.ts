import { FAILURE_CODES } from '@scrapejobs/contracts';
import { urlKey } from '@scrapejobs/crawl';
import type { FoundUrl, PageRows, StoredDocument, UrlOutcome } from '@scrapejobs/domain';

/** What one URL gave: its outcome, the page's records, and the URLs it found. */
export interface Processed {
  outcome: Omit<UrlOutcome, 'seq' | 'claims' | 'durationMs'>;
  records?: Pick<PageRows, 'records' | 'json'>;
  found?: FoundUrl[];
  screenshot?: Buffer;
  document?: StoredDocument;
}

/** The code a URL fails with (docs/api.md §6), or null when the error is not about the URL (storage, a bug). */
export function failureCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return (FAILURE_CODES as readonly unknown[]).includes(code) ? (code as string) : null;
}

export const failed = (code: string, message: string, httpStatus: number | null): Processed['outcome'] => ({
  status: 'failed',
  httpStatus,
  records: null,
  fetchedAt: new Date(),
  failure: { code, message },
});

/** A processed URL that succeeded without records (robots.txt, a sitemap). */
export const succeeded = (httpStatus: number | null): Processed['outcome'] => ({
  status: 'success',
  httpStatus,
  records: null,
  fetchedAt: new Date(),
  failure: null,
});

export const foundUrl = (
  kind: FoundUrl['kind'],
  url: string,
  depth: number,
  parentSeq: number,
): FoundUrl => ({
  kind,
  url,
  key: urlKey(kind, url),
  depth,
  parentSeq,
});
