/** Longest include/exclude pattern accepted. */
export const MAX_PATTERN_LENGTH = 500;

export type CompiledPattern = { ok: true; regex: RegExp } | { ok: false; message: string };

/** Compiles an include/exclude pattern (JavaScript RegExp syntax, no flags); `message` suits a 400. */
export function compileUrlPattern(pattern: string): CompiledPattern {
  if (pattern.length > MAX_PATTERN_LENGTH)
    return { ok: false, message: `pattern longer than ${MAX_PATTERN_LENGTH} characters` };
  try {
    return { ok: true, regex: new RegExp(pattern) };
  } catch (error) {
    return { ok: false, message: `invalid regular expression: ${reason((error as Error).message)}` };
  }
}

// V8 says `Invalid regular expression: /<source>/<flags>: <reason>`; the reason is what a user needs.
function reason(message: string): string {
  return message.replace(/^Invalid regular expression: /, '').replace(/^\/(.*)\/[a-z]*: /s, '');
}

export interface LinkFilterOptions {
  /** Origins (`scheme://host[:port]`) of the seed URLs; seed URLs themselves work too. */
  seedOrigins: readonly string[];
  /** Keep only links whose origin is one of seedOrigins. */
  sameOrigin: boolean;
  /** When not empty, a link must match at least one of these patterns. */
  include: readonly string[];
  /** A link matching any of these patterns is dropped. */
  exclude: readonly string[];
}

/** Decides which discovered links a crawl follows (origin, include and exclude patterns). */
export class LinkFilter {
  readonly #origins: ReadonlySet<string> | null;
  readonly #include: readonly RegExp[];
  readonly #exclude: readonly RegExp[];

  /** Throws when a pattern does not compile: patterns are validated before a crawl starts. */
  constructor(options: LinkFilterOptions) {
    this.#origins = options.sameOrigin ? new Set(options.seedOrigins.map(originOrSelf)) : null;
    this.#include = options.include.map((p) => compileOrThrow('include', p));
    this.#exclude = options.exclude.map((p) => compileOrThrow('exclude', p));
  }

  /** True when the crawl follows `url`, an absolute URL as normalizeUrl returns it. */
  accepts(url: string): boolean {
    if (this.#origins !== null) {
      const origin = URL.parse(url)?.origin;
      if (origin === undefined || !this.#origins.has(origin)) return false;
    }
    if (this.#include.length > 0 && !this.#include.some((r) => r.test(url))) return false;
    return !this.#exclude.some((r) => r.test(url));
  }
}

function originOrSelf(origin: string): string {
  return URL.parse(origin)?.origin ?? origin;
}

function compileOrThrow(kind: string, pattern: string): RegExp {
  const compiled = compileUrlPattern(pattern);
  if (!compiled.ok) throw new Error(`${kind} pattern ${JSON.stringify(pattern)}: ${compiled.message}`);
  return compiled.regex;
}
