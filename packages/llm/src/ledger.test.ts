import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { REDIS_URL, testPrefix } from '../../../test/support/redis.ts';
import { TokenLedger } from './index.ts';

const { prefix, cleanup } = testPrefix();
const redis = new Redis(REDIS_URL);
afterAll(async () => {
  await cleanup();
  redis.disconnect();
});

describe('TokenLedger', () => {
  it('lets an account spend up to its daily tokens, then refuses with LLM_BUDGET until the next UTC day', async () => {
    let now = new Date('2026-12-01T23:59:00.000Z');
    const ledger = new TokenLedger(redis, prefix, 1000, () => now);
    await ledger.check('usr_a');
    await ledger.spend('usr_a', 600);
    await ledger.check('usr_a');
    await ledger.spend('usr_a', 600);
    await expect(ledger.check('usr_a')).rejects.toMatchObject({ code: 'LLM_BUDGET' });
    await expect(ledger.check('usr_b')).resolves.toBeUndefined();
    expect(await ledger.usage('usr_a')).toEqual({
      used: 1200,
      limit: 1000,
      dayStart: new Date('2026-12-01T00:00:00.000Z'),
      dayEnd: new Date('2026-12-02T00:00:00.000Z'),
    });
    now = new Date('2026-12-02T00:00:01.000Z');
    await expect(ledger.check('usr_a')).resolves.toBeUndefined();
    expect((await ledger.usage('usr_a')).used).toBe(0);
  });

  it('counts without limiting when the limit is 0', async () => {
    const ledger = new TokenLedger(redis, `${prefix}x`, 0);
    await ledger.spend('usr_c', 10 ** 9);
    await expect(ledger.check('usr_c')).resolves.toBeUndefined();
    expect(await ledger.usage('usr_c')).toMatchObject({ used: 10 ** 9, limit: null });
  });
});
