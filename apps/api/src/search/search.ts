import type { CreateJobInput, DocumentView } from '@scrapejobs/contracts';
import {
  AppError,
  type CompatRun,
  type CompatService,
  type PageTracking,
  type Principal,
} from '@scrapejobs/domain';
import {
  NO_SEARCH_MESSAGE,
  type SearchQuery,
  type SearchResult,
  SearchTimeoutError,
  SearchUnavailableError,
  type SearxngClient,
} from '@scrapejobs/search';

/** Documents read of a search's scrape (its results are at most 100). */
const DOCUMENTS_PAGE = 100;

export interface SearchDeps {
  /** The operator's SearXNG; null when SEARXNG_ENDPOINT is unset (search is then a 501). */
  client: SearxngClient | null;
  compat: CompatService;
  /** Checks a job body as POST /jobs does. */
  parseJob: (raw: unknown, userId: string) => Promise<CreateJobInput>;
}

/** A result's page as the scrape left it: its document, or why it has none. */
export interface ScrapedPage {
  document: DocumentView | null;
  screenshotUrl: string | null;
  error: { code: string; message: string } | null;
}

export interface SearchOutcome {
  results: SearchResult[];
  warnings: string[];
  /** With a scrape: its run, and each result's page by URL. */
  scrape: { run: CompatRun; pages: Map<string, ScrapedPage> } | null;
}

/**
 * A search (docs/api.md §25): the engine's results, then, when `scrapeJob` is given, their pages
 * scraped by the fleet as one batch job within what is left of the timeout (what is not done by
 * then is cancelled), each page compared with its previous scrape when `tracking` says so. The engine failing is a 502, not answering in time a 504.
 */
export async function runSearch(
  deps: SearchDeps,
  principal: Principal,
  query: Omit<SearchQuery, 'signal'>,
  scrapeJob: ((urls: string[]) => CreateJobInput) | null,
  tracking: PageTracking | null = null,
): Promise<SearchOutcome> {
  if (!deps.client) throw new AppError(501, NO_SEARCH_MESSAGE);
  const deadline = Date.now() + query.timeoutMs;
  let answer: Awaited<ReturnType<SearxngClient['search']>>;
  try {
    answer = await deps.client.search(query);
  } catch (err) {
    if (err instanceof SearchTimeoutError) throw new AppError(504, `Search failed: ${err.message}.`);
    if (err instanceof SearchUnavailableError) throw new AppError(502, `Search failed: ${err.message}.`);
    throw err;
  }
  const { results, warnings } = answer;
  if (!scrapeJob || results.length === 0) return { results, warnings, scrape: null };
  const urls = results.map((r) => r.url);
  const job = await deps.parseJob(scrapeJob(urls), principal.userId);
  const { runId } = await deps.compat.start(principal, job, urls, null, tracking);
  let run = await deps.compat.waitForEnd(principal, runId, Math.max(0, deadline - Date.now()));
  if (run.run.status === 'running') {
    await deps.compat.cancel(principal, run);
    run = await deps.compat.get(principal, runId);
    warnings.push(
      'the scrape of the results did not finish within the timeout; the pages not done have no document',
    );
  }
  const pages = new Map<string, ScrapedPage>();
  const documents = await deps.compat.documents(principal, run, { limit: DOCUMENTS_PAGE });
  documents.items.forEach((document, i) => {
    pages.set(document.url, { document, screenshotUrl: documents.screenshots[i] ?? null, error: null });
  });
  const { failed, robots } = await deps.compat.errors(run, DOCUMENTS_PAGE);
  for (const f of failed)
    pages.set(f.url, { document: null, screenshotUrl: null, error: { code: f.code, message: f.message } });
  for (const url of robots)
    pages.set(url, {
      document: null,
      screenshotUrl: null,
      error: { code: 'ROBOTS_DISALLOWED', message: `${url}: robots.txt does not allow it` },
    });
  return { results, warnings, scrape: { run, pages } };
}
