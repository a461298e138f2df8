import type { LookupFunction } from 'node:net';
import puppeteer, { type Browser, type LaunchOptions, type Page } from 'puppeteer';
import { Cluster } from 'puppeteer-cluster';
import { addressPolicy } from '../fetch/address.ts';
import { isolatedContexts } from './contexts.ts';
import { abortReason, RenderError } from './errors.ts';
import { type PageJob, type RenderedPage, type RenderRequest, renderInPage } from './page-render.ts';
import { type ProxyLease, SafetyProxy } from './proxy.ts';
import { parseUpstream } from './upstream.ts';

export interface RendererOptions {
  /** Pages rendered at once (BROWSER_CONCURRENCY, default 2). */
  concurrency: number;
  /** CHROMIUM_PATH, default /usr/bin/chromium. */
  executablePath: string;
  /** ALLOW_PRIVATE_NETWORK_TARGETS: loopback and private ranges become reachable. */
  allowPrivate: boolean;
  /** Test hook: decides instead of the private-range rule (metadata addresses stay blocked). */
  isAllowedAddress?: (ip: string, port: number) => boolean;
  /** Test hook: resolves host names for the safety proxy (e.g. a name mapped to 127.0.0.1). */
  lookup?: LookupFunction;
}

// From NOTES.md: without the background-networking flags Chromium keeps calling home.
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
  // WebRTC may otherwise send UDP straight to any address, past the proxy. (Chromium 156 reads
  // this name; the older --force-webrtc-ip-handling-policy is silently ignored.)
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  // Nothing is resolved inside Chromium: every name goes to the safety proxy as it is.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

/** The cluster's own limit per job, a backstop above the render's deadline (120 s + grace). */
const TASK_BACKSTOP_MS = 150_000;
/** A render whose browser crashes under it runs once more on the restarted browser. */
const CRASH_ATTEMPTS = 2;

/**
 * Launches Chromium for the cluster, first and after crashes (its repair). Counts launches, so
 * restarts show in stats(), and owns every browser it launched: once closed it launches none,
 * and closes any that a repair still in progress brings up, so no Chromium outlives the renderer.
 */
class CountingLauncher {
  launches = 0;
  readonly #browsers = new Set<Browser>();
  #closed = false;

  async launch(options: LaunchOptions): Promise<Browser> {
    if (this.#closed) throw new Error('the renderer is closed');
    const browser = await puppeteer.launch(options);
    this.launches += 1;
    this.#browsers.add(browser);
    browser.once('disconnected', () => this.#browsers.delete(browser));
    if (this.#closed) {
      await browser.close().catch(() => {});
      throw new Error('the renderer is closed');
    }
    return browser;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#browsers].map((browser) => browser.close().catch(() => {})));
  }
}

interface Parts {
  cluster: Cluster<PageJob, RenderedPage>;
  proxy: SafetyProxy;
  launcher: CountingLauncher;
  leases: WeakMap<Page, ProxyLease>;
  concurrency: number;
}

/** Renders pages in Chromium; every request a page makes passes the outbound-safety proxy. */
export class Renderer {
  readonly #parts: Parts;
  readonly #pending = new Set<(err: Error) => void>();
  #busy = 0;
  #closed = false;

  private constructor(parts: Parts) {
    this.#parts = parts;
  }

  /** Starts the safety proxy and one Chromium with `concurrency` isolated contexts. */
  static async start(opts: RendererOptions): Promise<Renderer> {
    const proxy = await SafetyProxy.start(
      addressPolicy(opts.allowPrivate, opts.isAllowedAddress),
      opts.lookup,
    );
    const leases = new WeakMap<Page, ProxyLease>();
    const launcher = new CountingLauncher();
    try {
      const cluster: Cluster<PageJob, RenderedPage> = await Cluster.launch({
        concurrency: isolatedContexts(proxy, leases),
        maxConcurrency: opts.concurrency,
        puppeteer: launcher,
        puppeteerOptions: {
          executablePath: opts.executablePath,
          headless: true,
          // No DevTools port on loopback for a page to reach.
          pipe: true,
          // The default context, unused, gets a proxy that refuses everything.
          args: [...CHROMIUM_FLAGS, `--proxy-server=${proxy.sinkServer}`, '--proxy-bypass-list=<-loopback>'],
        },
        timeout: TASK_BACKSTOP_MS,
        retryLimit: 0,
      });
      return new Renderer({ cluster, proxy, launcher, leases, concurrency: opts.concurrency });
    } catch (err) {
      await proxy.close();
      throw new RenderError('RENDER_ERROR', `Chromium did not start: ${(err as Error).message}`, {
        retryable: false,
        cause: err,
      });
    }
  }

  /**
   * Loads `req.url` with the job's headers, cookies and credentials, waits by `req.waitStrategy`,
   * runs the actions and returns the DOM serialised as HTML, with a screenshot when asked.
   */
  async render(req: RenderRequest): Promise<RenderedPage> {
    validate(req);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#attempt(req);
      } catch (err) {
        const again =
          err instanceof RenderError && err.browserCrashed && attempt < CRASH_ATTEMPTS && !this.#closed;
        if (!again || req.signal?.aborted) throw err;
      }
    }
  }

  stats(): { busy: number; concurrency: number; restarts: number } {
    const { concurrency, launcher } = this.#parts;
    return { busy: this.#busy, concurrency, restarts: Math.max(0, launcher.launches - 1) };
  }

  /** Stops Chromium and the proxy; renders still waiting fail with a retryable RENDER_ERROR. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closed = new RenderError('RENDER_ERROR', 'The renderer was closed.', { retryable: true });
    for (const fail of this.#pending) fail(closed);
    await this.#parts.cluster.close().catch(() => {});
    await this.#parts.launcher.close();
    await this.#parts.proxy.close();
  }

  #attempt(req: RenderRequest): Promise<RenderedPage> {
    if (this.#closed) throw new RenderError('RENDER_ERROR', 'The renderer was closed.', { retryable: true });
    const { signal } = req;
    if (signal?.aborted) throw abortReason(signal);
    const job: PageJob = { req, aborted: false, page: null };
    return new Promise((resolve, reject) => {
      const settle = () => {
        this.#pending.delete(fail);
        signal?.removeEventListener('abort', onAbort);
      };
      const fail = (err: Error) => {
        settle();
        reject(err);
      };
      // The caller is answered at once; the page closes in the background.
      const onAbort = () => {
        job.aborted = true;
        void job.page?.close().catch(() => {});
        if (signal) fail(abortReason(signal));
      };
      this.#pending.add(fail);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#parts.cluster.execute(job, this.#task).then(
        (page) => {
          settle();
          resolve(page);
        },
        (err: unknown) => fail(asRenderError(err)),
      );
    });
  }

  readonly #task = async ({ page, data: job }: { page: Page; data: PageJob }): Promise<RenderedPage> => {
    if (job.aborted && job.req.signal) throw abortReason(job.req.signal);
    const lease = this.#parts.leases.get(page);
    if (!lease) throw new RenderError('RENDER_ERROR', 'The page has no proxy lease.', { retryable: true });
    job.page = page;
    this.#busy += 1;
    try {
      return await renderInPage(page, lease, job, this.#parts.proxy.mark);
    } finally {
      this.#busy -= 1;
      job.page = null;
    }
  };
}

function validate(req: RenderRequest): void {
  const url = URL.parse(req.url);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new RenderError('RENDER_ERROR', 'Only absolute http and https URLs can be rendered.', {
      retryable: false,
    });
  }
  if (req.proxyUrl) parseUpstream(req.proxyUrl);
}

function asRenderError(err: unknown): Error {
  if (err instanceof RenderError || (err as Error).name === 'AbortError') return err as Error;
  const message = (err as Error).message ?? String(err);
  if (message.startsWith('Timeout hit')) {
    return new RenderError('TIMEOUT', 'The render exceeded its time limit.', { retryable: true, cause: err });
  }
  return new RenderError('RENDER_ERROR', message, { retryable: true, cause: err });
}
