import type { RenderAction } from '@scrapejobs/contracts';
import type { ElementHandle, HTTPResponse, KeyInput, Page } from 'puppeteer';
import { RenderError } from './errors.ts';

/** After a click, a key or a scroll, the page gets this long without network traffic to finish… */
const SETTLE_IDLE_MS = 200;
/** …but no more than this: a page that polls or streams is never idle. */
const SETTLE_MAX_MS = 2_000;
const SELECTOR_SHOWN = 80;

interface ActionContext {
  page: Page;
  /** Epoch ms by which every step must be done: the render's own deadline, less time to read the page. */
  until: number;
  /** The job's wait strategy, also used for a navigation a step starts. */
  waitUntil: 'load' | 'domcontentloaded' | 'networkidle0' | 'networkidle2';
  /** Main-frame navigation requests so far, counted by the render. */
  navigationCount: () => number;
  /** The abort or browser crash behind a step's failure, which fails the render as such; else null. */
  interruption: (err: unknown) => Error | null;
}

/** A main-frame navigation that a step set off; `response` is null for a same-document one. */
interface Navigation {
  response: HTTPResponse | null;
}

/** A step failed for its own reason (not puppeteer's); the message says which bound it ran into. */
class StepFailure extends Error {}

/**
 * Runs the steps in order. A failing step fails the render with a RENDER_ERROR that names its
 * 0-based index and no retry fixes. Returns the last navigation a step set off, if any, so the
 * render reads (and checks) that document.
 */
export async function runActions(
  actions: readonly RenderAction[],
  ctx: ActionContext,
): Promise<Navigation | null> {
  let last: Navigation | null = null;
  for (const [index, action] of actions.entries()) {
    try {
      last = (await runStep(action, ctx)) ?? last;
    } catch (err) {
      const interrupted = ctx.interruption(err);
      if (interrupted) throw interrupted;
      const reason = (err as Error).message ?? String(err);
      throw new RenderError('RENDER_ERROR', `action ${index} (${stepName(action)}): ${reason}`, {
        retryable: false,
        cause: err,
      });
    }
  }
  return last;
}

async function runStep(action: RenderAction, ctx: ActionContext): Promise<Navigation | null> {
  const { page } = ctx;
  switch (action.type) {
    case 'click':
      return await watchingNavigation(ctx, () => withElement(ctx, action.selector, (el) => el.click()));
    case 'type':
      // keyboard.type presses Enter for "\n", which may submit a form.
      return await watchingNavigation(ctx, () =>
        withElement(ctx, action.selector, (el) => el.type(action.text)),
      );
    case 'press':
      return await watchingNavigation(ctx, () => page.keyboard.press(action.key as KeyInput));
    case 'wait_for': {
      const limit = bound(ctx, action.timeout_ms);
      await timed(
        page.waitForSelector(action.selector, { timeout: limit.ms }),
        `did not appear ${limit.text}`,
      );
      return null;
    }
    case 'wait': {
      const limit = bound(ctx);
      if (action.ms > limit.ms) {
        throw new StepFailure(`needs ${action.ms} ms, only ${limit.ms} ms of the render's time limit remain`);
      }
      await new Promise((resolve) => setTimeout(resolve, action.ms));
      return null;
    }
    case 'scroll':
      for (let i = 0; i < action.times; i++) {
        bound(ctx);
        await page.evaluate((to) => {
          const root = document.scrollingElement ?? document.documentElement;
          window.scrollTo(0, to === 'top' ? 0 : root.scrollHeight);
        }, action.to);
        // Infinite lists load the next part on scroll; it should be in before the next scroll.
        await settle(ctx);
      }
      return null;
  }
}

/** Acts on the element once it is visible, waiting no longer than the render allows. */
async function withElement(
  ctx: ActionContext,
  selector: string,
  act: (el: ElementHandle) => Promise<void>,
): Promise<void> {
  const limit = bound(ctx);
  const handle = await timed(
    ctx.page.waitForSelector(selector, { visible: true, timeout: limit.ms }),
    `no visible element matched ${limit.text}`,
  );
  if (!handle) throw new StepFailure('no element matched');
  try {
    await act(handle);
  } finally {
    // A click that navigated has already taken the element away.
    await handle.dispose().catch(() => {});
  }
}

/**
 * Runs a step that may navigate the main frame (a link, a form submit, Enter), then lets the page
 * settle; when the step started a navigation, waits for it by the job's wait strategy, so what
 * is read afterwards is the new document.
 */
async function watchingNavigation(ctx: ActionContext, act: () => Promise<void>): Promise<Navigation | null> {
  const before = ctx.navigationCount();
  const limit = bound(ctx);
  const stop = new AbortController();
  // Watched from before the step, so a navigation that finishes quickly is not missed.
  const navigation = ctx.page
    .waitForNavigation({ waitUntil: ctx.waitUntil, timeout: limit.ms, signal: stop.signal })
    .then(
      (response) => ({ response }),
      (err: unknown) => ({ err }),
    );
  try {
    await act();
    await settle(ctx);
    if (ctx.navigationCount() === before) return null;
    const outcome = await navigation;
    if ('err' in outcome) {
      const why =
        (outcome.err as Error).name === 'TimeoutError' ? limit.text : (outcome.err as Error).message;
      throw new StepFailure(`the page it opened did not reach "${ctx.waitUntil}" ${why}`);
    }
    return outcome;
  } finally {
    stop.abort();
  }
}

/** Waits until the page made no request for a moment, within SETTLE_MAX_MS; never fails. */
async function settle(ctx: ActionContext): Promise<void> {
  const ms = Math.min(SETTLE_MAX_MS, Math.max(1, ctx.until - Date.now()));
  await ctx.page.waitForNetworkIdle({ idleTime: SETTLE_IDLE_MS, timeout: ms }).catch(() => {});
}

/** How long a step may wait: its own timeout or what is left of the render, whichever is less. */
function bound(ctx: ActionContext, own?: number): { ms: number; text: string } {
  const left = ctx.until - Date.now();
  if (left <= 0) throw new StepFailure("the render's time limit was reached before this step");
  // puppeteer reads a timeout of 0 as "no limit"; 0 here means "now".
  if (own !== undefined && own <= left) return { ms: Math.max(1, own), text: `within ${own} ms` };
  return { ms: left, text: `within ${left} ms (the rest of the render's time limit)` };
}

async function timed<T>(promise: Promise<T>, onTimeout: string): Promise<T> {
  try {
    return await promise;
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') throw new StepFailure(onTimeout, { cause: err });
    throw err;
  }
}

/** The step as its error names it; never the text typed, which may be a password. */
function stepName(action: RenderAction): string {
  switch (action.type) {
    case 'click':
    case 'type':
    case 'wait_for': {
      const { selector } = action;
      return `${action.type} ${selector.length > SELECTOR_SHOWN ? `${selector.slice(0, SELECTOR_SHOWN)}…` : selector}`;
    }
    case 'press':
      return `press ${action.key}`;
    case 'wait':
      return `wait ${action.ms} ms`;
    case 'scroll':
      return `scroll ${action.to}`;
  }
}
