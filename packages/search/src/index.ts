// The operator's search engine (docs/api.md §25): a SearXNG client, its settings and errors.
export { SearchTimeoutError, SearchUnavailableError } from './internal/errors.ts';
export {
  type SearchAnswer,
  type SearchQuery,
  type SearchResult,
  SearxngClient,
} from './internal/searxng.ts';
export {
  NO_SEARCH_MESSAGE,
  type SearchEnv,
  type SearchSettings,
  searchEnv,
  searchSettings,
} from './internal/settings.ts';
