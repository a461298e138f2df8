import type { Parsed } from './types.ts';

/** The value of a parse that must succeed (tests). */
export function parsedValue<T>(parsed: Parsed<T>): T {
  if (!parsed.ok) throw new Error(`expected a valid request, got ${JSON.stringify(parsed.details)}`);
  return parsed.value;
}

/** The details of a parse that must fail (tests), through JSON as a client sees them. */
export function detailsOf<T>(parsed: Parsed<T>): Record<string, string> {
  if (parsed.ok) throw new Error('expected a 400');
  return JSON.parse(JSON.stringify(parsed.details)) as Record<string, string>;
}
