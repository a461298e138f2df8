import { type RequestCookie, requestSchema } from '@scrapejobs/contracts';
import { z } from 'zod';
import { type Issue, nestedIssues } from './parse.ts';
import type { FetchSettings } from './types.ts';

/** The user agent of `mobile: true` (Firecrawl emulates a phone). */
export const MOBILE_USER_AGENT =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

/** Firecrawl's `location`: `country` picks a proxy, `languages` the Accept-Language header. */
export const locationSchema = z
  .object({
    country: z
      .string()
      .optional()
      .transform((country, ctx) => {
        if (country === undefined || country === '') return null;
        // Firecrawl's own names for its default pool of US proxies.
        if (/^us-(generic|whitelist)$/i.test(country)) return 'US';
        if (/^[A-Za-z]{2}$/.test(country)) return country.toUpperCase();
        ctx.addIssue({
          code: 'custom',
          message: 'Invalid country code. Use a valid ISO 3166-1 alpha-2 country code.',
        });
        return z.NEVER;
      }),
    languages: z.array(z.string().min(1).max(35)).max(20).optional(),
  })
  .optional();

export const headersSchema = z.record(z.string(), z.string()).optional();

interface FetchInput {
  headers?: Record<string, string> | undefined;
  mobile?: boolean | undefined;
  location?: z.output<typeof locationSchema>;
  skipTlsVerification?: boolean | undefined;
}

const { headers: jobHeaders, cookies: jobCookies, basic_auth: jobBasicAuth } = requestSchema.shape;

function issueText(issues: readonly z.core.$ZodIssue[]): string {
  const [first] = issues;
  if (first === undefined) return 'is invalid';
  const at = first.path.length > 0 ? `${first.path.join('.')}: ` : '';
  return `${at}${first.message}`;
}

function readCookies(value: string, name: string, issues: Issue[]): RequestCookie[] {
  const cookies = value
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq < 0
        ? { name: pair, value: '', domain: null, path: '/' }
        : { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), domain: null, path: '/' };
    });
  const parsed = jobCookies.safeParse(cookies);
  if (parsed.success) return parsed.data;
  issues.push({
    path: ['headers', name],
    message: `is not a valid Cookie header: ${issueText(parsed.error.issues)}`,
  });
  return [];
}

const { authorization: jobAuthorization } = requestSchema.shape;

/**
 * An `Authorization` header: well-formed Basic credentials become the job's `basic_auth` (its user
 * name shown in the job's detail), any other value its `authorization`, sent as given; both are
 * secrets sent only to the URL's origin.
 */
function readAuthorization(value: string, name: string, issues: Issue[], settings: FetchSettings): void {
  const basic = /^Basic\s+([A-Za-z0-9+/=_-]+)$/i.exec(value.trim());
  if (basic !== null) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const parsed = jobBasicAuth.safeParse(
      colon < 0 ? null : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) },
    );
    if (parsed.success && parsed.data !== null) {
      settings.basicAuth = parsed.data;
      return;
    }
  }
  const parsed = jobAuthorization.safeParse(value);
  if (parsed.success) settings.authorization = parsed.data;
  else issues.push(...nestedIssues(parsed.error.issues, ['headers', name]));
}

/**
 * Firecrawl's `headers`, `mobile` and `location` as this service's `request` and proxy country.
 * `Cookie` becomes cookies, `Authorization` the basic credentials or the authorization, `User-Agent` the
 * user agent; the other headers follow the job's header rules. Issue paths are relative to the
 * scrape options.
 */
export function readFetchSettings(input: FetchInput): { settings: FetchSettings; issues: Issue[] } {
  const issues: Issue[] = [];
  const settings: FetchSettings = {
    headers: {},
    cookies: [],
    basicAuth: null,
    authorization: null,
    userAgent: null,
    country: input.location?.country ?? null,
    skipTlsVerification: input.skipTlsVerification ?? false,
  };
  const rest: Record<string, string> = {};
  let userAgentHeader = 'User-Agent';
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    const lower = name.toLowerCase();
    if (lower === 'cookie') settings.cookies.push(...readCookies(value, name, issues));
    else if (lower === 'authorization') readAuthorization(value, name, issues, settings);
    else if (lower === 'user-agent') {
      settings.userAgent = value === '' ? null : value;
      userAgentHeader = name;
    } else rest[name] = value;
  }
  const languages = input.location?.languages;
  if (languages?.length && !Object.keys(rest).some((n) => n.toLowerCase() === 'accept-language'))
    rest['Accept-Language'] = languages.join(', ');
  const headers = jobHeaders.safeParse(rest);
  if (headers.success) settings.headers = headers.data;
  else issues.push(...nestedIssues(headers.error.issues, ['headers']));
  if (settings.userAgent === null && input.mobile === true) settings.userAgent = MOBILE_USER_AGENT;
  if (settings.userAgent !== null && (settings.userAgent.length > 512 || /[\r\n]/.test(settings.userAgent)))
    issues.push({
      path: ['headers', userAgentHeader],
      message: 'must have at most 512 characters and no CR or LF',
    });
  return { settings, issues };
}
