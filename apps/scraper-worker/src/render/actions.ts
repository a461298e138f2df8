import type { RenderAction } from '@scrapejobs/contracts';
import type { ElementHandle, HTTPResponse, KeyInput, Page } from 'puppeteer';
import { RenderError } from './errors.ts';

/** After a click, a key or a scroll, the page gets this long without network traffic to finish… */
const SETTLE_IDLE_MS = 200;
/** …but no more than this: a page that polls or streams is never idle. */
const SETTLE_MAX_MS = 2_000;
const SELECTOR_SHOWN = 80;
/** Elements a `click` with `all` clicks at most. */
const MAX_CLICKED = 100;
/** Longest an execute_javascript step may run (less when the render has less time left). */
const SCRIPT_MAX_MS = 10_000;
/** Characters of JSON a script's value may have (docs/api.md §14). */
const SCRIPT_MAX_JSON = 64 * 1024;

/** The value of an execute_javascript step: its `typeof` and its JSON value (null when it has none). */
export interface ScriptReturn {
  type: string;
  value: unknown;
}

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
  /** Where execute_javascript steps put their values, in order. */
  returns: ScriptReturn[];
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
      if (action.all) return await watchingNavigation(ctx, () => clickEvery(ctx, action.selector));
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
    case 'execute_javascript':
      ctx.returns.push(await runScript(ctx, action.script));
      await settlePage(ctx.page, ctx.until);
      return null;
    case 'scroll':
      for (let i = 0; i < action.times; i++) {
        const { selector } = action;
        if (selector !== undefined)
          await withElement(ctx, selector, (el) =>
            el.evaluate((e, to) => e.scrollTo(0, to === 'top' ? 0 : e.scrollHeight), action.to),
          );
        else
          await page.evaluate((to) => {
            const root = document.scrollingElement ?? document.documentElement;
            window.scrollTo(0, to === 'top' ? 0 : root.scrollHeight);
          }, action.to);
        // Infinite lists load the next part on scroll; it should be in before the next scroll.
        await settlePage(ctx.page, ctx.until);
      }
      return null;
  }
}

/** Clicks every element `selector` matches (at most MAX_CLICKED), in document order, once one is visible. */
async function clickEvery(ctx: ActionContext, selector: string): Promise<void> {
  await withElement(ctx, selector, async () => {});
  await ctx.page.$$eval(
    selector,
    (elements, max) => {
      for (const element of elements.slice(0, max)) (element as HTMLElement).click();
    },
    MAX_CLICKED,
  );
}

/**
 * Runs a script in the page as a program (its value is its last statement's, a promise awaited),
 * or, when it has a top-level `return`, as the body of an async function, as Firecrawl's
 * executeJavascript does. It runs in the page's own sandbox (the page's origin, no access to the
 * worker) for at most SCRIPT_MAX_MS; its value is turned into JSON in the page and refused past
 * SCRIPT_MAX_JSON characters, so a huge value never leaves the browser.
 */
async function runScript(ctx: ActionContext, script: string): Promise<ScriptReturn> {
  const limit = bound(ctx, SCRIPT_MAX_MS);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StepFailure(`the script did not end ${limit.text}`)), limit.ms);
  });
  const run = async () => {
    const handle = await ctx.page.evaluateHandle(script).catch((err: Error) => {
      if (!/Illegal return/.test(err.message)) throw err;
      return ctx.page.evaluateHandle(`(async () => {\n${script}\n})()`);
    });
    try {
      return await handle.evaluate((value, max) => {
        const json = JSON.stringify(value);
        return {
          type: typeof value,
          json: json === undefined ? null : json.length > max ? json.length : json,
        };
      }, SCRIPT_MAX_JSON);
    } finally {
      await handle.dispose().catch(() => {});
    }
  };
  try {
    const { type, json } = await Promise.race([run(), timeout]);
    if (typeof json === 'number')
      throw new StepFailure(
        `the script's value is ${json} characters of JSON, more than the ${SCRIPT_MAX_JSON} allowed`,
      );
    return { type, value: json === null ? null : JSON.parse(json) };
  } finally {
    clearTimeout(timer);
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
    await settlePage(ctx.page, ctx.until);
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

/** Waits until the page made no request for a moment, within SETTLE_MAX_MS (and `until`); never fails. */
export async function settlePage(page: Page, until = Number.POSITIVE_INFINITY): Promise<void> {
  const ms = Math.min(SETTLE_MAX_MS, Math.max(1, until - Date.now()));
  await page.waitForNetworkIdle({ idleTime: SETTLE_IDLE_MS, timeout: ms }).catch(() => {});
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
    case 'wait_for':
      return `${action.type}${action.type === 'click' && action.all ? ' all' : ''} ${shown(action.selector)}`;
    case 'press':
      return `press ${action.key}`;
    case 'wait':
      return `wait ${action.ms} ms`;
    case 'scroll':
      return `scroll ${action.selector === undefined ? '' : `${shown(action.selector)} `}${action.to}`;
    case 'execute_javascript':
      return 'execute_javascript';
  }
}

const shown = (selector: string) =>
  selector.length > SELECTOR_SHOWN ? `${selector.slice(0, SELECTOR_SHOWN)}…` : selector;
