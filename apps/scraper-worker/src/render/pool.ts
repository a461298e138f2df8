import puppeteer, { type Browser, type BrowserContext, type LaunchOptions, type Page } from 'puppeteer';
import { RenderError } from './errors.ts';
import type { ProxyLease, SafetyProxy } from './proxy.ts';
import { installSettleTracker } from './settle.ts';

/**
 * One browser context with its one page and its own listener of the safety proxy. A slot with a
 * key is kept after a render for the next render of the same key (docs/api.md §23: contexts and
 * pages reused within a user's isolation); one without is closed after its render.
 */
export interface Slot {
  readonly key: string | null;
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
  readonly lease: ProxyLease;
  uses: number;
  idleSince?: number;
  idleTimer?: NodeJS.Timeout;
}

/** A kept page is closed after this many renders: whatever a site's scripts leave behind is bounded. */
const MAX_USES = 100;
/** A kept page unused for this long is closed. */
const IDLE_MS = 30_000;

/**
 * Chromium, launched at the first render and again after a crash (at the next render), `concurrency`
 * slots in use at most, and the idle slots of each key. Every browser it launched is closed by
 * close(), also one that a launch still in progress brings up.
 */
export class PagePool {
  launches = 0;
  readonly #launchOptions: LaunchOptions;
  readonly #proxy: SafetyProxy;
  readonly #concurrency: number;
  readonly #browsers = new Set<Browser>();
  readonly #idle = new Map<string, Slot[]>();
  readonly #waiting: { resolve: () => void; reject: (err: Error) => void }[] = [];
  #browser: Browser | null = null;
  #launching: Promise<Browser> | null = null;
  #inUse = 0;
  #idleCount = 0;
  #closed = false;

  constructor(launchOptions: LaunchOptions, proxy: SafetyProxy, concurrency: number) {
    this.#launchOptions = launchOptions;
    this.#proxy = proxy;
    this.#concurrency = concurrency;
  }

  /** Starts Chromium now (the renderer's start fails when it cannot). */
  async start(): Promise<void> {
    await this.#currentBrowser();
  }

  /**
   * A slot for a render of `key` (null: a fresh one, never kept), once fewer than `concurrency`
   * are in use: an idle slot of the same key on the running browser, else a new context and page.
   */
  async acquire(key: string | null): Promise<Slot> {
    await this.#permit();
    try {
      const browser = await this.#currentBrowser();
      const kept = key === null ? undefined : this.#takeIdle(key, browser);
      return kept ?? (await this.#create(key, browser));
    } catch (err) {
      this.#release();
      throw err;
    }
  }

  /**
   * A context and page of their own for an interact session, on the running browser, outside the
   * `concurrency` slots (sessions have a bound of their own); closed by closeSession().
   */
  async openSession(): Promise<Slot> {
    if (this.#closed) throw closedError();
    return this.#create(null, await this.#currentBrowser());
  }

  /** Closes a session's context and page. */
  closeSession(slot: Slot): void {
    this.#discard(slot);
  }

  /** Gives a slot back: kept for its key when `reusable`, else closed. */
  giveBack(slot: Slot, reusable: boolean): void {
    this.#release();
    slot.uses += 1;
    const keep =
      reusable &&
      slot.key !== null &&
      !this.#closed &&
      slot.browser === this.#browser &&
      slot.browser.connected &&
      !slot.page.isClosed() &&
      slot.uses < MAX_USES;
    if (!keep || slot.key === null) return void this.#discard(slot);
    // No more slots idle than can run at once: the oldest idle one makes room.
    if (this.#idleCount >= this.#concurrency) this.#evictOldest();
    const list = this.#idle.get(slot.key) ?? [];
    list.push(slot);
    this.#idle.set(slot.key, list);
    this.#idleCount += 1;
    slot.idleSince = performance.now();
    slot.idleTimer = setTimeout(() => this.#dropIdle(slot), IDLE_MS);
    slot.idleTimer.unref();
  }

  /** Fails every render waiting for a slot with `err` and closes every browser. */
  async close(err: Error): Promise<void> {
    this.#closed = true;
    for (const waiter of this.#waiting.splice(0)) waiter.reject(err);
    for (const list of this.#idle.values()) for (const slot of list) clearTimeout(slot.idleTimer);
    this.#idle.clear();
    this.#idleCount = 0;
    await this.#launching?.catch(() => {});
    await Promise.all([...this.#browsers].map((browser) => browser.close().catch(() => {})));
  }

  #permit(): Promise<void> {
    if (this.#closed) return Promise.reject(closedError());
    if (this.#inUse < this.#concurrency) {
      this.#inUse += 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  #release(): void {
    const next = this.#waiting.shift();
    // The place passes straight to the next waiter.
    if (next) next.resolve();
    else this.#inUse -= 1;
  }

  /** The running browser, launched once for every render that finds none (first, or after a crash). */
  async #currentBrowser(): Promise<Browser> {
    if (this.#browser?.connected) return this.#browser;
    this.#launching ??= this.#launch().finally(() => {
      this.#launching = null;
    });
    return this.#launching;
  }

  async #launch(): Promise<Browser> {
    if (this.#closed) throw closedError();
    const browser = await puppeteer.launch(this.#launchOptions);
    this.launches += 1;
    this.#browsers.add(browser);
    browser.once('disconnected', () => {
      this.#browsers.delete(browser);
      this.#forgetIdleOf(browser);
    });
    if (this.#closed) {
      await browser.close().catch(() => {});
      throw closedError();
    }
    this.#browser = browser;
    return browser;
  }

  async #create(key: string | null, browser: Browser): Promise<Slot> {
    const lease = await this.#proxy.acquire();
    try {
      const context = await browser.createBrowserContext({
        proxyServer: lease.server,
        // Chromium never proxies loopback unless told so; loopback must be checked too.
        proxyBypassList: ['<-loopback>'],
      });
      try {
        const page = await context.newPage();
        // An unanswered alert() would hold the page until the render's timeout (or, kept, forever).
        page.on('dialog', (dialog) => void dialog.dismiss().catch(() => {}));
        await installSettleTracker(page);
        return { key, browser, context, page, lease, uses: 0 };
      } catch (err) {
        await context.close().catch(() => {});
        throw err;
      }
    } catch (err) {
      lease.release();
      throw err;
    }
  }

  #takeIdle(key: string, browser: Browser): Slot | undefined {
    const list = this.#idle.get(key);
    while (list && list.length > 0) {
      const slot = list.pop() as Slot;
      this.#idleCount -= 1;
      clearTimeout(slot.idleTimer);
      if (list.length === 0) this.#idle.delete(key);
      if (slot.browser === browser && !slot.page.isClosed()) return slot;
      this.#discard(slot);
    }
    return undefined;
  }

  #evictOldest(): void {
    let oldest: Slot | undefined;
    for (const list of this.#idle.values()) {
      const first = list[0]; // each key's list is in the order its slots went idle
      if (first && (!oldest || (first.idleSince ?? 0) < (oldest.idleSince ?? 0))) oldest = first;
    }
    if (oldest) this.#dropIdle(oldest);
  }

  #dropIdle(slot: Slot): void {
    const list = slot.key === null ? undefined : this.#idle.get(slot.key);
    const at = list?.indexOf(slot) ?? -1;
    if (!list || at < 0) return;
    list.splice(at, 1);
    if (list.length === 0) this.#idle.delete(slot.key as string);
    this.#idleCount -= 1;
    clearTimeout(slot.idleTimer);
    this.#discard(slot);
  }

  #forgetIdleOf(browser: Browser): void {
    for (const list of [...this.#idle.values()])
      for (const slot of [...list]) if (slot.browser === browser) this.#dropIdle(slot);
  }

  /** Closes the slot's context (in the background) and returns its proxy listener. */
  #discard(slot: Slot): void {
    clearTimeout(slot.idleTimer);
    void slot.context
      .close()
      .catch(() => {})
      .finally(() => slot.lease.release());
  }
}

function closedError(): RenderError {
  return new RenderError('RENDER_ERROR', 'The renderer was closed.', { retryable: true });
}
