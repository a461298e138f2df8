import { z } from 'zod';
import { boundedJson, MAX_JSON_DEPTH, nestsDeeperThan } from './json.ts';

const nested = (levels: number, wrap: (inner: unknown) => unknown): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = wrap(value);
  return value;
};

describe('nestsDeeperThan', () => {
  it('counts objects and arrays as levels, scalars as none', () => {
    expect(nestsDeeperThan('text', 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: 2 }] }, 2)).toBe(true);
    expect(nestsDeeperThan({ a: [1, { b: 2 }] }, 3)).toBe(false);
  });

  it('finds the one deep branch among wide shallow ones', () => {
    const wide = Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`k${i}`, { v: i }]));
    expect(nestsDeeperThan({ ...wide, deep: nested(40, (v) => [v]) }, MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(wide, MAX_JSON_DEPTH)).toBe(false);
  });

  it('walks a value nested far past any stack without recursion', () => {
    expect(
      nestsDeeperThan(
        nested(200_000, (v) => ({ a: v })),
        MAX_JSON_DEPTH,
      ),
    ).toBe(true);
  });
});

describe('boundedJson', () => {
  const schema = boundedJson(z.record(z.string(), z.unknown()));

  it('takes a value at the limit and refuses one past it', () => {
    expect(schema.safeParse(nested(MAX_JSON_DEPTH, (v) => ({ a: v }))).success).toBe(true);
    const refused = schema.safeParse(nested(MAX_JSON_DEPTH + 1, (v) => ({ a: v })));
    expect(refused.error?.issues.map((i) => i.message)).toEqual([
      `must not nest more than ${MAX_JSON_DEPTH} levels of objects and arrays`,
    ]);
  });
});
