import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { REDIS_URL, testPrefix } from '../../../../test/support/redis.ts';
import { HostCounts } from './host-counts.ts';

const prefix = testPrefix();
const redis = new Redis(REDIS_URL);
afterAll(async () => {
  await prefix.cleanup();
  await redis.quit();
});

const stored = async (key: string) => redis.hgetall(key);

describe('HostCounts', () => {
  it('adds what it counted to Redis in one round trip per flush, summed by field', async () => {
    const key = `${prefix.prefix}:counts-a`;
    const counts = new HostCounts(redis, key, 60_000, (err) => {
      throw err;
    });
    for (let i = 0; i < 5; i++) counts.add('waits');
    counts.add('backoffs:429');
    expect(await stored(key)).toEqual({});
    const sent = jest.spyOn(redis, 'multi');
    await counts.flush();
    expect(sent).toHaveBeenCalledTimes(1);
    sent.mockRestore();
    expect(await stored(key)).toEqual({ waits: '5', 'backoffs:429': '1' });
    counts.add('waits');
    await counts.flush();
    await counts.flush();
    expect(await stored(key)).toEqual({ waits: '6', 'backoffs:429': '1' });
  });

  it('flushes by itself after everyMs', async () => {
    const key = `${prefix.prefix}:counts-b`;
    const counts = new HostCounts(redis, key, 50, (err) => {
      throw err;
    });
    counts.add('waits');
    counts.add('waits');
    for (let i = 0; i < 100 && (await stored(key)).waits === undefined; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await stored(key)).toEqual({ waits: '2' });
  });

  it('keeps the counts it could not add, and adds them with the next flush', async () => {
    const key = `${prefix.prefix}:counts-c`;
    // Redis goes away between two flushes.
    const down = new Redis(REDIS_URL, { enableOfflineQueue: false });
    await new Promise((resolve) => down.once('ready', resolve));
    const ended = new Promise((resolve) => down.once('end', resolve));
    down.disconnect();
    await ended;
    const failures: string[] = [];
    const counts = new HostCounts(down, key, 60_000, (err) => failures.push(err.message));
    counts.add('waits');
    counts.add('backoffs:503');
    await counts.flush();
    expect(failures).toHaveLength(1);
    expect(await stored(key)).toEqual({});
    counts.add('waits');
    await down.connect();
    await counts.flush();
    expect(await stored(key)).toEqual({ waits: '2', 'backoffs:503': '1' });
    await down.quit();
  });
});
