import type { RenderAction, RequestCookie, ScreenshotOptions } from '@scrapejobs/contracts';

/** The Firecrawl API version a request came in on: `/v1/…` takes v1's field names. */
export type FirecrawlVersion = 'v1' | 'v2';

/**
 * The Firecrawl formats this service can produce (`screenshot@fullPage` is read as `screenshot`,
 * v1's `extract` as `json`); `json`, `summary` and `changeTracking` in `json` mode need the
 * operator's language model.
 */
export const FIRECRAWL_FORMATS = [
  'markdown',
  'html',
  'rawHtml',
  'links',
  'screenshot',
  'json',
  'summary',
  'changeTracking',
  'images',
  'attributes',
] as const;
export type FirecrawlFormat = (typeof FIRECRAWL_FORMATS)[number];

/** The json format's schema and prompt (at least one). */
export interface JsonOptions {
  schema: Record<string, unknown> | null;
  prompt: string | null;
}

/** The changeTracking format's options (v2's format object, v1's `changeTrackingOptions`). */
export interface ChangeTrackingOptions {
  /** `git-diff`: the markdown's diff; `json`: the fields of objects extracted from both versions. */
  modes: ('git-diff' | 'json')[];
  schema: Record<string, unknown> | null;
  prompt: string | null;
  /** Scrapes are compared only with earlier ones of the same tag (null is a tag of its own). */
  tag: string | null;
}

export const WEBHOOK_EVENTS = ['started', 'page', 'completed', 'failed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A Firecrawl webhook, with Firecrawl's defaults filled in (every event). */
export interface Webhook {
  url: string;
  headers: Record<string, string>;
  metadata: Record<string, unknown>;
  events: WebhookEvent[];
}

/** What a 400 carries: a sentence naming the first problem, and every problem by field path. */
export interface Invalid {
  ok: false;
  message: string;
  details: Record<string, string>;
}

export type Parsed<T> = { ok: true; value: T } | Invalid;

/** Results of `screenshot`, `scrape` and `executeJavascript` actions the answer shows under `actions`. */
export interface ActionOutputs {
  screenshots: number;
  scrapes: number;
  /** `executeJavascript` actions: their returns are kept with the page's document. */
  scripts: number;
}

/** One `{selector, attribute}` of the attributes format. */
export interface AttributeQuery {
  selector: string;
  attribute: string;
}

/** `maxAge` and `storeInCache` (docs/api.md §26). */
export interface CacheOptions {
  /** Milliseconds a stored page of the same URL and options may be old to answer; 0: always fetched. */
  maxAge: number;
  /** Whether this scrape's page may answer a later one. */
  store: boolean;
}

/** How each page is fetched: the job's `request` and proxy country. */
export interface FetchSettings {
  headers: Record<string, string>;
  cookies: RequestCookie[];
  basicAuth: { username: string; password: string } | null;
  /** An `Authorization` header of another scheme (`Bearer …`), sent as given to the URL's origin. */
  authorization: string | null;
  userAgent: string | null;
  /** ISO 3166-1 alpha-2, upper case: the proxy country (`location.country`). */
  country: string | null;
  /** `skipTlsVerification`: an https site's certificate is not checked (default false here). */
  skipTlsVerification: boolean;
}

/** Firecrawl's scrape options, validated and translated where they need no URL. */
export interface ScrapeOptions {
  /** The formats the answer shows, in Firecrawl's names, without duplicates. */
  formats: FirecrawlFormat[];
  /** The json format's options (v2's format object, v1's `jsonOptions` or `extract`); null without it. */
  json: JsonOptions | null;
  /** Where in `formats` (as given) the formats that need the language model are. */
  modelFormatsAt: number[];
  /** The changeTracking format's options; null without it. */
  changeTracking: ChangeTrackingOptions | null;
  actionOutputs: ActionOutputs;
  /** The attributes format's selectors; empty without it. */
  attributes: AttributeQuery[];
  cache: CacheOptions;
  onlyMainContent: boolean;
  includeTags: string[];
  excludeTags: string[];
  /** Milliseconds a scrape may take (default 30000). */
  timeout: number;
  /** `waitFor` and `actions` as render steps, in order. */
  renderActions: RenderAction[];
  /** The screenshot's viewport, quality and extent (render_config.screenshot_options); null: the defaults. */
  screenshot: ScreenshotOptions | null;
  /** Firecrawl's `mobile`: the page is rendered as a phone would show it. */
  mobile: boolean;
  fetch: FetchSettings;
  /** Options served a little differently than asked (stealth proxies, parsers, a viewport): the answer's `warning`. */
  warnings: string[];
}

export interface ScrapeRequest extends ScrapeOptions {
  url: string;
}

export type SitemapMode = 'include' | 'skip' | 'only';

export interface CrawlRequest {
  url: string;
  /** Pages fetched at most, seed included (`limit`, capped at 100000). */
  limit: number;
  /** Link hops from the seed (`maxDiscoveryDepth`, capped at 50). */
  maxDiscoveryDepth: number;
  /** v1 `maxDepth`: path segments below the seed's own; null in v2. */
  maxPathDepth: number | null;
  /** URL patterns for the job (already translated from path patterns). */
  include: string[];
  exclude: string[];
  sitemap: SitemapMode;
  crawlEntireDomain: boolean;
  allowExternalLinks: boolean;
  allowSubdomains: boolean;
  ignoreRobotsTxt: boolean;
  ignoreQueryParameters: boolean;
  /** Seconds between requests, or null. */
  delay: number | null;
  maxConcurrency: number | null;
  scrapeOptions: ScrapeOptions;
  webhook: Webhook | null;
}

export interface BatchScrapeRequest extends ScrapeOptions {
  /** The valid URLs, without duplicates, in the order given (1–1000). */
  urls: string[];
  /** The URLs given that are not http(s) URLs (only with `ignoreInvalidURLs`). */
  invalidURLs: string[];
  webhook: Webhook | null;
  maxConcurrency: number | null;
}

export interface MapRequest {
  url: string;
  search: string | null;
  sitemap: SitemapMode;
  includeSubdomains: boolean;
  ignoreQueryParameters: boolean;
  /** Links answered at most (default 5000, at most 100000). */
  limit: number;
  /** Milliseconds, or null when not given. */
  timeout: number | null;
  include: string[];
  exclude: string[];
  allowExternalLinks: boolean;
  /** Keep only links under the seed's path (Firecrawl's `filterByPath`, default true). */
  filterByPath: boolean;
  ignoreRobotsTxt: boolean;
  fetch: FetchSettings;
}
