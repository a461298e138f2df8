import { Redis } from 'ioredis';
import { REDIS_URL, testPrefix } from '../../../../test/support/redis.ts';
import { SIGN_IN_LIMITS, SignInLimiter } from './sign-in-limit.ts';

const prefix = testPrefix();
const redis = new Redis(REDIS_URL);
afterAll(async () => {
  redis.disconnect();
  await prefix.cleanup();
});

describe('sign-in rate limit', () => {
  it('blocks an email and address after 5 failures for the rest of the 15-minute window', async () => {
    const limiter = new SignInLimiter(redis, `${prefix.prefix}a`);
    for (let i = 0; i < 4; i++) await limiter.recordFailure('a@example.com', '10.0.0.1');
    expect(await limiter.blockedFor('a@example.com', '10.0.0.1')).toBe(0);
    await limiter.recordFailure('a@example.com', '10.0.0.1');
    const wait = await limiter.blockedFor('a@example.com', '10.0.0.1');
    expect(wait).toBeGreaterThan(15 * 60 - 5);
    expect(wait).toBeLessThanOrEqual(15 * 60);
    // Another account from that address, and that account from elsewhere, are not blocked.
    expect(await limiter.blockedFor('b@example.com', '10.0.0.1')).toBe(0);
    expect(await limiter.blockedFor('a@example.com', '10.0.0.2')).toBe(0);
  });

  it('does not extend the window with later failures', async () => {
    const limiter = new SignInLimiter(redis, `${prefix.prefix}b`);
    await limiter.recordFailure('a@example.com', '10.0.0.1');
    const key = (await redis.keys(`${prefix.prefix}b:console:signin:acct:*`))[0]!;
    await redis.expire(key, 100);
    await limiter.recordFailure('a@example.com', '10.0.0.1');
    expect(await redis.ttl(key)).toBeLessThanOrEqual(100);
  });

  it('clears the account counter after a successful sign-in', async () => {
    const limiter = new SignInLimiter(redis, `${prefix.prefix}c`);
    for (let i = 0; i < 4; i++) await limiter.recordFailure('a@example.com', '10.0.0.1');
    await limiter.recordSuccess('a@example.com', '10.0.0.1');
    for (let i = 0; i < 4; i++) await limiter.recordFailure('a@example.com', '10.0.0.1');
    expect(await limiter.blockedFor('a@example.com', '10.0.0.1')).toBe(0);
  });

  it('blocks an address that tries many accounts', async () => {
    const rules = { ...SIGN_IN_LIMITS, perAddress: { failures: 3, windowSeconds: 60 } };
    const limiter = new SignInLimiter(redis, `${prefix.prefix}d`, rules);
    for (const user of ['a', 'b', 'c']) await limiter.recordFailure(`${user}@example.com`, '10.0.0.9');
    expect(await limiter.blockedFor('z@example.com', '10.0.0.9')).toBeGreaterThan(55);
  });
});
