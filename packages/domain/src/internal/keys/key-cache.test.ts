import { Redis } from 'ioredis';
import { until } from '../../../../../test/support/processes.ts';
import { REDIS_URL, testPrefix } from '../../../../../test/support/redis.ts';
import type { Principal } from '../principal.ts';
import { KeyCache, redisKeyChanges } from './key-cache.ts';

const prefix = testPrefix();
const connections: Redis[] = [];
const connect = () => {
  const redis = new Redis(REDIS_URL);
  connections.push(redis);
  return redis;
};
afterAll(async () => {
  for (const c of connections) c.disconnect();
  await prefix.cleanup();
});

const alice: Principal = { keyId: 'key_a', userId: 'usr_a', mode: 'test', scopes: ['jobs:read'] };

async function subscribedCache(ttlMs?: number) {
  const cache = new KeyCache(ttlMs);
  const subscriber = connect();
  cache.attach(subscriber, prefix.prefix);
  await until(async () => cache.subscribed);
  return { cache, subscriber };
}

// A publisher of its own, as another API process or the keys tool would use.
const otherProcess = () =>
  redisKeyChanges(connect(), prefix.prefix, {
    onError: (err) => {
      throw err;
    },
  });

describe('KeyCache', () => {
  it('remembers nothing until it is subscribed to key changes', () => {
    const cache = new KeyCache();
    cache.remember('h', alice, cache.generation());
    expect(cache.get('h')).toBeUndefined();
  });

  it('forgets every key when another process announces a change', async () => {
    const { cache } = await subscribedCache();
    cache.remember('h', alice, cache.generation());
    expect(cache.get('h')).toEqual(alice);
    await otherProcess().announce('key_a');
    await until(async () => cache.get('h') === undefined, 2_000, 5);
  });

  it('does not remember a lookup that was under way when a change arrived', async () => {
    const { cache } = await subscribedCache();
    const generation = cache.generation();
    await otherProcess().announce('key_a');
    await until(async () => cache.generation() !== generation, 2_000, 5);
    cache.remember('h', alice, generation);
    expect(cache.get('h')).toBeUndefined();
  });

  it('is not used while its connection is lost, and works again once subscribed anew', async () => {
    const { cache, subscriber } = await subscribedCache();
    cache.remember('h', alice, cache.generation());
    subscriber.disconnect(true);
    await until(async () => !cache.subscribed, 2_000, 5);
    expect(cache.get('h')).toBeUndefined();
    await until(async () => cache.subscribed, 5_000);
    expect(cache.get('h')).toBeUndefined();
    cache.remember('h', alice, cache.generation());
    expect(cache.get('h')).toEqual(alice);
  });

  it('lets an entry expire after its time to live', async () => {
    const { cache } = await subscribedCache(50);
    cache.remember('h', alice, cache.generation());
    expect(cache.get('h')).toEqual(alice);
    await new Promise((r) => setTimeout(r, 80));
    expect(cache.get('h')).toBeUndefined();
  });

  it('announces to the local cache at once, and reports a failed announcement instead of throwing', async () => {
    const { cache } = await subscribedCache();
    cache.remember('h', alice, cache.generation());
    const unreachable = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
    });
    connections.push(unreachable);
    unreachable.on('error', () => {});
    const failures: string[] = [];
    const changes = redisKeyChanges(unreachable, prefix.prefix, {
      local: cache,
      onError: (_err, keyId) => failures.push(keyId),
    });
    await changes.announce('key_a');
    expect(cache.get('h')).toBeUndefined();
    expect(failures).toEqual(['key_a']);
  });
});
