// Retries of 429 and 503 against the real API process: its rate limit set low, its clock shifted
// so that a one-minute window ends a few seconds into the test (testing/shifted-clock.ts), and its
// PostgreSQL behind a proxy the test can cut.
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN_URL } from '../../../test/support/database.ts';
import { startTcpProxy } from '../../../test/support/tcp-proxy.ts';
import { RateLimitError, type RetryEvent, ScrapeJobs, ServiceUnavailableError } from './index.ts';
import { type Stack, startStack } from './testing/stack.ts';

const LIMIT = 5;
const CLOCK = new URL('./testing/shifted-clock.ts', import.meta.url).pathname;

let stack: Stack;
let pgProxy: Awaited<ReturnType<typeof startTcpProxy>>;
/** When one of the API's rate-limit windows ends (and every 60 s after). */
let windowEndsAt: number;

beforeAll(async () => {
  pgProxy = await startTcpProxy(Number(new URL(ADMIN_URL).port || 5432), new URL(ADMIN_URL).hostname);
  // The 503 test runs first (with the stack's start, 8-15 s on a busy machine); the window ends
  // soon after, so the 429 test hardly waits for it (missed, it would wait a minute for the next).
  windowEndsAt = Date.now() + 20_000;
  stack = await startStack({
    apiEnv: (shared) => {
      const db = new URL(shared.DATABASE_URL!);
      db.port = String(pgProxy.port);
      return {
        DATABASE_URL: db.toString(),
        API_RATE_LIMIT_PER_MINUTE: String(LIMIT),
        SHIFTED_MINUTE_ENDS_AT: String(windowEndsAt),
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${CLOCK}`.trim(),
      };
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await pgProxy?.stop();
});

const clientOf = (apiKey: string, over: Partial<ConstructorParameters<typeof ScrapeJobs>[0]> = {}) =>
  new ScrapeJobs({ apiKey, baseUrl: stack.baseUrl, ...over });

/** Spends a key's whole budget in the last 2 s of a window (so Retry-After is 1 or 2); resolves to its end. */
async function exhaustNearWindowEnd(apiKey: string): Promise<number> {
  let end = windowEndsAt;
  while (end - Date.now() < 2_000) end += 60_000;
  await sleep(end - 1_800 - Date.now());
  const statuses = await Promise.all(
    Array.from({ length: LIMIT }, async () => {
      const res = await fetch(`${stack.baseUrl}/jobs/status`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      });
      return res.status;
    }),
  );
  expect(statuses).toEqual(Array(LIMIT).fill(200));
  return end;
}

describe('a 503 answer', () => {
  it('is retried after its Retry-After once PostgreSQL answers again; beyond the budget it is thrown at once', async () => {
    const key = await stack.key();
    const retries: RetryEvent[] = [];
    const client = clientOf(key, { onRetry: (e) => retries.push(e) });
    await client.jobs.list();
    await pgProxy.refuse();
    try {
      const started = Date.now();
      const unavailable = await clientOf(key, { retry: { maxWaitMs: 1_000 } })
        .jobs.list()
        .catch((e: unknown) => e);
      expect(unavailable).toBeInstanceOf(ServiceUnavailableError);
      expect(unavailable).toMatchObject({ code: 'service_unavailable', status: 503, retryAfter: 5 });
      expect(Date.now() - started).toBeLessThan(3_000);

      const listed = client.jobs.list();
      await sleep(1_000);
      await pgProxy.restore();
      expect(await listed).toEqual({ jobs: [], count: 0, next_cursor: null });
      expect(retries.map((r) => [r.error.status, r.delayMs])).toEqual([[503, 5_000]]);
    } finally {
      await pgProxy.restore();
    }
  }, 20_000);
});

describe('a 429 answer', () => {
  it('is retried after its Retry-After, within the budget; beyond it the RateLimitError is thrown at once', async () => {
    const key = await stack.key();
    const end = await exhaustNearWindowEnd(key);

    const started = Date.now();
    const noRetries = await clientOf(key, { retry: { maxAttempts: 1 } })
      .jobs.list()
      .catch((e: unknown) => e);
    const shortBudget = await clientOf(key, { retry: { maxWaitMs: 500 } })
      .jobs.list()
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(1_000); // a wait would have been 1 s at least
    for (const err of [noRetries, shortBudget]) {
      expect(err).toBeInstanceOf(RateLimitError);
      expect(err).toMatchObject({ code: 'rate_limited', status: 429, retryable: true });
      expect([1, 2]).toContain((err as RateLimitError).retryAfter);
    }

    const retries: RetryEvent[] = [];
    const patient = clientOf(key, { onRetry: (e) => retries.push(e) });
    const waitFrom = Date.now();
    expect(await patient.jobs.list()).toEqual({ jobs: [], count: 0, next_cursor: null });
    expect(retries).toHaveLength(1);
    const [retry] = retries;
    expect(retry).toMatchObject({ method: 'GET', path: '/jobs/status', attempt: 1 });
    expect(retry!.error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(retry!.delayMs).toBe(retry!.error.retryAfter! * 1000);
    expect(Date.now() - waitFrom).toBeGreaterThanOrEqual(retry!.delayMs);
    expect(Date.now()).toBeGreaterThanOrEqual(end);
  }, 90_000);
});
