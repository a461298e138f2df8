/** What one page's extraction (parse, every query, building the records) may cost (docs/api.md §16). */
export interface ExtractionLimits {
  /** Wall time of one page's whole extraction (parse + every query), default 5000 ms. */
  timeLimitMs?: number;
  /** Records one page may give, default 10_000, at most MAX_RECORDS_LIMIT. */
  maxRecords?: number;
  /** UTF-8 bytes of one value, default 1 MiB (1_048_576). */
  maxValueBytes?: number;
  /** UTF-8 bytes of all values of the page's records together, default 16 MiB; a joined value counts once per record it appears in. */
  maxTotalBytes?: number;
}

export type ResolvedLimits = Readonly<Required<ExtractionLimits>>;

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * The highest records limit: a stored page can hold no more, as the view `results` numbers a
 * page's records in 14 bits (prisma/migrations/20261201120000_result_pages), and what stores pages
 * trusts this limit instead of counting them again.
 */
export const MAX_RECORDS_LIMIT = 2 ** 14;

/** The limits a page gets when the caller sets none. */
export const DEFAULT_EXTRACTION_LIMITS: ResolvedLimits = Object.freeze({
  timeLimitMs: 5000,
  maxRecords: 10_000,
  maxValueBytes: MIB,
  maxTotalBytes: 16 * MIB,
});

/**
 * Fills in defaults; throws RangeError for a limit that is not a positive integer, or a records
 * limit past MAX_RECORDS_LIMIT.
 */
export function resolveLimits(limits: ExtractionLimits): ResolvedLimits {
  const resolved = { ...DEFAULT_EXTRACTION_LIMITS };
  for (const key of Object.keys(resolved) as (keyof ResolvedLimits)[]) {
    const value = limits[key];
    if (value === undefined) continue;
    checkPositiveInteger(key, value);
    resolved[key] = value;
  }
  // Checked once filled in, so that a default raised past it fails every compile too.
  if (resolved.maxRecords > MAX_RECORDS_LIMIT)
    throw new RangeError(
      `maxRecords must be at most ${MAX_RECORDS_LIMIT} (the records a stored page can hold), got ${resolved.maxRecords}`,
    );
  return Object.freeze(resolved);
}

/** Throws RangeError unless `value` is a positive integer (node:vm takes no other time limit). */
export function checkPositiveInteger(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
  }
}

/** `1 MiB`, `16 KiB` or `100 bytes`, for messages. */
export function formatBytes(bytes: number): string {
  if (bytes % MIB === 0) return `${bytes / MIB} MiB`;
  if (bytes % KIB === 0) return `${bytes / KIB} KiB`;
  return `${bytes} bytes`;
}
