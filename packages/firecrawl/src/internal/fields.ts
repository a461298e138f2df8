import { boundedJson } from '@scrapejobs/contracts';
import { z } from 'zod';
import { nestedIssues, report } from './parse.ts';
import { checkUrlPattern, MAX_PATTERNS, translatePathPattern } from './path-patterns.ts';
import { WEBHOOK_EVENTS, type Webhook } from './types.ts';
import { readInputUrl } from './urls.ts';

/** A page URL as Firecrawl takes it (`example.com` means `http://example.com`). */
export const urlField = z.string().transform((raw, ctx) => {
  const read = readInputUrl(raw);
  if (read.ok) return read.url;
  ctx.addIssue({ code: 'custom', message: read.message });
  return z.NEVER;
});

const webhookObject = z.strictObject({
  url: z.string(),
  headers: z.record(z.string(), z.string()).default({}),
  metadata: boundedJson(z.record(z.string(), z.unknown())).default({}),
  events: z
    .array(z.enum(WEBHOOK_EVENTS))
    .max(4 * WEBHOOK_EVENTS.length)
    .default([...WEBHOOK_EVENTS]),
});

/** Firecrawl's `webhook`: a URL, or `{url, headers, metadata, events}`; null when not given. */
export const webhookSchema = z
  .unknown()
  .optional()
  .transform((webhook, ctx): Webhook | null => {
    if (webhook === undefined || webhook === null) return null;
    const parsed = webhookObject.safeParse(typeof webhook === 'string' ? { url: webhook } : webhook);
    if (!parsed.success) {
      if (typeof webhook !== 'object')
        ctx.addIssue({ code: 'custom', message: 'must be a URL or an object' });
      else report(nestedIssues(parsed.error.issues), ctx);
      return z.NEVER;
    }
    const url = URL.parse(parsed.data.url);
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      ctx.addIssue({
        code: 'custom',
        path: typeof webhook === 'string' ? [] : ['url'],
        message: 'must be an absolute http or https URL',
      });
      return z.NEVER;
    }
    return { ...parsed.data, events: [...new Set(parsed.data.events)] };
  });

/**
 * Firecrawl's `includePaths` / `excludePaths` as job patterns: path patterns translated
 * (translatePathPattern), full-URL patterns (`regexOnFullURL`) kept. Used by a request's
 * transform: problems go to `ctx` at `field[i]`.
 */
export function urlPatterns(
  patterns: readonly string[],
  field: string,
  onFullUrl: boolean,
  ctx: z.RefinementCtx,
): string[] {
  return patterns.flatMap((pattern, at) => {
    const read = onFullUrl ? checkUrlPattern(pattern) : translatePathPattern(pattern);
    if (read.ok) return [read.pattern];
    ctx.addIssue({ code: 'custom', path: [field, at], message: read.message });
    return [];
  });
}

/** A list of path patterns as sent (null as omitted, as the SDKs may send it). */
export const pathPatternsField = z
  .array(z.string().min(1))
  .max(MAX_PATTERNS)
  .nullable()
  .optional()
  .transform((p) => p ?? []);
