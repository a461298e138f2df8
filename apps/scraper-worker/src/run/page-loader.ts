import type { LookupFunction } from 'node:net';
import type { ProxyEntry } from '@scrapejobs/config';
import type { ProxyConfig, RenderConfig } from '@scrapejobs/contracts';
import { originOf } from '@scrapejobs/crawl';
import { openRequest, type RunSettings, seedUrls } from '@scrapejobs/domain';
import type { SecretBox } from '@scrapejobs/outbound';
import type { PageContent } from '../extract/extractor.ts';
import {
  ConnectionPool,
  createProxyPicker,
  FetchError,
  type FetchedPage,
  fetchPage,
  type ProxyPicker,
  type RequestPace,
  type Validators,
} from '../fetch/index.ts';
import type { Renderer, RenderRequest } from '../render/index.ts';
import type { OutgoingRequest } from '../request/outgoing.ts';

export interface PageLoaderDeps {
  /** Started on first use, only by processes that get a rendering job. */
  renderer: () => Promise<Renderer>;
  proxies: readonly ProxyEntry[];
  allowPrivate: boolean;
  /** DNS override, for tests that map names to loopback. */
  lookup?: LookupFunction;
  /** SCRAPER_USER_AGENT: sent on every fetch and render. */
  userAgent: string;
}

/** A page as it arrived, with the URL it ended at after redirects (its links resolve against it). */
export interface LoadedPage {
  content: PageContent;
  url: string;
  status: number | null;
  /** A full-page PNG, when the job asks for one (render_config.screenshot). */
  screenshot?: Buffer | null;
  /** Why the screenshot asked for was not kept (over 10 MiB, or the capture failed). */
  screenshotError?: string | null;
  /** A fetched page's ETag and Last-Modified (docs/api.md §20); a rendered page has none. */
  validators?: Validators;
  /** The values of the render's execute_javascript steps, kept with the document. */
  scriptReturns?: { type: string; value: unknown }[];
}

/** Whether a page was rendered in Chromium, and why (docs/api.md §23): its URL log says so. */
export interface RenderNote {
  rendered: boolean;
  reason: string | null;
}

/** What a job says about getting its pages. */
export interface PageSettings {
  jobId: string;
  renderConfig: RenderConfig | null;
  /** render_config.block_resources as it applies: given, or true for a job that keeps records only. */
  blockResources: boolean;
  proxyConfig: ProxyConfig | null;
  /** The job's headers, cookies, credentials and user agent, opened. */
  request: OutgoingRequest | null;
}

/**
 * How one run gets its pages on this worker, set up once for the run's work here: the job's
 * request settings opened, its proxies, its kept-alive connections (closed when the work leaves).
 */
export class RunFetching {
  readonly #deps: PageLoaderDeps & { box: SecretBox };
  readonly #jobId: string;
  readonly #settings: RunSettings;
  readonly #connections = new ConnectionPool();
  #loader: Promise<PageLoader> | null = null;
  #renderLoader: Promise<PageLoader> | null = null;
  /** Gets robots.txt and sitemaps, with the job's proxies (one picker, so rotation carries on). */
  #fetcher: ReturnType<typeof fetcherFor> | null = null;
  #request: OutgoingRequest | null = null;

  constructor(deps: PageLoaderDeps & { box: SecretBox }, jobId: string, settings: RunSettings) {
    this.#deps = deps;
    this.#jobId = jobId;
    this.#settings = settings;
  }

  /** The job's way of getting pages, made once; a failure to make it (no browser) fails the URL and is tried again. */
  pageLoader(): Promise<PageLoader> {
    if (!this.#loader) {
      this.#loader = pageLoaderFor(this.#deps, this.#pageSettings(), this.#connections);
      this.#loader.catch(() => {
        this.#loader = null;
      });
    }
    return this.#loader;
  }

  /** Renders a page of a job with render_config.mode `auto` (docs/api.md §23); made once, like pageLoader. */
  renderLoader(): Promise<PageLoader> {
    const settings = this.#pageSettings();
    if (!settings.renderConfig) throw new Error('the job does not render');
    if (!this.#renderLoader) {
      this.#renderLoader = renderLoaderFor(this.#deps, settings, settings.renderConfig);
      this.#renderLoader.catch(() => {
        this.#renderLoader = null;
      });
    }
    return this.#renderLoader;
  }

  /** Fetches robots.txt or a sitemap: guarded, with the job's proxies, paced as the run's pages. */
  fetch(url: string, signal: AbortSignal, pace: RequestPace): Promise<FetchedPage> {
    const settings = this.#pageSettings();
    this.#fetcher ??= fetcherFor(
      this.#deps,
      proxyPickerFor(settings, this.#deps.proxies),
      settings.request,
      this.#connections,
    );
    return this.#fetcher(url, signal, pace);
  }

  /**
   * Whether a page's request may carry the validators of its last fetch (docs/api.md §20): not
   * when the job's own headers set If-None-Match or If-Modified-Since.
   */
  sendsValidators(): boolean {
    const headers = Object.keys(this.#outgoing()?.headers ?? {}).map((name) => name.toLowerCase());
    return !headers.includes('if-none-match') && !headers.includes('if-modified-since');
  }

  /**
   * How an interact session opens `url` for this job (docs/api.md §18): with the job's headers,
   * cookies, credentials and user agent, its first proxy, and its render wait strategy.
   */
  sessionRequest(url: string): RenderRequest {
    const settings = this.#pageSettings();
    const render = settings.renderConfig;
    const request = settings.request;
    return {
      url,
      waitStrategy: render?.wait_strategy ?? 'load',
      waitTimeoutMs: render?.wait_timeout_ms ?? 0,
      proxyUrl: proxyPickerFor(settings, this.#deps.proxies)?.pick(0)?.url ?? null,
      userAgent: this.#deps.userAgent,
      ...(request && { request }),
    };
  }

  /** Closes the run's connections here. */
  close(): void {
    this.#connections.close();
  }

  #pageSettings(): PageSettings {
    const { renderConfig, formats, extract } = this.#settings;
    return {
      jobId: this.#jobId,
      renderConfig,
      blockResources: renderConfig?.block_resources ?? (formats.length === 0 && extract === null),
      proxyConfig: this.#settings.proxyConfig,
      request: this.#outgoing(),
    };
  }

  /** The job's request settings opened, once per run here; throws when its key is not configured (the run halts). */
  #outgoing(): OutgoingRequest | null {
    const stored = this.#settings.request;
    if (!stored) return null;
    if (!this.#request) {
      const opened = openRequest(this.#deps.box, this.#jobId, stored);
      this.#request = {
        headers: opened.headers,
        cookies: opened.cookies,
        basicAuth: opened.basic_auth,
        authorization: opened.authorization,
        authOrigins: [...new Set(seedUrls(this.#settings).map(originOf))],
        userAgent: opened.user_agent,
        skipTlsVerification: opened.skip_tls_verification,
      };
    }
    return this.#request;
  }
}

/**
 * Gets one page as it arrived, every request paced by `pace` (the job's rate limit, the host's
 * places); a fetch with `conditional` may resolve a 304 with an empty body.
 */
export type PageLoader = (
  url: string,
  signal: AbortSignal,
  pace: RequestPace,
  conditional?: Validators,
) => Promise<LoadedPage>;

/**
 * A job's way of getting pages: fetched, or rendered in Chromium when render_config renders every
 * page (`auto` fetches first: renderLoader renders), through the job's proxies when it uses them.
 * Throws FetchError or RenderError.
 */
export async function pageLoaderFor(
  deps: PageLoaderDeps,
  settings: PageSettings,
  connections: ConnectionPool,
): Promise<PageLoader> {
  const render = settings.renderConfig;
  if (render?.enabled && render.mode === 'always') return renderLoaderFor(deps, settings, render);
  const fetcher = fetcherFor(deps, proxyPickerFor(settings, deps.proxies), settings.request, connections);
  return async (url, signal, pace, conditional) => {
    const page = await fetcher(url, signal, pace, conditional);
    return {
      content: { body: page.body, contentType: page.contentType },
      url: page.url,
      status: page.status,
      validators: { etag: header(page.headers.etag), lastModified: header(page.headers['last-modified']) },
    };
  };
}

/** Renders a job's pages in Chromium, through the job's proxies when it uses them. */
async function renderLoaderFor(
  deps: PageLoaderDeps,
  settings: PageSettings,
  render: RenderConfig,
): Promise<PageLoader> {
  const picker = proxyPickerFor(settings, deps.proxies);
  const renderer = await deps.renderer();
  const how = { render, blockResources: settings.blockResources, jobId: settings.jobId };
  return (url, signal, pace) =>
    renderPage(renderer, how, picker, deps.userAgent, settings.request, url, signal, pace);
}

/** Fetches a URL with a job's proxies and request settings, guarded (robots.txt and sitemaps too). */
export function fetcherFor(
  deps: PageLoaderDeps,
  picker: ProxyPicker | null,
  request: OutgoingRequest | null,
  connections: ConnectionPool,
) {
  return (
    url: string,
    signal: AbortSignal,
    pace: RequestPace,
    conditional?: Validators,
  ): Promise<FetchedPage> =>
    fetchPage(url, {
      allowPrivate: deps.allowPrivate,
      signal,
      ...pace,
      ...(conditional && { conditional }),
      userAgent: deps.userAgent,
      connections,
      ...(request && { request }),
      ...(picker && { proxy: picker }),
      ...(deps.lookup && { lookup: deps.lookup }),
    });
}

/** A header's one value (the first when repeated), or null. */
function header(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

export function proxyPickerFor(settings: PageSettings, proxies: readonly ProxyEntry[]): ProxyPicker | null {
  const config = settings.proxyConfig;
  if (!config?.enabled) return null;
  return createProxyPicker([...proxies], config.rotation_strategy, config.geo_targeting, settings.jobId);
}

/**
 * A proxy that fails a render is reported and the render tried once more on another. The host's
 * place is held for the whole render (its document and whatever else it loads from the host); a
 * 429 or 503 of the document is retried after the host's pause like a fetch's.
 */
async function renderPage(
  renderer: Renderer,
  { render, blockResources, jobId }: { render: RenderConfig; blockResources: boolean; jobId: string },
  picker: ProxyPicker | null,
  userAgent: string,
  request: OutgoingRequest | null,
  url: string,
  signal: AbortSignal,
  pace: RequestPace,
): Promise<LoadedPage> {
  let throttles = 0;
  for (let proxyFailures = 0; ; ) {
    const answered = (await pace.beforeAttempt?.(new URL(url))) ?? undefined;
    const proxyUrl = picker?.pick(proxyFailures)?.url ?? null;
    let status: number | null = null;
    try {
      const page = await renderer.render({
        url,
        waitStrategy: render.wait_strategy,
        waitTimeoutMs: render.wait_timeout_ms,
        signal,
        proxyUrl,
        userAgent,
        ...(request && { request }),
        actions: render.actions,
        screenshot: render.screenshot,
        screenshotOptions: render.screenshot_options,
        blockResources,
        // A job's pages may share a context and page; a job is one user's (docs/api.md §23).
        isolationKey: jobId,
      });
      status = page.status;
      if (status === 429 || status === 503) {
        if (pace.throttleRetries !== undefined && throttles < pace.throttleRetries) {
          throttles++;
          continue;
        }
      }
      if (status !== null && status >= 400)
        throw new FetchError('HTTP_ERROR', `HTTP ${status}`, { url, status, retryable: false });
      return {
        content: { html: page.html },
        url: page.url,
        status,
        screenshot: page.screenshot,
        screenshotError: page.screenshotError,
        ...(page.scriptReturns && { scriptReturns: page.scriptReturns }),
      };
    } catch (err) {
      if (!((err as { code?: unknown }).code === 'PROXY_ERROR' && proxyUrl && proxyFailures === 0)) throw err;
      picker?.reportFailure(proxyUrl);
      proxyFailures++;
    } finally {
      answered?.({ status });
    }
  }
}
