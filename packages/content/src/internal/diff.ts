import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';

const CONTEXT_LINES = 3;
// Myers' diff costs about the square of the edits: past these (lines added plus removed) or this
// time, jsdiff gives up and the page counts as replaced whole. Its own cost on two unrelated
// 5 MiB texts stays under a second (most of it splitting them into lines).
const MAX_EDIT_LENGTH = 2_000;
const TIMEOUT_MS = 250;
// Room for the headers and the note of a cut diff.
const MIN_BYTES = 128;
const NO_NEWLINE = '\\ No newline at end of file';

/**
 * A unified diff of two markdown texts (line by line, 3 lines of context, headers `--- before` and
 * `+++ after`), null when they are equal. At most `maxBytes` UTF-8 bytes: a longer diff is cut at
 * a line boundary and ends with the line `\ Diff cut at <maxBytes> bytes`. Texts too different to
 * diff quickly give one hunk that removes every line of `before` and adds every line of `after`.
 */
export function pageDiff(before: string, after: string, maxBytes = 64 * 1024): string | null {
  if (maxBytes < MIN_BYTES) throw new RangeError(`pageDiff: maxBytes must be at least ${MIN_BYTES}`);
  if (before === after) return null;
  const patch = structuredPatch('before', 'after', before, after, undefined, undefined, {
    context: CONTEXT_LINES,
    maxEditLength: MAX_EDIT_LENGTH,
    timeout: TIMEOUT_MS,
  });
  const lines = patch
    ? formatPatch(patch, FILE_HEADERS_ONLY).split('\n').slice(0, -1)
    : replaced(before, after);
  return bounded(lines, maxBytes);
}

/** The lines of a diff that replaces all of `before` by all of `after` (as diff(1) would write it). */
function* replaced(before: string, after: string): Generator<string> {
  const old = splitLines(before);
  const now = splitLines(after);
  yield '--- before';
  yield '+++ after';
  yield `@@ -${old.length === 0 ? 0 : 1},${old.length} +${now.length === 0 ? 0 : 1},${now.length} @@`;
  for (const [index, line] of old.entries()) {
    yield `-${line}`;
    if (index === old.length - 1 && !before.endsWith('\n')) yield NO_NEWLINE;
  }
  for (const [index, line] of now.entries()) {
    yield `+${line}`;
    if (index === now.length - 1 && !after.endsWith('\n')) yield NO_NEWLINE;
  }
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return lines;
}

/**
 * The lines, each ending in a newline, within `maxBytes`: a longer diff ends after the last line
 * that fits with room for a last line saying it was cut. Should that leave no changed line (the
 * first one is huge), that line is kept in part, cut at a character boundary.
 */
function bounded(lines: Iterable<string>, maxBytes: number): string {
  const kept: string[] = [];
  let bytes = 0;
  let next: string | undefined;
  for (const line of lines) {
    const size = Buffer.byteLength(line) + 1;
    if (bytes + size > maxBytes) {
      next = line;
      break;
    }
    kept.push(line);
    bytes += size;
  }
  if (next === undefined) return kept.map((line) => `${line}\n`).join('');

  const note = `\\ Diff cut at ${maxBytes} bytes\n`;
  const budget = maxBytes - Buffer.byteLength(note);
  while (kept.length > 0 && bytes > budget) {
    next = kept.pop()!;
    bytes -= Buffer.byteLength(next) + 1;
  }
  // The first two lines are the file headers, `--- before` and `+++ after`.
  if (kept.length >= 2 && isChange(next) && !kept.slice(2).some(isChange) && budget - bytes > 1) {
    kept.push(prefix(next, budget - bytes - 1));
  }
  return kept.map((line) => `${line}\n`).join('') + note;
}

const isChange = (line: string) => line.startsWith('-') || line.startsWith('+');

/** The longest start of `text` within `maxBytes` UTF-8 bytes, not cutting a character in two. */
function prefix(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  let end = Math.min(maxBytes, bytes.length);
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
