export {
  batchStatus,
  type CrawlError,
  crawlErrorsBody,
  crawlStatus,
  errorBody,
  type FirecrawlStatus,
  firecrawlStatus,
  type JobProgress,
  type MapLink,
  mapBody,
  type StatusBody,
} from './internal/bodies.ts';
export { parseCrawlRequest } from './internal/crawl-request.ts';
export {
  type ChangeTracking,
  type DocumentOptions,
  type FirecrawlDocument,
  firecrawlDocument,
  firecrawlFormats,
} from './internal/document.ts';
export { UNSUPPORTED_ENDPOINTS, type UnsupportedEndpoint, unsupportedMessage } from './internal/endpoints.ts';
export {
  EXTRACT_MAX_PAGES,
  type ExtractRequest,
  extractJob,
  mergeExtracted,
  parseExtractRequest,
} from './internal/extract-request.ts';
export {
  INTERACT_MAX_TIMEOUT_S,
  type InteractRequest,
  interactBody,
  parseInteractRequest,
} from './internal/interact-request.ts';
export {
  cacheKeyOf,
  type FirecrawlJobOptions,
  jobOptions,
  readJobOptions,
} from './internal/job-options.ts';
export { batchScrapeJob, crawlJob, mapJob, scrapeJob, searchScrapeJob } from './internal/jobs.ts';
export { parseMapRequest } from './internal/map-request.ts';
export {
  type FileContent,
  type FileKind,
  type FileKindProblem,
  fileKind,
  parsedFileDocument,
  SUPPORTED_FILES,
  type UploadedFile,
} from './internal/parse-file.ts';
export { type ParseRequest, parseParseOptions } from './internal/parse-request.ts';
export { rankLinks } from './internal/rank.ts';
export { type PageFailure, type ScrapeFailure, scrapeFailure } from './internal/scrape-failure.ts';
export { parseBatchScrapeRequest, parseScrapeRequest } from './internal/scrape-request.ts';
export {
  parseSearchRequest,
  type SearchHit,
  type SearchRequest,
  searchBody,
} from './internal/search-request.ts';
export {
  type CreditFigures,
  creditUsageBody,
  type QueueFigures,
  queueStatusBody,
  SELF_HOSTED_CREDITS,
} from './internal/team.ts';
export type {
  ActionOutputs,
  BatchScrapeRequest,
  ChangeTrackingOptions,
  CrawlRequest,
  FetchSettings,
  FirecrawlFormat,
  FirecrawlVersion,
  Invalid,
  JsonOptions,
  MapRequest,
  Parsed,
  ScrapeOptions,
  ScrapeRequest,
  SitemapMode,
  Webhook,
  WebhookEvent,
} from './internal/types.ts';
export { FIRECRAWL_FORMATS, WEBHOOK_EVENTS } from './internal/types.ts';
