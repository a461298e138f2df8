import { Redis } from 'ioredis';
import { REDIS_URL, testPrefix } from '../../../test/support/redis.ts';
import { LuaScript } from './index.ts';

const prefix = testPrefix();
const redis = new Redis(REDIS_URL);
afterAll(async () => {
  await prefix.cleanup();
  redis.disconnect();
});

describe('LuaScript', () => {
  it('runs by its SHA-1, and sends its text again when Redis has forgotten it', async () => {
    const incr = new LuaScript(`return redis.call('INCRBY', KEYS[1], ARGV[1])`);
    const key = `${prefix.prefix}:lua`;
    expect(await incr.run(redis, 1, key, 2)).toBe(2);
    expect(await incr.run(redis, 1, key, 3)).toBe(5);
    // As after a Redis restart: the script cache is empty.
    await redis.script('FLUSH');
    expect(await incr.run(redis, 1, key, 4)).toBe(9);
    await expect(new LuaScript(`return redis.call('NOSUCHCOMMAND')`).run(redis, 0)).rejects.toThrow(
      /Unknown Redis command|unknown command/i,
    );
  });
});
