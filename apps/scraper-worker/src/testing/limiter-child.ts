// Test fixture: a separate process that takes `count` slots of one job's budget and sends
// back when each was granted (see rate-limiter.test.ts).
import { Redis } from 'ioredis';
import { JobRateLimiter } from '../rate-limiter.ts';

const [redisUrl = '', prefix = '', jobId = '', perMinute = '60', count = '1'] = process.argv.slice(2);
const redis = new Redis(redisUrl);
const limiter = new JobRateLimiter(redis, prefix);
const times: number[] = [];
for (let i = 0; i < Number(count); i++) {
  await limiter.acquire(jobId, Number(perMinute));
  times.push(Date.now());
}
process.send?.(times);
redis.disconnect();
