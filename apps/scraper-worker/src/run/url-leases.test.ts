import { Redis } from 'ioredis';
import { REDIS_URL, testPrefix } from '../../../../test/support/redis.ts';
import { UrlLeases } from './url-leases.ts';

const prefix = testPrefix();
const redis = new Redis(REDIS_URL);
afterAll(async () => {
  await prefix.cleanup();
  redis.disconnect();
});

const heldInRedis = (userId: string) => redis.zcard(`${prefix.prefix}:user-urls:${userId}`);

describe('UrlLeases', () => {
  it("bounds one user's places across processes, and a place let go is reused before it is given back", async () => {
    const a = new UrlLeases(redis, prefix.prefix, { maxPerUser: 4, leaseMs: 60_000 });
    const b = new UrlLeases(redis, prefix.prefix, { maxPerUser: 4, leaseMs: 60_000 });
    const first = await a.take('usr_1', 3);
    expect(first).toHaveLength(3);
    expect(await b.take('usr_1', 3)).toHaveLength(1);
    expect(await b.take('usr_2', 3)).toHaveLength(3);

    // Let go, a place stays this process's: the other one cannot take it meanwhile.
    a.letGo('usr_1', first.slice(0, 2));
    expect(await b.take('usr_1', 1)).toEqual([]);
    expect(await a.take('usr_1', 1)).toEqual([first[0]]);
    expect(await heldInRedis('usr_1')).toBe(4);

    // Given back at the next look, it is the fleet's again.
    await a.giveBack();
    expect(await heldInRedis('usr_1')).toBe(3);
    expect(await b.take('usr_1', 2)).toHaveLength(1);
  });

  it('gives back every place let go in one call per user, and none twice', async () => {
    const leases = new UrlLeases(redis, prefix.prefix, { maxPerUser: 10, leaseMs: 60_000 });
    const places = await leases.take('usr_3', 5);
    leases.letGo('usr_3', places);
    await leases.giveBack();
    expect(await heldInRedis('usr_3')).toBe(0);
    await leases.giveBack();
    expect(await leases.take('usr_3', 10)).toHaveLength(10);
  });

  it("frees a dead process's places when their lease runs out, while a live one keeps its own by renewing", async () => {
    const dead = new UrlLeases(redis, prefix.prefix, { maxPerUser: 2, leaseMs: 300 });
    const live = new UrlLeases(redis, prefix.prefix, { maxPerUser: 2, leaseMs: 300 });
    expect(await dead.take('usr_4', 1)).toHaveLength(1);
    expect(await live.take('usr_4', 1)).toHaveLength(1);
    expect(await live.take('usr_4', 1)).toEqual([]);
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, live.renewEveryMs));
      await live.renew();
    }
    // The dead one's place expired with its lease; the live one's is still taken.
    expect(await live.take('usr_4', 2)).toHaveLength(1);
    expect(await heldInRedis('usr_4')).toBe(2);
  });
});
