import type { CreateJobInput, FormatName, RenderConfig } from '@scrapejobs/contracts';
import type {
  BatchScrapeRequest,
  CrawlRequest,
  FetchSettings,
  FirecrawlFormat,
  MapRequest,
  ScrapeOptions,
  ScrapeRequest,
  Webhook,
} from './types.ts';
import { escapeGlob } from './urls.ts';

/** Requests a minute when Firecrawl sets no `delay`: the job's maximum; the per-host limits of §19 still hold. */
const UNLIMITED_RATE = 6000;
/** Map: pages fetched for their titles; the other links found are listed without one. */
export const MAP_FETCHED_PAGES = 100;
/** Map: how long it may take when `timeout` is not given (ms). */
const DEFAULT_MAP_TIMEOUT_MS = 60_000;
/** The longest render wait a job takes (docs/api.md §3.1). */
const MAX_RENDER_WAIT_MS = 120_000;

/** Every `a href` of a page: the links a Firecrawl crawl follows. */
const FOLLOW_LINKS = [{ type: 'css', query: 'a::attr(href)' }] as const;

/** The job format of each Firecrawl format; `json` is the job's `extract` instead. */
const JOB_FORMAT: Readonly<Partial<Record<FirecrawlFormat, FormatName>>> = {
  markdown: 'markdown',
  html: 'html',
  rawHtml: 'raw_html',
  links: 'links',
  screenshot: 'screenshot',
  summary: 'summary',
};
const FORMAT_ORDER: readonly FormatName[] = [
  'markdown',
  'html',
  'raw_html',
  'links',
  'metadata',
  'screenshot',
  'summary',
];

const jobName = (kind: string, url: string): string => `Firecrawl ${kind} ${url}`.slice(0, 200).trim();

/** Job formats: the asked ones, metadata always (every Firecrawl document has it), raw HTML for `scrape` actions. */
function jobFormats(options: ScrapeOptions): FormatName[] {
  const names = new Set<FormatName>(['metadata', ...options.formats.flatMap((f) => JOB_FORMAT[f] ?? [])]);
  // Scrape actions show the page's HTML; images and attributes are read from it.
  const fromHtml = options.formats.includes('images') || options.formats.includes('attributes');
  if (options.actionOutputs.scrapes > 0 || fromHtml) names.add('raw_html');
  return FORMAT_ORDER.filter((name) => names.has(name));
}

/**
 * Firecrawl renders every page: here each page is fetched plainly first and rendered when it needs
 * it (docs/api.md §23); `waitFor`, actions, screenshots and `mobile` render always.
 */
function renderConfig(options: ScrapeOptions): RenderConfig {
  const screenshot = options.formats.includes('screenshot') || options.actionOutputs.screenshots > 0;
  const always = screenshot || options.renderActions.length > 0 || options.mobile;
  return {
    enabled: true,
    mode: always ? 'always' : 'auto',
    wait_strategy: 'load',
    wait_timeout_ms: Math.min(options.timeout, MAX_RENDER_WAIT_MS),
    actions: options.renderActions,
    screenshot,
    screenshot_options: screenshot ? options.screenshot : null,
    block_resources: null,
  };
}

function requestSettings(fetch: FetchSettings): CreateJobInput['request'] {
  const { headers, cookies, basicAuth, authorization, userAgent, skipTlsVerification } = fetch;
  const none =
    Object.keys(headers).length === 0 && cookies.length === 0 && basicAuth === null && authorization === null;
  if (none && userAgent === null && !skipTlsVerification) return null;
  return {
    headers,
    cookies,
    basic_auth: basicAuth,
    authorization,
    user_agent: userAgent,
    skip_tls_verification: skipTlsVerification,
  };
}

const proxyConfig = (fetch: FetchSettings): CreateJobInput['proxy_config'] =>
  fetch.country === null
    ? null
    : { enabled: true, rotation_strategy: 'round_robin', geo_targeting: fetch.country };

/** A job fetching `source` with Firecrawl's scrape options; `crawl` null (exactly its source). */
function pageJob(name: string, source: string, options: ScrapeOptions): CreateJobInput {
  return {
    name,
    source: escapeGlob(source),
    queries: [],
    formats: jobFormats(options),
    content: {
      only_main_content: options.onlyMainContent,
      include_tags: options.includeTags,
      exclude_tags: options.excludeTags,
    },
    rate_limit: UNLIMITED_RATE,
    scheduling: null,
    render_config: renderConfig(options),
    proxy_config: proxyConfig(options.fetch),
    crawl: null,
    change_tracking: null,
    request: requestSettings(options.fetch),
    retention_days: null,
    // Run once and deleted when it expires: there is no next run that validators would spare.
    refetch: 'always',
    extract: options.json,
  };
}

/** POST /scrape: the job of one page, and how long the answer may wait for it. */
export function scrapeJob(request: ScrapeRequest): { job: CreateJobInput; timeoutMs: number } {
  return { job: pageJob(jobName('scrape', request.url), request.url, request), timeoutMs: request.timeout };
}

/** POST /crawl: a crawl job following every link, as Firecrawl's options bound it. */
export function crawlJob(request: CrawlRequest): { job: CreateJobInput; webhook: Webhook | null } {
  const job = pageJob(jobName('crawl', request.url), request.url, request.scrapeOptions);
  return {
    job: {
      ...job,
      rate_limit: request.delay === null ? UNLIMITED_RATE : Math.min(UNLIMITED_RATE, 60 / request.delay),
      crawl: {
        follow: [...FOLLOW_LINKS],
        // Sitemap-only: the sitemap's URLs join at depth 0, and no link is followed from them.
        max_depth: request.sitemap === 'only' ? 0 : request.maxDiscoveryDepth,
        max_pages: request.limit,
        // The host guard among `exclude` bounds hosts, so the seed's redirects (http → https, www) keep its links.
        same_origin: false,
        include: request.include,
        exclude: request.exclude,
        respect_robots_txt: !request.ignoreRobotsTxt,
        sitemap: request.sitemap !== 'skip',
      },
    },
    webhook: request.webhook,
  };
}

/**
 * POST /batch/scrape: the job of the first URL (the run fetches every one of `urls`, which the
 * caller seeds), the URLs, the invalid ones to report, and the webhook.
 */
export function batchScrapeJob(request: BatchScrapeRequest): {
  job: CreateJobInput;
  urls: string[];
  invalidURLs: string[];
  webhook: Webhook | null;
} {
  const first = request.urls[0] ?? '';
  return {
    job: pageJob(jobName('batch scrape', first), first, request),
    urls: request.urls,
    invalidURLs: request.invalidURLs,
    webhook: request.webhook,
  };
}

/**
 * A search's scrape (docs/api.md §25): one batch of the results' URLs, robots.txt respected (a
 * crawl that follows nothing), with the search's scrape options.
 */
export function searchScrapeJob(urls: readonly string[], options: ScrapeOptions): CreateJobInput {
  const first = urls[0] ?? '';
  const job = pageJob(jobName('search scrape', first), first, options);
  return {
    ...job,
    crawl: {
      follow: [...FOLLOW_LINKS],
      max_depth: 0,
      max_pages: Math.max(1, urls.length),
      same_origin: false,
      include: [],
      exclude: [],
      respect_robots_txt: true,
      sitemap: false,
    },
  };
}

const MAP_OPTIONS: ScrapeOptions = {
  formats: [],
  json: null,
  modelFormatsAt: [],
  changeTracking: null,
  actionOutputs: { screenshots: 0, scrapes: 0, scripts: 0 },
  attributes: [],
  cache: { maxAge: 0, store: false },
  onlyMainContent: true,
  includeTags: [],
  excludeTags: [],
  timeout: DEFAULT_MAP_TIMEOUT_MS,
  renderActions: [],
  screenshot: null,
  mobile: false,
  fetch: {
    headers: {},
    cookies: [],
    basicAuth: null,
    authorization: null,
    userAgent: null,
    country: null,
    skipTlsVerification: false,
  },
  warnings: [],
};

/**
 * POST /map: a shallow crawl (the seed's links, the sitemap's URLs), fetching up to
 * MAP_FETCHED_PAGES pages for their titles. Every URL of the run is a link of the answer,
 * fetched or not; the caller ranks them by `search` and cuts them at `limit`.
 */
export function mapJob(request: MapRequest): {
  job: CreateJobInput;
  search: string | null;
  limit: number;
  timeoutMs: number;
  includeSubdomains: boolean;
  ignoreQueryParameters: boolean;
} {
  const job = pageJob(jobName('map', request.url), request.url, { ...MAP_OPTIONS, fetch: request.fetch });
  return {
    job: {
      ...job,
      content: null,
      // A map lists links; the plain pages have them (Firecrawl's map does not render either).
      render_config: null,
      crawl: {
        follow: [...FOLLOW_LINKS],
        max_depth: request.sitemap === 'only' ? 0 : 1,
        max_pages: Math.min(request.limit, MAP_FETCHED_PAGES),
        same_origin: false,
        include: request.include,
        exclude: request.exclude,
        respect_robots_txt: !request.ignoreRobotsTxt,
        sitemap: request.sitemap !== 'skip',
      },
    },
    search: request.search,
    limit: request.limit,
    timeoutMs: request.timeout ?? DEFAULT_MAP_TIMEOUT_MS,
    includeSubdomains: request.includeSubdomains,
    ignoreQueryParameters: request.ignoreQueryParameters,
  };
}
