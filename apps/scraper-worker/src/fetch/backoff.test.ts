import { describe, expect, test } from '@jest/globals';
import { backoffDelay, parseRetryAfter, RETRY_AFTER_CAP_MS, sleep } from './backoff.ts';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-21T10:00:00.000Z');

  test('reads delay seconds', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
  });

  test('reads an HTTP date as the time left until it', () => {
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:00:05 GMT', now)).toBe(5000);
  });

  test('treats an HTTP date in the past as no wait', () => {
    expect(parseRetryAfter('Sat, 21 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });

  test('caps long waits at 60 s', () => {
    expect(parseRetryAfter('86400', now)).toBe(RETRY_AFTER_CAP_MS);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:00 GMT', now)).toBe(RETRY_AFTER_CAP_MS);
  });

  test('ignores a missing or unreadable value', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  test('doubles per retry between half and all of the ceiling', () => {
    expect([1, 2, 3].map((n) => backoffDelay(n, () => 0))).toEqual([250, 500, 1000]);
    expect([1, 2, 3].map((n) => backoffDelay(n, () => 1))).toEqual([500, 1000, 2000]);
  });

  test('stops growing at 10 s', () => {
    expect(backoffDelay(30, () => 1)).toBe(10_000);
  });
});

describe('sleep', () => {
  test('rejects with the abort reason as soon as the signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error('stop')), 20);
    await expect(sleep(10_000, controller.signal)).rejects.toThrow('stop');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
