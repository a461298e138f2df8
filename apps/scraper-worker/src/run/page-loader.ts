import type { LookupFunction } from 'node:net';
import type { ProxyEntry } from '@scrapejobs/config';
import type { ProxyConfig, RenderConfig } from '@scrapejobs/contracts';
import type { PageContent } from '../extract/extractor.ts';
import { createProxyPicker, FetchError, fetchPage, type ProxyPicker } from '../fetch/index.ts';
import type { Renderer } from '../render/index.ts';

export interface PageLoaderDeps {
  /** Started on first use, only by processes that get a rendering job. */
  renderer: () => Promise<Renderer>;
  proxies: readonly ProxyEntry[];
  allowPrivate: boolean;
  /** DNS override, for tests that map names to loopback. */
  lookup?: LookupFunction;
}

/** What a job says about getting its pages. */
export interface PageSettings {
  jobId: string;
  renderConfig: RenderConfig | null;
  proxyConfig: ProxyConfig | null;
}

/** Gets one page as it arrived; `beforeAttempt` runs before every request (the job's rate limit). */
export type PageLoader = (
  url: string,
  signal: AbortSignal,
  beforeAttempt: () => Promise<void>,
) => Promise<PageContent>;

/**
 * A job's way of getting pages: fetched, or rendered in Chromium when render_config is enabled,
 * through the job's proxies when it uses them. Throws FetchError or RenderError.
 */
export async function pageLoaderFor(deps: PageLoaderDeps, settings: PageSettings): Promise<PageLoader> {
  const picker = proxyPickerFor(settings, deps.proxies);
  const render = settings.renderConfig?.enabled ? settings.renderConfig : null;
  if (render) {
    const renderer = await deps.renderer();
    return (url, signal, beforeAttempt) => renderPage(renderer, render, picker, url, signal, beforeAttempt);
  }
  return async (url, signal, beforeAttempt) => {
    const page = await fetchPage(url, {
      allowPrivate: deps.allowPrivate,
      signal,
      beforeAttempt,
      ...(picker && { proxy: picker }),
      ...(deps.lookup && { lookup: deps.lookup }),
    });
    return { body: page.body, contentType: page.contentType };
  };
}

function proxyPickerFor(settings: PageSettings, proxies: readonly ProxyEntry[]): ProxyPicker | null {
  const config = settings.proxyConfig;
  if (!config?.enabled) return null;
  return createProxyPicker([...proxies], config.rotation_strategy, config.geo_targeting, settings.jobId);
}

/** A proxy that fails a render is reported and the render tried once more on another. */
async function renderPage(
  renderer: Renderer,
  render: RenderConfig,
  picker: ProxyPicker | null,
  url: string,
  signal: AbortSignal,
  beforeAttempt: () => Promise<void>,
): Promise<PageContent> {
  for (let attempt = 0; ; attempt++) {
    await beforeAttempt();
    const proxyUrl = picker?.pick(attempt)?.url ?? null;
    try {
      const page = await renderer.render({
        url,
        waitStrategy: render.wait_strategy,
        waitTimeoutMs: render.wait_timeout_ms,
        signal,
        proxyUrl,
      });
      if (page.status !== null && page.status >= 400)
        throw new FetchError('HTTP_ERROR', `HTTP ${page.status}`, {
          url,
          status: page.status,
          retryable: false,
        });
      return { html: page.html };
    } catch (err) {
      if (!((err as { code?: unknown }).code === 'PROXY_ERROR' && proxyUrl && attempt === 0)) throw err;
      picker?.reportFailure(proxyUrl);
    }
  }
}
