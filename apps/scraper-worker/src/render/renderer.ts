import type { LookupFunction } from 'node:net';
import { addressPolicy } from '../fetch/address.ts';
import { abortReason, RenderError } from './errors.ts';
import { type PageJob, type RenderedPage, type RenderRequest, renderInPage } from './page-render.ts';
import { PagePool } from './pool.ts';
import { SafetyProxy } from './proxy.ts';
import { loadSessionPage, type SessionPage } from './session-page.ts';
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
/** How the renderer runs Chromium, less what concerns its proxy and its kept pages (the render bench's Crawlee side uses these too). */
export const CHROMIUM_BASE_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

/** puppeteer's `headless` for the Chromium at `path`: the headless shell is headless only; the full browser runs its own headless mode. */
export const headlessMode = (path: string) => (/headless[-_]shell/.test(path) ? 'shell' : true);

const CHROMIUM_FLAGS = [
  ...CHROMIUM_BASE_FLAGS,
  // A page kept for a job's next render would otherwise keep the page it leaves alive in memory.
  '--disable-features=BackForwardCache',
  // WebRTC may otherwise send UDP straight to any address, past the proxy. (The full Chromium 156
  // reads the first name and ignores the second; its headless shell reads only the second.)
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  // Nothing is resolved inside Chromium: every name goes to the safety proxy as it is.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

/** A render whose browser crashes under it runs once more on the restarted browser. */
const CRASH_ATTEMPTS = 2;

interface Parts {
  pool: PagePool;
  proxy: SafetyProxy;
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
    const pool = new PagePool(
      {
        executablePath: opts.executablePath,
        headless: headlessMode(opts.executablePath),
        // No DevTools port on loopback for a page to reach.
        pipe: true,
        // The default context, unused, gets a proxy that refuses everything.
        args: [...CHROMIUM_FLAGS, `--proxy-server=${proxy.sinkServer}`, '--proxy-bypass-list=<-loopback>'],
      },
      proxy,
      opts.concurrency,
    );
    try {
      await pool.start();
      return new Renderer({ pool, proxy, concurrency: opts.concurrency });
    } catch (err) {
      await pool.close(new RenderError('RENDER_ERROR', 'Chromium did not start.', { retryable: true }));
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

  /**
   * Opens `req.url` with the job's headers, cookies, credentials, user agent and proxy in a page of
   * its own, for an interact session (docs/api.md §18); the session's owner closes it. Throws
   * RenderError as a render does when the page cannot be opened.
   */
  async openSession(req: RenderRequest): Promise<SessionPage> {
    validate(req);
    if (this.#closed) throw new RenderError('RENDER_ERROR', 'The renderer was closed.', { retryable: true });
    const { pool, proxy } = this.#parts;
    const slot = await pool.openSession();
    try {
      await loadSessionPage(slot.page, slot.lease, req, proxy.mark);
    } catch (err) {
      pool.closeSession(slot);
      throw asRenderError(err);
    }
    return { page: slot.page, close: () => pool.closeSession(slot) };
  }

  stats(): { busy: number; concurrency: number; restarts: number } {
    const { concurrency, pool } = this.#parts;
    return { busy: this.#busy, concurrency, restarts: Math.max(0, pool.launches - 1) };
  }

  /** Stops Chromium and the proxy; renders still waiting fail with a retryable RENDER_ERROR. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closed = new RenderError('RENDER_ERROR', 'The renderer was closed.', { retryable: true });
    for (const fail of this.#pending) fail(closed);
    await this.#parts.pool.close(closed);
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
      this.#run(job).then(
        (page) => {
          settle();
          resolve(page);
        },
        (err: unknown) => fail(asRenderError(err)),
      );
    });
  }

  async #run(job: PageJob): Promise<RenderedPage> {
    const slot = await this.#parts.pool.acquire(slotKey(job.req));
    let reusable = false;
    try {
      if (job.aborted && job.req.signal) throw abortReason(job.req.signal);
      job.page = slot.page;
      this.#busy += 1;
      try {
        const page = await renderInPage(slot.page, slot.lease, job, this.#parts.proxy.mark);
        reusable = true;
        return page;
      } finally {
        this.#busy -= 1;
        job.page = null;
      }
    } finally {
      this.#parts.pool.giveBack(slot, reusable);
    }
  }
}

/**
 * The renders that may share a context and page: those of one isolation key (a job, so one user)
 * with the same settings of the page, the context (proxy, certificates) and the request.
 */
function slotKey(req: RenderRequest): string | null {
  if (!req.isolationKey) return null;
  return JSON.stringify([
    req.isolationKey,
    req.proxyUrl ?? null,
    req.userAgent ?? null,
    req.request ?? null,
    req.screenshot === true,
    req.screenshotOptions ?? null,
    req.blockResources === true,
  ]);
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
  return new RenderError('RENDER_ERROR', message, { retryable: true, cause: err });
}
