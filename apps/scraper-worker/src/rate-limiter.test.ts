import { fork } from 'node:child_process';
import { Redis } from 'ioredis';
import { countScriptCalls, REDIS_URL, testPrefix } from '../../../test/support/redis.ts';
import { JobRateLimiter, type Start } from './rate-limiter.ts';

const prefix = testPrefix();
const redis = new Redis(REDIS_URL);
const limiter = new JobRateLimiter(redis, prefix.prefix);
afterAll(async () => {
  await prefix.cleanup();
  redis.disconnect();
});

const CHILD = new URL('../../../test/fixtures/limiter-child.ts', import.meta.url).pathname;

/**
 * Redis's clock (epoch ms), asked on the limiter's own connection: Redis reads it after every
 * command the limiter sent before, and before every command it sends after.
 */
const redisNow = async () => {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
};
/** A start taken, as `acquire` resolves it when it takes one (a time when it does not). */
const taken = expect.objectContaining({ giveBack: expect.any(Function) });

/** The slot a job's last start took: its budget holds the next one, an interval on. */
const lastSlot = async (jobId: string, perMinute: number) =>
  Number(await redis.get(`${prefix.prefix}:job-rate:${jobId}`)) - 60_000 / perMinute;

describe('JobRateLimiter', () => {
  it('spaces the starts of three processes sharing one job budget evenly', async () => {
    const take = () =>
      new Promise<number[]>((resolve, reject) => {
        const child = fork(CHILD, [REDIS_URL, prefix.prefix, 'job_shared', '600', '5']);
        child.on('message', (m) => resolve(m as number[]));
        child.on('error', reject);
      });
    const all = (await Promise.all([take(), take(), take()])).flat().sort((a, b) => a - b);
    expect(all).toHaveLength(15);
    // 600 per minute = one start every 100 ms across the fleet, never a burst: any one-second
    // window holds 10 starts (one more when a timer fires late on a loaded machine).
    const perWindow = all.map((t) => all.filter((u) => u >= t && u < t + 1_000).length);
    expect(Math.max(...perWindow)).toBeLessThanOrEqual(11);
    expect(all.at(-1)! - all[0]!).toBeGreaterThanOrEqual(14 * 95);
  });

  it('takes a new slot when it wakes up past the next one, as a paused process would', async () => {
    // Asked together, so that nothing comes between the grants: now, and the slot 100 ms on.
    const first = limiter.acquire('job_late', 600);
    const second = limiter.acquire('job_late', 600);
    // Redis answers in order: once this is answered, the second has read its grant and waits.
    await redis.ping();
    const heldUntil = Date.now() + 400;
    while (Date.now() < heldUntil); // this process is held up past that slot
    const holdEnded = redisNow();
    await Promise.all([first, second]);
    // Starting in the stale slot would leave the budget behind, and the next start would follow
    // at once: a burst. A new slot is taken after the hold, and the budget goes on from there.
    expect(await lastSlot('job_late', 600)).toBeGreaterThanOrEqual(await holdEnded);
  });

  it('takes a new slot when the answer for a slot due now is read past the next one', async () => {
    await limiter.acquire('job_held', 600); // now; the next slot is 100 ms on
    await new Promise((r) => setTimeout(r, 150)); // so the next one is due at once
    const granted = limiter.acquire('job_held', 600);
    const heldUntil = Date.now() + 400;
    while (Date.now() < heldUntil); // held up before it reads Redis's answer
    const holdEnded = redisNow();
    await granted;
    expect(await lastSlot('job_held', 600)).toBeGreaterThanOrEqual(await holdEnded);
  });

  it('gives separate jobs separate budgets, and aborts a wait at once', async () => {
    const started = Date.now();
    await limiter.acquire('job_a', 1);
    await limiter.acquire('job_b', 1);
    expect(Date.now() - started).toBeLessThan(500);
    const controller = new AbortController();
    setTimeout(() => controller.abort('cancel'), 100);
    await expect(limiter.acquire('job_a', 1, controller.signal)).rejects.toBe('cancel');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('takes no slot further away than the caller will wait, and says when it comes', async () => {
    // 6 a minute: one start every 10 s.
    expect(await limiter.acquire('job_slow', 6, undefined, 1_000)).toEqual(taken);
    const asked = Date.now();
    const later = await limiter.acquire('job_slow', 6, undefined, 1_000);
    expect(Date.now() - asked).toBeLessThan(500);
    expect(later).toBeGreaterThanOrEqual(asked + 9_000);
    expect(later).toBeLessThanOrEqual(asked + 10_500);
    // Nothing was taken: the slot it named is still the next one.
    const again = (await limiter.acquire('job_slow', 6, undefined, 1_000)) as number;
    expect(Math.abs(again - (later as number))).toBeLessThan(200);
  });

  it('says how long until a job may start its next request, taking nothing', async () => {
    expect(await limiter.untilNextStart('job_peek')).toBe(0);
    expect(await limiter.acquire('job_peek', 6, undefined, 1_000)).toEqual(taken);
    const wait = await limiter.untilNextStart('job_peek');
    expect(wait).toBeGreaterThan(9_000);
    expect(wait).toBeLessThanOrEqual(10_000);
    expect(await limiter.untilNextStart('job_peek')).toBeLessThanOrEqual(wait);
    // The peek took no slot: the next start is still the one it named.
    expect(await limiter.acquire('job_peek', 6, undefined, 1_000)).toEqual(expect.any(Number));
  });

  it('gives a start back to the budget when its request did not start, unless a later one was taken', async () => {
    // 6 a minute: one start every 10 s.
    const first = await limiter.acquire('job_back', 6, undefined, 1_000);
    await (first as Start).giveBack();
    expect(await limiter.untilNextStart('job_back')).toBe(0);
    // Its slot is free again: taken at once, not 10 s on.
    const second = await limiter.acquire('job_back', 6, undefined, 1_000);
    expect(second).toEqual(taken);
    expect(await limiter.untilNextStart('job_back')).toBeGreaterThan(9_000);
    // A third start waits for the slot 10 s on; the second's given back now would be a burst.
    const controller = new AbortController();
    const third = limiter.acquire('job_back', 6, controller.signal, 20_000);
    await redis.ping();
    await (second as Start).giveBack();
    expect(await limiter.untilNextStart('job_back')).toBeGreaterThan(19_000);
    // The third's wait aborted: its slot goes back, and the next start is the one it waited for.
    controller.abort('cancel');
    await expect(third).rejects.toBe('cancel');
    const next = await limiter.untilNextStart('job_back');
    expect(next).toBeGreaterThan(8_000);
    expect(next).toBeLessThanOrEqual(10_000);
  });

  it('asks Redis once for the callers that ask together, each taking the next slot', async () => {
    const own = new Redis(REDIS_URL);
    const batched = new JobRateLimiter(own, prefix.prefix);
    const calls = countScriptCalls(own);
    try {
      const asked = Date.now();
      // 600 a minute: one start every 100 ms.
      const starting = Promise.all(
        Array.from({ length: 4 }, () => batched.acquire('job_together', 600).then(() => Date.now())),
      );
      // Counted once the asks have gone out: a caller held up past its slot afterwards (a timer
      // late on a loaded machine) takes a new one with a call of its own, as it should.
      await new Promise((resolve) => setImmediate(resolve));
      expect(calls()).toBe(1);
      const started = await starting;
      started.sort((a, b) => a - b);
      expect(started[3]! - asked).toBeGreaterThanOrEqual(295);
      for (let i = 1; i < 4; i++) expect(started[i]! - started[i - 1]!).toBeGreaterThanOrEqual(90);
      expect(await batched.untilNextStart('job_together')).toBeGreaterThan(0);
    } finally {
      own.disconnect();
    }
  });

  it('gives the first slot of a batch to the caller that waits least, and refuses one too far without taking it', async () => {
    // 6 a minute: one start every 10 s.
    const controller = new AbortController();
    const asked = Date.now();
    const patient = limiter.acquire('job_mixed', 6, controller.signal, 25_000);
    const [first, refused] = await Promise.all([
      limiter.acquire('job_mixed', 6, undefined, 1_000),
      limiter.acquire('job_mixed', 6, undefined, 1_000),
    ]);
    expect(first).toEqual(taken);
    // The second slot is 10 s away: too far for the second caller, which takes nothing, and the
    // patient one waits for it.
    expect(refused).toBeGreaterThanOrEqual(asked + 9_000);
    expect(refused).toBeLessThanOrEqual(asked + 10_500);
    const wait = await limiter.untilNextStart('job_mixed');
    expect(wait).toBeGreaterThan(19_000);
    controller.abort('cancel');
    await expect(patient).rejects.toBe('cancel');
    expect(await limiter.untilNextStart('job_mixed')).toBeLessThanOrEqual(10_000);
  });

  it('gives the starts of a batch back in turn, each freeing its own slot', async () => {
    // 6 a minute: one start every 10 s.
    const second = new AbortController();
    const third = new AbortController();
    const starts = [
      limiter.acquire('job_batch_back', 6, undefined, 25_000),
      limiter.acquire('job_batch_back', 6, second.signal, 25_000),
      limiter.acquire('job_batch_back', 6, third.signal, 25_000),
    ];
    const first = (await starts[0]) as Start;
    expect(await limiter.untilNextStart('job_batch_back')).toBeGreaterThan(29_000);
    third.abort('cancel');
    await expect(starts[2]).rejects.toBe('cancel');
    const afterThird = await limiter.untilNextStart('job_batch_back');
    expect(afterThird).toBeGreaterThan(19_000);
    expect(afterThird).toBeLessThanOrEqual(20_000);
    second.abort('cancel');
    await expect(starts[1]).rejects.toBe('cancel');
    const afterSecond = await limiter.untilNextStart('job_batch_back');
    expect(afterSecond).toBeGreaterThan(9_000);
    expect(afterSecond).toBeLessThanOrEqual(10_000);
    await first.giveBack();
    expect(await limiter.untilNextStart('job_batch_back')).toBe(0);
  });
});
