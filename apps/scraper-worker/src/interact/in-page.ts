/** What the worker tells the code's runner in the page. */
export interface RunnerOptions {
  /** The page binding that carries console output to the worker. */
  binding: string;
  /** The call's id, sent with each piece of output: output of an earlier call is told apart. */
  call: string;
  /** Characters of output (stdout and stderr together) sent at most. */
  maxOutput: number;
  /** Characters of the result kept at most. */
  maxResult: number;
}

/** What the runner answers when the code ends. */
export interface RunnerOutcome {
  ok: boolean;
  /** The return value as text (a string as it is, anything else as JSON); null: none. */
  result: string | null;
  resultCut: boolean;
  /** The error the code threw, with its stack. */
  error: string | null;
  /** Pieces of output sent, so the worker knows when it has them all. */
  sent: number;
}

/**
 * Runs in the page (its source is sent with each call; it closes over nothing of the worker's):
 * gives the code a `page` helper, sends what it writes to the console to the worker, and turns
 * its return value into bounded text. `code` is the user's code as the body of an async function.
 */
export async function runInPage(
  opts: RunnerOptions,
  code: (page: Record<string, unknown>) => Promise<unknown>,
): Promise<RunnerOutcome> {
  const binding = (globalThis as unknown as Record<string, (payload: string) => void>)[opts.binding];
  // What the helper waits for an element at most, unless told otherwise (a literal: this function
  // runs in the page, where no constant of this module is).
  const waitMs = 30_000;
  let used = 0;
  let sent = 0;
  let cut = false;
  const send = (stream: string, text: string) => {
    sent += 1;
    binding?.(JSON.stringify([opts.call, stream, text]));
  };
  const show = (value: unknown): string => {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return value.stack ?? String(value);
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
  };
  const write = (stream: string, args: unknown[]) => {
    if (cut) return;
    let text = `${args.map(show).join(' ')}\n`;
    if (used + text.length > opts.maxOutput) {
      text = text.slice(0, opts.maxOutput - used);
      cut = true;
    }
    used += text.length;
    if (text) send(stream, text);
    if (cut) send('cut', '');
  };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const find = async (selector: string, options?: { timeout?: number; visible?: boolean }) => {
    const timeout = options?.timeout ?? waitMs;
    const end = Date.now() + timeout;
    for (;;) {
      const found = document.querySelector(selector);
      if (found && (!options?.visible || found.getClientRects().length > 0)) return found as HTMLElement;
      if (Date.now() >= end) throw new Error(`no element matched ${selector} within ${timeout} ms`);
      await sleep(50);
    }
  };
  const setValue = (element: HTMLElement, value: string) => {
    if (element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement) {
      // The prototype's setter, so frameworks that watch the property see the change.
      const proto = Object.getPrototypeOf(element) as object;
      Object.getOwnPropertyDescriptor(proto, 'value')?.set?.call(element, value);
    } else if (element.isContentEditable) element.textContent = value;
    else throw new Error('the element is not an input, a textarea or editable');
  };
  const currentValue = (element: HTMLElement) =>
    element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement
      ? element.value
      : (element.textContent ?? '');
  const page = {
    url: async () => location.href,
    title: async () => document.title,
    content: async () =>
      (document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '') +
      document.documentElement.outerHTML,
    evaluate: async (fn: unknown, ...args: unknown[]) => {
      if (typeof fn !== 'function') throw new Error('page.evaluate takes a function here');
      return fn(...args);
    },
    waitForTimeout: (ms: number) => sleep(ms),
    waitForSelector: (selector: string, options?: { timeout?: number; visible?: boolean }) =>
      find(selector, options),
    click: async (selector: string, options?: { timeout?: number }) => {
      const element = await find(selector, options);
      element.scrollIntoView({ block: 'center' });
      element.click();
    },
    fill: async (selector: string, value: string, options?: { timeout?: number }) => {
      const element = await find(selector, options);
      element.focus();
      setValue(element, value);
      element.dispatchEvent(new Event('input', { bubbles: true }));
      element.dispatchEvent(new Event('change', { bubbles: true }));
    },
    type: async (selector: string, text: string, options?: { timeout?: number; delay?: number }) => {
      const element = await find(selector, options);
      element.focus();
      for (const key of text) {
        element.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
        setValue(element, currentValue(element) + key);
        element.dispatchEvent(new InputEvent('input', { data: key, inputType: 'insertText', bubbles: true }));
        element.dispatchEvent(new KeyboardEvent('keyup', { key, bubbles: true }));
        if (options?.delay) await sleep(options.delay);
      }
      element.dispatchEvent(new Event('change', { bubbles: true }));
    },
    innerText: async (selector: string, options?: { timeout?: number }) =>
      // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, as Playwright's page.innerText gives
      (await find(selector, options)).innerText,
    textContent: async (selector: string, options?: { timeout?: number }) =>
      (await find(selector, options)).textContent,
    goto: async (url: string) => {
      location.href = new URL(url, location.href).href;
      // The document ends with the navigation, and the code with it.
      await new Promise(() => {});
    },
  };
  const methods = ['log', 'info', 'debug', 'warn', 'error'] as const;
  const saved = methods.map((name) => console[name]);
  for (const name of methods)
    console[name] = (...args: unknown[]) =>
      write(name === 'warn' || name === 'error' ? 'stderr' : 'stdout', args);
  try {
    const value = await code(page);
    if (value === undefined) return { ok: true, result: null, resultCut: false, error: null, sent };
    let text = show(value);
    const resultCut = text.length > opts.maxResult;
    if (resultCut) text = text.slice(0, opts.maxResult);
    return { ok: true, result: text, resultCut, error: null, sent };
  } catch (err) {
    return { ok: false, result: null, resultCut: false, error: show(err), sent };
  } finally {
    methods.forEach((name, i) => {
      console[name] = saved[i] as (typeof console)[typeof name];
    });
  }
}
