// A page against the account's previous scrape of it (Firecrawl's changeTracking format, docs/api.md
// §24): its status, a unified diff of the markdown with the same diff in parts, and the fields of
// two extracted objects that differ.
import { pageDiff } from './diff.ts';

export const CHANGE_STATUSES = ['new', 'same', 'changed', 'removed'] as const;
export type ChangeStatus = (typeof CHANGE_STATUSES)[number];

/** One line of a hunk, as Firecrawl gives it (parse-diff's shape). */
export type DiffChange =
  | { type: 'normal'; normal: true; ln1: number; ln2: number; content: string }
  | { type: 'add'; add: true; ln: number; content: string }
  | { type: 'del'; del: true; ln: number; content: string };

/** A unified diff in parts: one file (the page), its hunks and their lines. */
export interface DiffJson {
  files: { from: string | null; to: string | null; chunks: { content: string; changes: DiffChange[] }[] }[];
}

/** A field of an extracted object whose value differs from the previous scrape's. */
export interface FieldChange {
  previous: unknown;
  current: unknown;
}

/** How a page compares with the previous scrape of it, as its document keeps it. */
export interface PageChangeTracking {
  /** ISO 8601 time of the previous scrape; null when there is none. */
  previous_scrape_at: string | null;
  change_status: ChangeStatus;
  /** `hidden`: found only from an earlier scrape, not by links or a sitemap (never, here). */
  visibility: 'visible' | 'hidden';
  /** `git-diff` mode, when changed: the markdown's unified diff, and the same diff in parts. */
  diff?: { text: string; json: DiffJson };
  /** `json` mode, when changed: the extracted fields that differ. */
  json?: Record<string, FieldChange>;
}

/** The previous scrape of a page: when, and its markdown. */
export interface PreviousScrape {
  scrapedAt: Date;
  markdown: string;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/**
 * A unified diff as written by pageDiff, in parts (Firecrawl's `diff.json`): the file headers name
 * `from` and `to`, each `@@` line starts a chunk, and each line of a chunk is a change numbered in
 * the text it belongs to. `\` lines (no newline at the end, a cut diff) are not changes.
 */
export function diffJson(text: string): DiffJson {
  const file: DiffJson['files'][number] = { from: null, to: null, chunks: [] };
  let chunk: DiffJson['files'][number]['chunks'][number] | null = null;
  let before = 0;
  let after = 0;
  for (const line of text.split('\n')) {
    const hunk = HUNK.exec(line);
    if (hunk) {
      chunk = { content: line, changes: [] };
      file.chunks.push(chunk);
      before = Number(hunk[1]);
      after = Number(hunk[2]);
    } else if (chunk === null) {
      if (line.startsWith('--- ')) file.from = line.slice(4);
      else if (line.startsWith('+++ ')) file.to = line.slice(4);
    } else if (line.startsWith('+'))
      chunk.changes.push({ type: 'add', add: true, ln: after++, content: line });
    else if (line.startsWith('-'))
      chunk.changes.push({ type: 'del', del: true, ln: before++, content: line });
    else if (line.startsWith(' '))
      chunk.changes.push({ type: 'normal', normal: true, ln1: before++, ln2: after++, content: line });
  }
  return { files: file.chunks.length > 0 ? [file] : [] };
}

/**
 * A page's markdown against its previous scrape's: `new` without one, `same` when the markdown is
 * equal, else `changed`, with the diff when `gitDiff` is asked (at most `maxDiffBytes`).
 */
export function compareMarkdown(
  previous: PreviousScrape | null,
  markdown: string,
  gitDiff: boolean,
  maxDiffBytes?: number,
): PageChangeTracking {
  const tracking: PageChangeTracking = {
    previous_scrape_at: previous?.scrapedAt.toISOString() ?? null,
    change_status: 'new',
    visibility: 'visible',
  };
  if (previous === null) return tracking;
  const text = pageDiff(previous.markdown, markdown, maxDiffBytes);
  tracking.change_status = text === null ? 'same' : 'changed';
  if (text !== null && gitDiff) tracking.diff = { text, json: diffJson(text) };
  return tracking;
}

/** The fields of two extracted objects whose values differ (by their JSON), each with both values (null when absent). */
export function fieldChanges(
  previous: Record<string, unknown>,
  current: Record<string, unknown>,
): Record<string, FieldChange> {
  const changes: Record<string, FieldChange> = {};
  for (const name of new Set([...Object.keys(previous), ...Object.keys(current)])) {
    const before = previous[name] ?? null;
    const now = current[name] ?? null;
    if (canonical(before) !== canonical(now)) changes[name] = { previous: before, current: now };
  }
  return changes;
}

/** JSON with object keys sorted, so that objects equal but for their key order compare equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}
