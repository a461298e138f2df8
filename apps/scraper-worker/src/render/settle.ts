import type { Page } from 'puppeteer';

/**
 * A rendered page is read once its DOM has had no change for this long (docs/api.md §23): content
 * a script adds just after `load` (a fetch answered, a timer) is part of the page.
 */
export const QUIET_MS = 300;
/**
 * The quiet a page needs when nothing is pending that could change its DOM soon (no timer due
 * within QUIET_MS, no animation frame, idle callback or scheduled task, fetch or XHR, no socket,
 * worker or string timer, no request of the page in flight): waiting the full QUIET_MS then would
 * only wait for nothing. It still spans a frame (16.7 ms), for observers that call back at the next.
 */
export const IDLE_QUIET_MS = 20;
/** The longest a page's DOM is waited on to settle; a page that never stops changing is read then. */
export const SETTLE_MAX_MS = 5_000;

/** Where the tracker keeps its state on the page's window (not enumerable). */
const TRACKER = '__renderSettle';

/**
 * Runs in every document of the page before its scripts: notes the time of the DOM's latest change
 * (nodes or text added, removed or changed; attributes do not count) and what is pending that may
 * still change it. Timers, frames and requests keep their behaviour; only their number is kept.
 */
function tracker(key: string, quietMs: number): void {
  const w = window as unknown as Record<string, unknown> & Window & typeof globalThis;
  if (w[key]) return;
  const timers = new Set<unknown>();
  const frames = new Set<number>();
  let requests = 0;
  // Work whose end the tracker cannot see: a page with any of it is given the full quiet window.
  let unknown = false;
  const state = {
    last: performance.now(),
    setTimeout: w.setTimeout.bind(w),
    busy: () => unknown || timers.size > 0 || frames.size > 0 || requests > 0,
  };
  Object.defineProperty(w, key, { value: state, enumerable: false });
  new MutationObserver(() => {
    state.last = performance.now();
  }).observe(document, { subtree: true, childList: true, characterData: true });

  // The page's own timers, typed loosely: Node's and the DOM's declarations of them differ.
  type Fn = (this: unknown, ...args: unknown[]) => unknown;
  const own = w as unknown as Record<string, Fn>;
  const st = own.setTimeout as Fn;
  const wrapTimer = (original: Fn, repeats: boolean): Fn =>
    function (this: unknown, handler: unknown, delay: unknown, ...rest: unknown[]) {
      if (typeof handler !== 'function') {
        unknown = true;
        return original.call(this, handler, delay, ...rest);
      }
      if ((Number(delay) || 0) > quietMs) return original.call(this, handler, delay, ...rest);
      const id = original.call(
        this,
        function (this: unknown, ...args: unknown[]) {
          if (!repeats) timers.delete(id);
          return (handler as Fn).apply(this, args);
        },
        delay,
        ...rest,
      );
      timers.add(id);
      return id;
    };
  const clear = (original: Fn): Fn =>
    function (this: unknown, id: unknown) {
      timers.delete(id);
      return original.call(this, id);
    };
  own.setInterval = wrapTimer(own.setInterval as Fn, true);
  own.clearTimeout = clear(own.clearTimeout as Fn);
  own.clearInterval = clear(own.clearInterval as Fn);
  own.setTimeout = wrapTimer(st, false);

  const raf = w.requestAnimationFrame;
  const caf = w.cancelAnimationFrame;
  if (raf) {
    w.requestAnimationFrame = function (this: unknown, callback: FrameRequestCallback) {
      const id: number = raf.call(this, (time: number) => {
        frames.delete(id);
        callback(time);
      });
      frames.add(id);
      return id;
    };
    w.cancelAnimationFrame = function (this: unknown, id: number) {
      frames.delete(id);
      return caf.call(this, id);
    };
  }

  // A request counts until one task after its answer (or its body, read as a whole) has been
  // handed over: what the page does with it runs before then.
  const counted = <T>(answer: Promise<T>): Promise<T> => {
    requests++;
    const done = () => st(() => requests--, 0);
    answer.then(done, done);
    return answer;
  };
  // Idle callbacks and scheduled tasks count like timers until they have run.
  const ric = own.requestIdleCallback;
  if (typeof ric === 'function') {
    const cic = own.cancelIdleCallback as Fn;
    own.requestIdleCallback = function (this: unknown, callback: unknown, ...rest: unknown[]) {
      const id = ric.call(
        this,
        function (this: unknown, ...args: unknown[]) {
          timers.delete(`idle ${id}`);
          return (callback as Fn).apply(this, args);
        },
        ...rest,
      );
      timers.add(`idle ${id}`);
      return id;
    };
    own.cancelIdleCallback = function (this: unknown, id: unknown) {
      timers.delete(`idle ${id}`);
      return cic.call(this, id);
    };
  }
  const scheduler = w.scheduler as unknown as Record<string, Fn> | undefined;
  for (const name of ['postTask', 'yield']) {
    const schedule = scheduler?.[name];
    if (!scheduler || typeof schedule !== 'function') continue;
    scheduler[name] = function (this: unknown, ...args: unknown[]) {
      const task = {};
      timers.add(task);
      const done = schedule.apply(this, args) as Promise<unknown>;
      done.then(
        () => timers.delete(task),
        () => timers.delete(task),
      );
      return done;
    };
  }
  const fetchOriginal = w.fetch;
  if (fetchOriginal) {
    w.fetch = function (this: unknown, ...args: Parameters<typeof fetch>) {
      return counted(fetchOriginal.apply(this, args));
    } as typeof fetch;
    const body = w.Response?.prototype as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    for (const name of ['json', 'text', 'arrayBuffer', 'blob', 'formData', 'bytes']) {
      const read = body?.[name];
      if (typeof read !== 'function') continue;
      body[name] = function (this: unknown, ...args: unknown[]) {
        return counted(read.apply(this, args));
      };
    }
  }
  const send = w.XMLHttpRequest?.prototype.send;
  if (send) {
    w.XMLHttpRequest.prototype.send = function (this: XMLHttpRequest, ...args: [body?: unknown]) {
      requests++;
      this.addEventListener('loadend', () => st(() => requests--, 0), { once: true });
      return send.apply(this, args as [XMLHttpRequestBodyInit]);
    };
  }
  for (const name of [
    'WebSocket',
    'EventSource',
    'Worker',
    'SharedWorker',
    'MessageChannel',
    'BroadcastChannel',
  ]) {
    const Original = w[name] as (new (...a: unknown[]) => object) | undefined;
    if (typeof Original !== 'function') continue;
    w[name] = new Proxy(Original, {
      construct(target, args, newTarget) {
        unknown = true;
        return Reflect.construct(target, args, newTarget);
      },
    });
  }
}

/** Installs the settle tracker in every document the page loads from now on. */
export async function installSettleTracker(page: Page): Promise<void> {
  await page.evaluateOnNewDocument(tracker, TRACKER, QUIET_MS);
}

/**
 * Waits until the page's DOM has gone QUIET_MS without a node or text added, removed or changed
 * (attribute changes, such as animations, do not count), or IDLE_QUIET_MS when nothing is pending
 * that could change it (`requestsInFlight()` counts the page's requests the tracker cannot see),
 * or `maxMs` at the latest; then returns the page's HTML, serialised in the same step (one round
 * trip less than reading it after).
 */
export async function settledHtml(
  page: Page,
  maxMs: number,
  requestsInFlight: () => number,
): Promise<string> {
  const limit = Math.max(0, Math.min(maxMs, SETTLE_MAX_MS));
  const started = Date.now();
  const first = await waitInPage(page, IDLE_QUIET_MS, limit);
  // Quiet in the page, but a script, frame or style sheet still on its way: the full window.
  if (first.how === 'idle' && requestsInFlight() > 0)
    return (await waitInPage(page, QUIET_MS, limit - (Date.now() - started))).html;
  return first.html;
}

/** Which condition ended the wait in the page ('idle', 'quiet' or 'limit'), and the HTML then. */
function waitInPage(
  page: Page,
  idleQuietMs: number,
  limitMs: number,
): Promise<{ how: string; html: string }> {
  return page.evaluate(
    (key, quietMs, idleMs, capMs) =>
      new Promise<{ how: string; html: string }>((resolve) => {
        // As puppeteer's Page.content() serialises a document.
        const done = (how: string) => {
          let html = '';
          for (const node of document.childNodes)
            html +=
              node === document.documentElement
                ? document.documentElement.outerHTML
                : new XMLSerializer().serializeToString(node);
          resolve({ how, html });
        };
        if (capMs <= 0) return done('limit');
        const state = (window as unknown as Record<string, unknown>)[key] as
          | { last: number; setTimeout: typeof setTimeout; busy: () => boolean }
          | undefined;
        if (!state) {
          // No tracker in this document (a page that replaced it): a quiet window from now.
          const observer = new MutationObserver(() => {
            clearTimeout(quiet);
            quiet = setTimeout(() => end('quiet'), quietMs);
          });
          let quiet = setTimeout(() => end('quiet'), quietMs);
          const cap = setTimeout(() => end('limit'), capMs);
          const end = (how: string) => {
            observer.disconnect();
            clearTimeout(quiet);
            clearTimeout(cap);
            done(how);
          };
          observer.observe(document, { subtree: true, childList: true, characterData: true });
          return;
        }
        const started = performance.now();
        const check = () => {
          const now = performance.now();
          const still = now - state.last;
          if (still >= quietMs) return done('quiet');
          if (still >= idleMs && !state.busy()) return done('idle');
          if (now - started >= capMs) return done('limit');
          const busyOrNot = state.busy() ? idleMs : idleMs - still;
          state.setTimeout(check, Math.max(5, Math.min(busyOrNot, quietMs - still, capMs - (now - started))));
        };
        check();
      }),
    TRACKER,
    QUIET_MS,
    idleQuietMs,
    Math.max(0, limitMs),
  );
}
