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
  type DocumentOptions,
  type FirecrawlDocument,
  firecrawlDocument,
  firecrawlFormats,
} from './internal/document.ts';
export { UNSUPPORTED_ENDPOINTS, type UnsupportedEndpoint, unsupportedMessage } from './internal/endpoints.ts';
export { batchScrapeJob, crawlJob, mapJob, scrapeJob } from './internal/jobs.ts';
export { parseMapRequest } from './internal/map-request.ts';
export { rankLinks } from './internal/rank.ts';
export { parseBatchScrapeRequest, parseScrapeRequest } from './internal/scrape-request.ts';
export type {
  ActionOutputs,
  BatchScrapeRequest,
  CrawlRequest,
  FetchSettings,
  FirecrawlFormat,
  FirecrawlVersion,
  Invalid,
  MapRequest,
  Parsed,
  ScrapeOptions,
  ScrapeRequest,
  SitemapMode,
  Webhook,
  WebhookEvent,
} from './internal/types.ts';
export { FIRECRAWL_FORMATS, WEBHOOK_EVENTS } from './internal/types.ts';
