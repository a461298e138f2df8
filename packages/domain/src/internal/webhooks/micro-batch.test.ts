import { microBatch } from './micro-batch.ts';

describe('microBatch', () => {
  it('runs calls of the same event-loop turn as one batch and answers each in order', async () => {
    const batches: number[][] = [];
    const double = microBatch(async (xs: number[]) => {
      batches.push(xs);
      return xs.map((x) => x * 2);
    });
    expect(await Promise.all([double(1), double(2), double(3)])).toEqual([2, 4, 6]);
    expect(await double(4)).toBe(8);
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it('fails every call of a failed batch, and caps the batch size', async () => {
    const sizes: number[] = [];
    const boom = microBatch(async (xs: number[]) => {
      sizes.push(xs.length);
      if (xs.includes(0)) throw new Error('database down');
      return xs;
    }, 2);
    const results = await Promise.allSettled([boom(0), boom(1), boom(2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect(sizes).toEqual([2, 1]);
  });
});
