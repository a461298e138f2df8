import { retryAfterMs } from './retry-after.ts';

describe('retryAfterMs', () => {
  const now = Date.parse('Wed, 21 Oct 2026 07:28:00 GMT');

  it('reads seconds and HTTP dates, a date past being no wait', () => {
    expect(retryAfterMs('120', 600_000, now)).toBe(120_000);
    expect(retryAfterMs(' 0 ', 600_000, now)).toBe(0);
    expect(retryAfterMs('Wed, 21 Oct 2026 07:28:30 GMT', 600_000, now)).toBe(30_000);
    expect(retryAfterMs('Wed, 21 Oct 2026 07:27:00 GMT', 600_000, now)).toBe(0);
  });

  it('caps the wait', () => {
    expect(retryAfterMs('86400', 600_000, now)).toBe(600_000);
    expect(retryAfterMs('Thu, 22 Oct 2026 07:28:00 GMT', 2_000, now)).toBe(2_000);
  });

  it('takes nothing from a missing or malformed value', () => {
    expect(retryAfterMs(undefined, 600_000, now)).toBeUndefined();
    expect(retryAfterMs('-1', 600_000, now)).toBeUndefined();
    expect(retryAfterMs('1.5', 600_000, now)).toBeUndefined();
    expect(retryAfterMs('soon', 600_000, now)).toBeUndefined();
  });
});
