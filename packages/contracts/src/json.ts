import type { z } from 'zod';

/** Levels a free-form JSON value of a request may nest (docs/api.md §8); `{}` and `[]` are one level. */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether `value` nests more than `limit` levels of objects and arrays. Iterative and stops at the
 * first branch past the limit, so a hostile value costs no stack and at most one pass.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth === limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Bounds a free-form JSON field's nesting (docs/api.md §8), before anything stores or walks it. */
export const boundedJson = <T extends z.ZodType>(schema: T) =>
  schema.refine((value) => !nestsDeeperThan(value, MAX_JSON_DEPTH), {
    message: `must not nest more than ${MAX_JSON_DEPTH} levels of objects and arrays`,
  });
