import { setTimeout as sleep } from 'node:timers/promises';
import { type ApiError, apiError, ConnectionError, ScrapeJobsError } from './errors.ts';
import type { ErrorBody } from './types.ts';

export const CLIENT_VERSION = '1.0.0';

/** How long and how often a request answered 429 or 503 is tried again. */
export interface RetryOptions {
  /** Attempts of one request in all, the first included (default 4; 1 turns retries off). */
  maxAttempts?: number;
  /** Longest total wait across one request's retries, in ms (default 60 000). A wait that would go past it is not made: the error is thrown at once. */
  maxWaitMs?: number;
}

/** Told before each wait for a retry. */
export interface RetryEvent {
  method: string;
  path: string;
  /** The attempt that was answered 429 or 503 (1 for the first). */
  attempt: number;
  delayMs: number;
  error: ApiError;
}

export interface ClientOptions {
  /** `sk_test_…` or `sk_live_…`. */
  apiKey: string;
  /** The service's address, such as `https://api.example.com`. */
  baseUrl: string;
  retry?: RetryOptions;
  /** Longest wait for an answer's headers, in ms (default 30 000). Downloads then stream without limit. */
  timeoutMs?: number;
  onRetry?: (event: RetryEvent) => void;
  /** Another fetch implementation (a proxy agent, a test double). */
  fetch?: typeof globalThis.fetch;
}

export type QueryValue = string | number | boolean | readonly string[] | null | undefined;
export type Query = Record<string, QueryValue>;

interface SendOptions {
  query?: Query | undefined;
  body?: unknown;
}

const RETRY_STATUSES = new Set([429, 503]);
const DEFAULT_RETRY = { maxAttempts: 4, maxWaitMs: 60_000 };

/** Seconds from a Retry-After header: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Sends requests with the key, turns error answers into typed errors, and retries 429 and 503. */
export class Transport {
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #retry: Required<RetryOptions>;
  readonly #timeoutMs: number;
  readonly #fetch: typeof globalThis.fetch;
  readonly #onRetry: ((event: RetryEvent) => void) | undefined;

  constructor(options: ClientOptions) {
    if (!options.apiKey) throw new TypeError('apiKey is required');
    if (!options.baseUrl || !URL.canParse(options.baseUrl))
      throw new TypeError(`baseUrl must be an absolute URL, got ${JSON.stringify(options.baseUrl)}`);
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#onRetry = options.onRetry;
  }

  /** The parsed JSON answer of a request (undefined for 204). */
  async json<T>(method: string, path: string, init: SendOptions = {}): Promise<T> {
    const res = await this.send(method, path, init);
    if (res.status === 204) return undefined as T;
    try {
      return (await res.json()) as T;
    } catch (err) {
      // Something other than the API answered (a proxy's page), or the answer was cut.
      throw new ScrapeJobsError('invalid_response', `the answer to ${method} ${path} is not JSON`, {
        cause: err,
      });
    }
  }

  /** A successful answer, its body unread: retried on 429 and 503 within the budget, else a typed error. */
  async send(method: string, path: string, init: SendOptions = {}): Promise<Response> {
    let waited = 0;
    for (let attempt = 1; ; attempt++) {
      const res = await this.#once(method, path, init);
      if (res.ok) return res;
      const error = await readError(res);
      if (!RETRY_STATUSES.has(res.status) || attempt >= this.#retry.maxAttempts) throw error;
      const delayMs = error.retryAfter !== undefined ? error.retryAfter * 1000 : backoff(attempt);
      if (waited + delayMs > this.#retry.maxWaitMs) throw error;
      this.#onRetry?.({ method, path, attempt, delayMs, error });
      await sleep(delayMs);
      waited += delayMs;
    }
  }

  /** The absolute URL of a path, with the query's defined values (lists joined with commas). */
  url(path: string, query?: Query): string {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      url.searchParams.set(name, Array.isArray(value) ? value.join(',') : String(value));
    }
    return url.toString();
  }

  async #once(method: string, path: string, init: SendOptions): Promise<Response> {
    const url = this.url(path, init.query);
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.#apiKey}`,
      'User-Agent': `scrapejobs-client/${CLIENT_VERSION} node/${process.version}`,
    };
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    const controller = new AbortController();
    // The timeout covers the wait for headers only, so a long download is never cut.
    const timer = setTimeout(() => controller.abort(), this.#timeoutMs);
    try {
      return await this.#fetch(url, {
        method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: controller.signal,
      });
    } catch (err) {
      if (controller.signal.aborted)
        throw new ConnectionError(`no answer from ${this.baseUrl} within ${this.#timeoutMs} ms`, err);
      throw new ConnectionError(`cannot reach ${this.baseUrl}: ${describeFetchError(err)}`, err);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** 1 s, 2 s, 4 s… (at most 30 s) when the answer did not say how long to wait. */
const backoff = (attempt: number) => Math.min(30_000, 1000 * 2 ** (attempt - 1));

function describeFetchError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

const isErrorBody = (v: unknown): v is ErrorBody =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as ErrorBody).error === 'string' &&
  typeof (v as ErrorBody).message === 'string';

async function readError(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let body: ErrorBody = { error: 'http_error', message: `HTTP ${res.status} ${res.statusText}`.trim() };
  try {
    const parsed: unknown = JSON.parse(text);
    if (isErrorBody(parsed)) body = parsed;
  } catch {
    // Not JSON (a proxy's page): keep the status line.
  }
  const retryAfter = body.retry_after ?? parseRetryAfter(res.headers.get('retry-after'));
  return apiError(res.status, body, retryAfter, res.headers.get('x-request-id') ?? undefined);
}
