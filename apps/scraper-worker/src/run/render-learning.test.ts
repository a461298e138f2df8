import { Redis } from 'ioredis';
import { REDIS_URL, testPrefix } from '../../../../test/support/redis.ts';
import {
  PLAIN_AFTER,
  RENDER_AFTER,
  RenderLearning,
  type RenderPlan,
  SAMPLE_EVERY,
} from './render-learning.ts';

const prefix = testPrefix();
const redis = new Redis(REDIS_URL);
let n = 0;
const jobId = () => `job_${++n}`;

afterAll(async () => {
  await prefix.cleanup();
  redis.disconnect();
});

/** The plans of the next `count` pages of a host. */
async function plans(
  learning: RenderLearning,
  job: string,
  host: string,
  count: number,
): Promise<RenderPlan[]> {
  const out: RenderPlan[] = [];
  for (let i = 0; i < count; i++) out.push(await learning.plan(job, host));
  return out;
}

async function noteMany(learning: RenderLearning, job: string, host: string, needed: boolean, count: number) {
  for (let i = 0; i < count; i++) await learning.note(job, host, needed);
}

describe('RenderLearning', () => {
  const learning = new RenderLearning(redis, prefix.prefix);

  it('checks every page of a host it knows nothing of', async () => {
    expect(new Set(await plans(learning, jobId(), 'a.test:80', 12))).toEqual(new Set(['check']));
  });

  it('renders a host directly once enough pages in a row needed it, still sampling one in SAMPLE_EVERY', async () => {
    const job = jobId();
    await noteMany(learning, job, 'spa.test:80', true, RENDER_AFTER - 1);
    expect(await learning.plan(job, 'spa.test:80')).toBe('check');
    await learning.note(job, 'spa.test:80', true);
    const next = await plans(learning, job, 'spa.test:80', 2 * SAMPLE_EVERY);
    expect(next.filter((plan) => plan === 'check')).toHaveLength(2);
    expect(next.filter((plan) => plan === 'render')).toHaveLength(2 * SAMPLE_EVERY - 2);
  });

  it('stops sparing renders for query misses after enough static pages, and learns again when one needs it', async () => {
    const job = jobId();
    await noteMany(learning, job, 'news.test:80', false, PLAIN_AFTER);
    expect(
      (await plans(learning, job, 'news.test:80', SAMPLE_EVERY)).filter((p) => p === 'plain'),
    ).toHaveLength(SAMPLE_EVERY - 1);
    await learning.note(job, 'news.test:80', true);
    expect(await learning.plan(job, 'news.test:80')).toBe('check');
  });

  it('keeps what it learns apart per job and per host', async () => {
    const job = jobId();
    await noteMany(learning, job, 'spa.test:80', true, RENDER_AFTER);
    expect(await learning.plan(job, 'other.test:80')).toBe('check');
    expect(await learning.plan(jobId(), 'spa.test:80')).toBe('check');
    expect(await learning.plan(job, 'spa.test:80')).toBe('render');
  });

  it('is shared by every worker: another connection sees what one learned', async () => {
    const job = jobId();
    const other = new Redis(REDIS_URL);
    try {
      await noteMany(new RenderLearning(other, prefix.prefix), job, 'spa.test:80', true, RENDER_AFTER);
      expect(await learning.plan(job, 'spa.test:80')).toBe('render');
    } finally {
      other.disconnect();
    }
  });
});
