import { z } from 'zod';

/** Thrown when the environment does not satisfy an app's configuration schema. */
/** The service's version: the OpenAPI document's and the default user agent's. */
export const SERVICE_VERSION = '1.0.0';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** `true`/`false`/`1`/`0` from the environment. */
export const envBoolean = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');

/** A positive integer from the environment. */
export const envInt = (min = 1, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);

export interface ProxyEntry {
  url: string;
  country: string | null;
}

/** `PROXY_URLS`: comma-separated proxy URLs, each optionally followed by `#country=XX`. */
export const proxyUrls = z
  .string()
  .default('')
  .transform((raw, ctx): ProxyEntry[] => {
    const entries: ProxyEntry[] = [];
    for (const part of raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const [url = '', fragment] = part.split('#', 2);
      const country = fragment?.match(/^country=([A-Za-z]{2})$/)?.[1]?.toUpperCase() ?? null;
      if (fragment !== undefined && country === null) {
        ctx.addIssue({ code: 'custom', message: `"${part}": the suffix must be #country=XX` });
        continue;
      }
      if (!URL.canParse(url) || !/^(https?|socks5?):$/.test(new URL(url).protocol)) {
        ctx.addIssue({ code: 'custom', message: `"${url}" is not an http(s) or socks proxy URL` });
        continue;
      }
      entries.push({ url, country });
    }
    return entries;
  });

/** Settings every process shares (docs/api.md §10). */
export const commonEnv = {
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).default('postgresql://root@127.0.0.1:5432/scrapejobs'),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).default('redis://127.0.0.1:6379'),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('scrapejobs'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).default('http://localhost:3000'),
  ALLOW_PRIVATE_NETWORK_TARGETS: envBoolean.default(false),
  PROXY_URLS: proxyUrls,
};

/** Parses `env` with `schema` once at start; a bad value throws a ConfigError naming every variable. */
export function parseConfig<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
): z.output<S> {
  // Empty strings mean "unset", as in most process managers.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
  throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
}

/** For a process entry point: parses, or prints the problems (no stack trace) and exits with 1. */
export function parseConfigOrExit<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
): z.output<S> {
  try {
    return parseConfig(schema, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
