import type { FirecrawlDocument } from './document.ts';
import type { FirecrawlVersion } from './types.ts';

export type FirecrawlStatus = 'scraping' | 'completed' | 'failed' | 'cancelled';

/** What a status answer needs of a run, as plain values. */
export interface JobProgress {
  version: FirecrawlVersion;
  /** The run's status (docs/api.md §12). */
  runStatus: 'running' | 'success' | 'failed' | 'cancelled';
  /** The run's URLs so far, and how many succeeded, failed and were skipped. */
  urls: { total: number; successful: number; failed: number; skipped: number };
  expiresAt: Date;
  /** Absolute URL of the next page of documents; null on the last page. */
  next: string | null;
  /** This page's documents, already converted (firecrawlDocument). */
  data: readonly FirecrawlDocument[];
}

export interface StatusBody {
  success: true;
  status: FirecrawlStatus;
  total: number;
  completed: number;
  creditsUsed: number;
  expiresAt: string;
  next?: string | null;
  data: FirecrawlDocument[];
}

/**
 * A run's status in Firecrawl's words. A run with failed pages is still `completed` when some
 * page succeeded: Firecrawl lists failed pages under …/errors, not as a failed crawl.
 */
export function firecrawlStatus(run: JobProgress['runStatus'], successful: number): FirecrawlStatus {
  if (run === 'running') return 'scraping';
  if (run === 'cancelled') return 'cancelled';
  return run === 'success' || successful > 0 ? 'completed' : 'failed';
}

/**
 * GET /crawl/{id}: `total` counts the pages fetched or to fetch (skipped URLs are not),
 * `completed` and `creditsUsed` the pages fetched successfully. v1 leaves `next` out on the
 * last page (its SDK follows any `next` key); v2 answers null.
 */
export function crawlStatus(progress: JobProgress): StatusBody {
  const { urls } = progress;
  const body: StatusBody = {
    success: true,
    status: firecrawlStatus(progress.runStatus, urls.successful),
    total: Math.max(0, urls.total - urls.skipped),
    completed: urls.successful,
    creditsUsed: urls.successful,
    expiresAt: progress.expiresAt.toISOString(),
    next: progress.next,
    data: [...progress.data],
  };
  if (progress.version === 'v1' && progress.next === null) delete body.next;
  return body;
}

/** GET /batch/scrape/{id}: read as a crawl. */
export const batchStatus = (progress: JobProgress): StatusBody => crawlStatus(progress);

export interface CrawlError {
  id: string;
  url: string;
  error: string;
  timestamp: string;
  code?: string;
}

/** GET /crawl/{id}/errors and /batch/scrape/{id}/errors. */
export const crawlErrorsBody = (errors: readonly CrawlError[], robotsBlocked: readonly string[]) => ({
  errors: [...errors],
  robotsBlocked: [...robotsBlocked],
});

export interface MapLink {
  url: string;
  title?: string | undefined;
  description?: string | undefined;
}

/** POST /map: v2 answers links as objects, v1 as URLs. */
export function mapBody(
  links: readonly MapLink[],
  version: FirecrawlVersion,
  warning?: string,
): { success: true; links: MapLink[] | string[]; warning?: string } {
  const extra = warning === undefined ? {} : { warning };
  if (version === 'v1') return { success: true, links: links.map((l) => l.url), ...extra };
  return {
    success: true,
    links: links.map(({ url, title, description }) => ({
      url,
      ...(title ? { title } : {}),
      ...(description ? { description } : {}),
    })),
    ...extra,
  };
}

/** Every Firecrawl error: `{success: false, error}`, with `details` (field path → problem) on a 400. */
export function errorBody(
  message: string,
  details?: Record<string, string>,
): { success: false; error: string; details?: Record<string, string> } {
  return details && Object.keys(details).length > 0
    ? { success: false, error: message, details }
    : { success: false, error: message };
}
