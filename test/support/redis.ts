import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A queue/key prefix private to one test file, and a way to delete everything under it. */
export function testPrefix(): { prefix: string; cleanup(): Promise<void> } {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  return {
    prefix,
    async cleanup() {
      const redis = new Redis(REDIS_URL);
      try {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length) await redis.unlink(...keys);
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    },
  };
}

/**
 * Counts the Lua scripts a connection runs from now on: scripts go by their SHA-1 (LuaScript),
 * every call one EVALSHA. Returns the count so far.
 */
export function countScriptCalls(connection: Redis): () => number {
  let calls = 0;
  const evaluate = connection.evalsha.bind(connection);
  connection.evalsha = ((...args: Parameters<typeof evaluate>) => {
    calls++;
    return evaluate(...args);
  }) as typeof connection.evalsha;
  return () => calls;
}
