import { timingSafeEqual } from 'node:crypto';

export const CSRF_FIELD = '_csrf';

/** Whether a submitted synchronizer token equals the session's (constant time). */
export function csrfMatches(expected: string, submitted: unknown): boolean {
  if (typeof submitted !== 'string' || submitted.length === 0) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}
