import { randomBytes, randomUUID } from 'node:crypto';
import type { InteractRun } from '@scrapejobs/queues';
import type { CDPSession, Page } from 'puppeteer';
import { settlePage } from '../render/actions.ts';
import { type RunnerOutcome, runInPage } from './in-page.ts';

/** The bounds of one call. */
export interface CodeLimits {
  timeoutMs: number;
  /** Characters of console output (stdout and stderr together) kept at most. */
  maxOutput: number;
  /** Characters of the result kept at most. */
  maxResult: number;
}

/** `exitCode` of code stopped at its time limit, as `timeout(1)` answers. */
const KILLED_EXIT_CODE = 124;
/** Output still in flight when the code's value arrives is waited for this long at most. */
const OUTPUT_WAIT_MS = 1_000;
/** How long a page whose evaluation failed gets to show it still answers. */
const PROBE_MS = 2_000;
/** A new document the code navigated to is waited for this long at most. */
const NAVIGATION_WAIT_MS = 10_000;

type Listener = (stream: string, text: string) => void;

/**
 * The page's channel to the worker: a binding (on every document the page will show) that
 * carries console output of the code's calls, and the session on which a call is stopped.
 */
export class PageChannel {
  readonly name = `__interact_${randomBytes(8).toString('hex')}`;
  readonly #cdp: CDPSession;
  readonly #listeners = new Map<string, Listener>();

  private constructor(cdp: CDPSession) {
    this.#cdp = cdp;
  }

  static async attach(page: Page, maxPayload: number): Promise<PageChannel> {
    const channel = new PageChannel(await page.createCDPSession());
    channel.#cdp.on('Runtime.bindingCalled', (event) => {
      // The page's own scripts see the binding too: what is not a call's own output is dropped.
      if (event.name !== channel.name || event.payload.length > maxPayload) return;
      try {
        const [call, stream, text] = JSON.parse(event.payload) as [unknown, unknown, unknown];
        if (typeof call === 'string' && typeof stream === 'string' && typeof text === 'string')
          channel.#listeners.get(call)?.(stream, text);
      } catch {}
    });
    await channel.#cdp.send('Runtime.enable');
    await channel.#cdp.send('Runtime.addBinding', { name: channel.name });
    return channel;
  }

  listen(call: string, listener: Listener): () => void {
    this.#listeners.set(call, listener);
    return () => this.#listeners.delete(call);
  }

  /** Stops the script running in the page now (a loop that never yields included). */
  async stopScript(): Promise<void> {
    await this.#cdp.send('Runtime.terminateExecution').catch(() => {});
  }
}

/**
 * Runs `code` in the page as the body of an async function given the `page` helper (in-page.ts),
 * within `limits.timeoutMs`: its console output, its value as text and how it ended. The code runs
 * in the page's own sandbox, never in the worker. A navigation the code starts ends the call; the
 * next call runs on the new document. Throws only when the page itself is gone.
 */
export async function runCode(
  page: Page,
  channel: PageChannel,
  code: string,
  limits: CodeLimits,
): Promise<InteractRun> {
  const call = randomUUID();
  const out = { stdout: '', stderr: '', used: 0, received: 0, truncated: false };
  const stop = channel.listen(call, (stream, text) => {
    out.received += 1;
    if (stream === 'cut') out.truncated = true;
    if (stream !== 'stdout' && stream !== 'stderr') return;
    const kept = text.slice(0, Math.max(0, limits.maxOutput - out.used));
    if (kept.length < text.length) out.truncated = true;
    out.used += kept.length;
    out[stream] += kept;
  });
  const options = { binding: channel.name, call, maxOutput: limits.maxOutput, maxResult: limits.maxResult };
  // A string, so the page compiles it (Runtime.evaluate, which a page's CSP does not govern).
  const source = `(${runInPage.toString()})(${JSON.stringify(options)}, async (page) => {\n${code}\n})`;
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), limits.timeoutMs);
  });
  try {
    const ended = await Promise.race([
      page.evaluate(source).then(
        (outcome) => ({ outcome: outcome as RunnerOutcome }),
        (err: unknown) => ({ err: err as Error }),
      ),
      timeout,
    ]);
    let run: Omit<InteractRun, 'kind' | 'stdout' | 'stderr' | 'truncated' | 'url'>;
    if (ended === 'timeout') {
      await channel.stopScript();
      const error = `the code did not end within ${limits.timeoutMs / 1000} s and was stopped`;
      run = { result: null, exitCode: KILLED_EXIT_CODE, killed: true, error };
    } else if ('outcome' in ended) {
      const { outcome } = ended;
      await until(() => out.received >= outcome.sent, OUTPUT_WAIT_MS);
      run = {
        result: outcome.result,
        exitCode: outcome.ok ? 0 : 1,
        killed: false,
        error: outcome.error,
      };
      if (outcome.resultCut) out.truncated = true;
    } else {
      if (pageGone(page)) throw ended.err;
      if (navigated(ended.err)) {
        const left = limits.timeoutMs - (Date.now() - started);
        await page
          .waitForFunction(() => document.readyState === 'complete', {
            timeout: Math.max(1, Math.min(left, NAVIGATION_WAIT_MS)),
          })
          .catch(() => {});
        run = { result: null, exitCode: 0, killed: false, error: null };
      } else {
        // The runner catches what the code throws: a failed evaluation is code that did not
        // compile, unless the page itself broke (crashed), which ends the session.
        let probe: NodeJS.Timeout | undefined;
        const answers = await Promise.race([
          page.evaluate('1').then(
            () => true,
            () => false,
          ),
          new Promise<boolean>((resolve) => {
            probe = setTimeout(() => resolve(false), PROBE_MS);
          }),
        ]).finally(() => clearTimeout(probe));
        if (!answers) throw ended.err;
        run = { result: null, exitCode: 1, killed: false, error: `SyntaxError: ${ended.err.message}` };
      }
    }
    // As after a render action: the page finishes what the code started.
    await settlePage(page);
    const stderr =
      run.error && out.used < limits.maxOutput ? appendError(out, run.error, limits) : out.stderr;
    return { kind: 'ran', ...run, stdout: out.stdout, stderr, truncated: out.truncated, url: page.url() };
  } finally {
    clearTimeout(timer);
    stop();
  }
}

/** Whether the page is closed or its browser gone. */
export const pageGone = (page: Page) => page.isClosed() || !page.browser().connected;

/** Whether an evaluation failed because its document went away (the code navigated). */
function navigated(err: Error): boolean {
  return /Execution context was destroyed|Cannot find context|navigat|Inspected target navigated/i.test(
    err.message,
  );
}

/** stderr with the error's text after it, within the output's bound. */
function appendError(
  out: { stderr: string; used: number; truncated: boolean },
  error: string,
  limits: CodeLimits,
) {
  const text = `${error}\n`;
  const kept = text.slice(0, limits.maxOutput - out.used);
  if (kept.length < text.length) out.truncated = true;
  return out.stderr + kept;
}

async function until(done: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 10));
}
