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

describe('parseRetryAfter with the cap of a host pause', () => {
  const now = Date.parse('Wed, 21 Oct 2026 07:28:00 GMT');

  it('reads seconds and HTTP dates, a date past being no wait', () => {
    expect(parseRetryAfter('120', now, 600_000)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now, 600_000)).toBe(0);
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:28:30 GMT', now, 600_000)).toBe(30_000);
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:27:00 GMT', now, 600_000)).toBe(0);
  });

  it('caps the wait', () => {
    expect(parseRetryAfter('86400', now, 600_000)).toBe(600_000);
    expect(parseRetryAfter('Thu, 22 Oct 2026 07:28:00 GMT', now, 2_000)).toBe(2_000);
  });

  it('takes nothing from a missing or malformed value', () => {
    expect(parseRetryAfter(undefined, now, 600_000)).toBeUndefined();
    expect(parseRetryAfter('-1', now, 600_000)).toBeUndefined();
    expect(parseRetryAfter('1.5', now, 600_000)).toBeUndefined();
    expect(parseRetryAfter('soon', now, 600_000)).toBeUndefined();
  });
});
