import { z } from 'zod';
import { SearchTimeoutError, SearchUnavailableError } from './errors.ts';
import type { SearchSettings } from './settings.ts';

/** One result of a search, as every API answers it. */
export interface SearchResult {
  url: string;
  title: string;
  description: string;
}

export interface SearchQuery {
  query: string;
  /** Results wanted (1–100). */
  limit: number;
  /** ISO 639-1 language, e.g. `en`; null: the engine's default. */
  lang: string | null;
  /** ISO 3166-1 alpha-2 country, e.g. `us`; with `lang` it makes SearXNG's `en-US`. */
  country: string | null;
  /** Google's `tbs` time filter (`qdr:d`, `qdr:w`, …); null for none. */
  tbs: string | null;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export interface SearchAnswer {
  results: SearchResult[];
  /** What the engine could not honour (an unknown `tbs`), for the answer's warning. */
  warnings: string[];
}

/** SearXNG answers about this many results a page; more pages are asked for up to the limit. */
const PAGE_SIZE = 10;
/** Pages asked for at most, whatever the limit. */
const MAX_PAGES = 12;
/** The most bytes of one SearXNG answer read. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

const TIME_RANGES: Readonly<Record<string, string>> = {
  'qdr:h': 'day',
  'qdr:d': 'day',
  'qdr:w': 'week',
  'qdr:m': 'month',
  'qdr:y': 'year',
};

const answerSchema = z.object({
  results: z.array(
    z.looseObject({
      url: z.string(),
      title: z.string().nullish(),
      content: z.string().nullish(),
    }),
  ),
});

/**
 * A SearXNG instance's JSON API (`GET /search?format=json`): the results of a query, page by
 * page until the limit, each URL once, only http(s) ones. Errors are SearchUnavailableError
 * (502) and SearchTimeoutError (504), with what went wrong.
 */
export class SearxngClient {
  readonly #settings: SearchSettings;
  readonly #fetch: typeof fetch;

  constructor(settings: SearchSettings, options: { fetch?: typeof fetch } = {}) {
    this.#settings = settings;
    this.#fetch = options.fetch ?? fetch;
  }

  async search(query: SearchQuery): Promise<SearchAnswer> {
    const warnings: string[] = [];
    const timeRange = query.tbs === null ? null : (TIME_RANGES[query.tbs] ?? null);
    if (query.tbs !== null && timeRange === null)
      warnings.push(`tbs "${query.tbs}" is not supported by the search engine and was ignored`);
    const deadline = AbortSignal.timeout(query.timeoutMs);
    const signal = query.signal ? AbortSignal.any([query.signal, deadline]) : deadline;
    const seen = new Set<string>();
    const results: SearchResult[] = [];
    for (let page = 1; page <= MAX_PAGES && results.length < query.limit; page++) {
      const found = await this.#page(query, page, timeRange, signal, deadline);
      let added = 0;
      for (const item of found) {
        if (seen.has(item.url) || !/^https?:\/\//i.test(item.url) || !URL.canParse(item.url)) continue;
        seen.add(item.url);
        results.push({ url: item.url, title: item.title ?? '', description: item.content ?? '' });
        added++;
        if (results.length === query.limit) break;
      }
      // An engine that has nothing new on this page has nothing further either.
      if (added === 0 || found.length < PAGE_SIZE / 2) break;
    }
    return { results, warnings };
  }

  async #page(
    query: SearchQuery,
    page: number,
    timeRange: string | null,
    signal: AbortSignal,
    deadline: AbortSignal,
  ): Promise<z.infer<typeof answerSchema>['results']> {
    const url = new URL(`${this.#settings.endpoint}/search`);
    url.searchParams.set('q', query.query);
    url.searchParams.set('format', 'json');
    url.searchParams.set('pageno', String(page));
    url.searchParams.set('safesearch', '0');
    if (query.lang)
      url.searchParams.set(
        'language',
        query.country ? `${query.lang}-${query.country.toUpperCase()}` : query.lang,
      );
    if (timeRange) url.searchParams.set('time_range', timeRange);
    if (this.#settings.engines) url.searchParams.set('engines', this.#settings.engines);
    if (this.#settings.categories) url.searchParams.set('categories', this.#settings.categories);
    let text: string;
    let status: number;
    try {
      const response = await this.#fetch(url, { signal, headers: { Accept: 'application/json' } });
      status = response.status;
      text = await readCapped(response, MAX_ANSWER_BYTES);
    } catch (err) {
      if (query.signal?.aborted) throw query.signal.reason;
      if (deadline.aborted)
        throw new SearchTimeoutError(`the search engine did not answer within ${query.timeoutMs} ms`);
      throw new SearchUnavailableError(`the search engine could not be reached: ${(err as Error).message}`);
    }
    if (status === 403)
      throw new SearchUnavailableError(
        'the search engine refused JSON output (403): enable "json" in search.formats of its settings.yml',
      );
    if (status < 200 || status >= 300)
      throw new SearchUnavailableError(`the search engine answered ${status}`);
    let parsed: z.infer<typeof answerSchema>;
    try {
      parsed = answerSchema.parse(JSON.parse(text));
    } catch {
      throw new SearchUnavailableError('the search engine answered something that is not its JSON results');
    }
    return parsed.results;
  }
}

/** The body's text, failing past `max` bytes. */
async function readCapped(response: Response, max: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw new Error(`the answer is larger than ${max} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
