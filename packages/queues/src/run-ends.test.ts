import { Redis } from 'ioredis';
import { REDIS_URL, testPrefix } from '../../../test/support/redis.ts';
import { runEndChannel, runEndsHeard } from './index.ts';

const prefix = testPrefix();
const redis = new Redis(REDIS_URL);
const subscribers: Redis[] = [];
afterAll(async () => {
  await prefix.cleanup();
  await Promise.all([redis, ...subscribers].map((connection) => connection.quit()));
});

const failed = (err: Error) => {
  throw err;
};

/** A subscriber of its own, as an API process has. */
async function listening(options: { lazyConnect?: boolean } = {}) {
  const subscriber = new Redis(REDIS_URL, { enableOfflineQueue: false, ...options });
  subscribers.push(subscriber);
  const ends = runEndsHeard(subscriber, prefix.prefix, failed);
  return { subscriber, ends };
}

/** Until every subscriber opened so far listens on the channel. */
async function subscribed() {
  for (;;) {
    const [, count] = (await redis.pubsub('NUMSUB', runEndChannel(prefix.prefix))) as [string, number];
    if (count >= subscribers.length) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('runEndsHeard', () => {
  it("resolves a watch when that run's end is announced, and only that run's", async () => {
    const { ends } = await listening();
    await subscribed();
    const seen: string[] = [];
    const a = ends.watch('run_a');
    const b = ends.watch('run_b');
    const again = ends.watch('run_b');
    void a.ended.then(() => seen.push('a'));
    await redis.publish(runEndChannel(prefix.prefix), 'run_b');
    await Promise.all([b.ended, again.ended]);
    expect(seen).toEqual([]);
    await redis.publish(runEndChannel(prefix.prefix), 'run_a');
    await a.ended;
    expect(seen).toEqual(['a']);
  });

  it('forgets a watch once stopped', async () => {
    const { ends } = await listening();
    await subscribed();
    let heard = false;
    const stopped = ends.watch('run_c');
    void stopped.ended.then(() => {
      heard = true;
    });
    stopped.stop();
    const later = ends.watch('run_d');
    // Announcements come in order: once run_d's is heard, run_c's was handled before it.
    await redis.publish(runEndChannel(prefix.prefix), 'run_c');
    await redis.publish(runEndChannel(prefix.prefix), 'run_d');
    await later.ended;
    expect(heard).toBe(false);
  });

  it('subscribes once its connection is ready, when it was not at first', async () => {
    const { subscriber, ends } = await listening({ lazyConnect: true });
    const watch = ends.watch('run_e');
    await subscriber.connect();
    await subscribed();
    await redis.publish(runEndChannel(prefix.prefix), 'run_e');
    await watch.ended;
  });
});
