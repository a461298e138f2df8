import { expandParts, GlobSyntaxError, globSize, parseGlob } from './glob.ts';

export type GlobResult = { ok: true; urls: string[] } | { ok: false; message: string };

/** Expands curl-style globs ([1-10], [001-100], [a-z], [0-100:10], {a,b}); fails past `max` URLs or on malformed globs. */
export function expandGlob(source: string, max: number): GlobResult {
  try {
    const parts = parseGlob(source);
    const size = globSize(parts);
    if (size > max)
      return { ok: false, message: `expands to ${formatSize(size)} URLs, more than the limit of ${max}` };
    return { ok: true, urls: expandParts(parts) };
  } catch (error) {
    if (error instanceof GlobSyntaxError) return { ok: false, message: `malformed glob: ${error.message}` };
    throw error;
  }
}

/** Counts expansions without materialising them (used by validation). */
export function countGlob(source: string): number | { error: string } {
  try {
    return globSize(parseGlob(source));
  } catch (error) {
    if (error instanceof GlobSyntaxError) return { error: `malformed glob: ${error.message}` };
    throw error;
  }
}

function formatSize(size: number): string {
  return Number.isSafeInteger(size) ? String(size) : 'more than 9007199254740991';
}
