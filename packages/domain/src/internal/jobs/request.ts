import { type RequestSettings, SECRET_MASK } from '@scrapejobs/contracts';
import { expandGlob } from '@scrapejobs/extraction';
import type { SecretBox } from '@scrapejobs/outbound';
import { z } from 'zod';

/**
 * A job's `request` as stored (docs/api.md §14): header values, cookie values, the password and
 * the authorization sealed with the key of webhook secrets; each cookie's domain filled in (`host_only` when it is
 * the source's host by default, as a browser keeps a cookie set without a Domain attribute).
 */
export const storedRequestSchema = z.object({
  headers: z.record(z.string(), z.string()),
  cookies: z.array(
    z.object({
      name: z.string(),
      value: z.string(),
      domain: z.string(),
      host_only: z.boolean(),
      path: z.string(),
    }),
  ),
  basic_auth: z.object({ username: z.string(), password: z.string() }).nullable(),
  user_agent: z.string().nullable(),
  /** The sealed Authorization header value of any scheme (docs/api.md §14). */
  authorization: z.string().nullable().default(null),
  skip_tls_verification: z.boolean().default(false),
});

export type StoredRequest = z.output<typeof storedRequestSchema>;

/** A job's request with its secrets in the clear, for the worker that sends it (never stored, never logged). */
export type OpenedRequest = Omit<StoredRequest, 'cookies'> & {
  cookies: { name: string; value: string; domain: string; hostOnly: boolean; path: string }[];
};

/** The sealed values of a job are bound to it: a value copied to another job does not open. */
const context = (jobId: string) => `job:${jobId}:request`;

/** The host of a source's first URL, the default domain of its cookies. */
function sourceHost(source: string): string {
  const expanded = expandGlob(source, 1);
  const first = expanded.ok ? expanded.urls[0] : source;
  return URL.parse(first ?? '')?.hostname.toLowerCase() ?? '';
}

/**
 * The request to store for `input`: each secret sealed, or, where the client sent the mask back,
 * the value stored before under the same header name (any case), cookie (name, domain, path) or
 * user name.
 */
export function sealRequest(
  box: SecretBox,
  jobId: string,
  input: RequestSettings | null,
  previous: StoredRequest | null,
  source: string,
): StoredRequest | null {
  if (!input) return null;
  const seal = (value: string, kept: string | undefined) =>
    value === SECRET_MASK && kept !== undefined ? kept : box.seal(value, context(jobId));
  const oldHeaders = new Map(Object.entries(previous?.headers ?? {}).map(([n, v]) => [n.toLowerCase(), v]));
  const host = sourceHost(source);
  return {
    headers: Object.fromEntries(
      Object.entries(input.headers).map(([name, value]) => [
        name,
        seal(value, oldHeaders.get(name.toLowerCase())),
      ]),
    ),
    cookies: input.cookies.map((c) => {
      const domain = c.domain ?? host;
      const kept = previous?.cookies.find(
        (o) => o.name === c.name && o.domain === domain && o.path === c.path,
      );
      return {
        name: c.name,
        value: seal(c.value, kept?.value),
        domain,
        // The detail shows the default domain (the host); sent back with the mask, it stays host-only.
        host_only: c.domain === null || (c.value === SECRET_MASK && kept?.host_only === true),
        path: c.path,
      };
    }),
    basic_auth: input.basic_auth && {
      username: input.basic_auth.username,
      password: seal(input.basic_auth.password, previous?.basic_auth?.password),
    },
    user_agent: input.user_agent,
    authorization:
      input.authorization === null ? null : seal(input.authorization, previous?.authorization ?? undefined),
    skip_tls_verification: input.skip_tls_verification,
  };
}

/** The request as every answer shows it: secrets masked. */
export function maskRequest(stored: StoredRequest | null): RequestSettings | null {
  if (!stored) return null;
  return {
    headers: Object.fromEntries(Object.keys(stored.headers).map((name) => [name, SECRET_MASK])),
    cookies: stored.cookies.map((c) => ({
      name: c.name,
      value: SECRET_MASK,
      domain: c.domain,
      path: c.path,
    })),
    basic_auth: stored.basic_auth && { username: stored.basic_auth.username, password: SECRET_MASK },
    user_agent: stored.user_agent,
    authorization: stored.authorization === null ? null : SECRET_MASK,
    skip_tls_verification: stored.skip_tls_verification,
  };
}

/** The request with its secrets opened, for a worker about to send it. Throws SecretBoxError when a key is missing. */
export function openRequest(box: SecretBox, jobId: string, stored: StoredRequest): OpenedRequest {
  const open = (sealed: string) => box.open(sealed, context(jobId));
  return {
    headers: Object.fromEntries(Object.entries(stored.headers).map(([name, v]) => [name, open(v)])),
    cookies: stored.cookies.map((c) => ({
      name: c.name,
      value: open(c.value),
      domain: c.domain,
      hostOnly: c.host_only,
      path: c.path,
    })),
    basic_auth: stored.basic_auth && {
      username: stored.basic_auth.username,
      password: open(stored.basic_auth.password),
    },
    user_agent: stored.user_agent,
    authorization: stored.authorization === null ? null : open(stored.authorization),
    skip_tls_verification: stored.skip_tls_verification,
  };
}
