import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Lua that sets `now` to Redis's clock in ms, for a script's start: the fleet's processes agree on
 * it whatever their own clocks say.
 */
export const REDIS_NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * A Lua script run by its SHA-1 (EVALSHA): its text goes to Redis only when Redis does not know it
 * yet (first use, or after a restart), not with every call.
 */
export class LuaScript {
  readonly #text: string;
  readonly #sha: string;

  constructor(text: string) {
    this.#text = text;
    this.#sha = createHash('sha1').update(text).digest('hex');
  }

  async run(redis: Redis, keys: number, ...args: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.#sha, keys, ...args);
    } catch (err) {
      if (!(err as Error).message?.startsWith('NOSCRIPT')) throw err;
      return redis.eval(this.#text, keys, ...args);
    }
  }
}
