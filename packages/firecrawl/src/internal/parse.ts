import { boundedJson, issuesToDetails, MAX_JSON_DEPTH, nestsDeeperThan } from '@scrapejobs/contracts';
import { extractSchemaProblem } from '@scrapejobs/llm';
import { z } from 'zod';
import type { Invalid, Parsed } from './types.ts';

/** A 400 answer from field path → problem, its message naming the first one. */
export function invalid(details: Record<string, string>): Invalid {
  const entries = Object.entries(details);
  const [first] = entries;
  const more = entries.length > 1 ? ` (and ${entries.length - 1} more: see details)` : '';
  const message = first
    ? `The request is invalid: ${first[0]}: ${first[1]}${more}.`
    : 'The request is invalid.';
  return { ok: false, message, details };
}

/** Parses `body` with `schema`; violations become an Invalid keyed by field path. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): Parsed<T> {
  const parsed = schema.safeParse(body);
  return parsed.success ? { ok: true, value: parsed.data } : invalid(issuesToDetails(parsed.error.issues));
}

/** An option this service cannot honour: present (and not null), it is a 400 naming it. */
export const unsupportedOption = (name: string) =>
  z
    .unknown()
    .optional()
    .superRefine((value, ctx) => {
      if (value !== undefined && value !== null)
        ctx.addIssue({ code: 'custom', message: `the option "${name}" is not supported by this service` });
    });

/** A boolean option this service honours only at `allowed`: the other value is a 400 saying why. */
export const onlyBoolean = (allowed: boolean, why: string) =>
  z
    .boolean()
    .optional()
    .refine(
      (value) => value === undefined || value === allowed,
      `${!allowed} is not supported by this service: ${why}`,
    );

/** Fields the SDKs send for their own bookkeeping: accepted, never used. */
export const bookkeepingFields = {
  origin: z.string().optional(),
  integration: z.string().nullable().optional(),
  auditMetadata: boundedJson(z.unknown()).optional(),
} as const;

/** Firecrawl's `zeroDataRetention`: only false, since a crawl's pages are kept until it expires. */
export const zeroDataRetention = onlyBoolean(false, 'documents are kept until the crawl expires');

export type Issue = { path: PropertyKey[]; message: string };

/** Issues of a nested parse, with the texts of the rest of the API, their paths under `prefix`. */
export function nestedIssues(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[] = []): Issue[] {
  return issues.flatMap((issue): Issue[] => {
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => ({ path: [...prefix, ...issue.path, key], message: 'unknown field' }));
    const [text] = Object.values(issuesToDetails([{ ...issue, path: [] }]));
    return [{ path: [...prefix, ...issue.path], message: text ?? issue.message }];
  });
}

/** Reports `issues` on `ctx`; true when there were any. */
export function report(issues: readonly Issue[], ctx: z.RefinementCtx): boolean {
  for (const issue of issues) ctx.addIssue({ code: 'custom', path: [...issue.path], message: issue.message });
  return issues.length > 0;
}

/** Why a json format's or extraction's schema cannot be used (too deep, not of an object, not compiling), or null. */
export const schemaProblem = (schema: Record<string, unknown>): string | null =>
  nestsDeeperThan(schema, MAX_JSON_DEPTH)
    ? `must not nest more than ${MAX_JSON_DEPTH} levels of objects and arrays`
    : extractSchemaProblem(schema);
