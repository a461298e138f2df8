/**
 * How close an extractor's text is to the text a person marked as a page's content: token F1 (a
 * bag of lowercased words, each counted as often as both texts have it) and shingle F1 (the same
 * over runs of four words, so that text in the wrong place or order counts less). Used by the
 * reader corpus test and by bench/content-quality.ts.
 */

/** Precision, recall and F1 of one text against the marked text. */
export interface Score {
  precision: number;
  recall: number;
  f1: number;
}

// Han, kana and Hangul are not spaced: each character counts as a word.
const WORD = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|[\p{L}\p{N}]+/gu;

/** The lowercased words of a text, in order. */
export function words(text: string): string[] {
  return Array.from(text.toLowerCase().matchAll(WORD), (match) => match[0]);
}

/** The text of markdown as a reader reads it: no link targets, image addresses, reference definitions or code languages. */
export function markdownText(markdown: string): string {
  return markdown
    .replace(/!\[[^\]]*\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, ' ')
    .replace(/\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, '] ')
    .replace(/<https?:[^>\s]+>/g, ' ')
    .replace(/^\s*\[[^\]]+\]:\s*\S+.*$/gm, ' ')
    .replace(/^(\s*(?:```|~~~))\S.*$/gm, '$1');
}

function counts(items: readonly string[]): Map<string, number> {
  const bag = new Map<string, number>();
  for (const item of items) bag.set(item, (bag.get(item) ?? 0) + 1);
  return bag;
}

function scoreBags(got: readonly string[], expected: readonly string[]): Score {
  const want = counts(expected);
  let overlap = 0;
  for (const [item, c] of counts(got)) overlap += Math.min(c, want.get(item) ?? 0);
  // Two empty texts agree.
  if (got.length === 0 && expected.length === 0) return { precision: 1, recall: 1, f1: 1 };
  const precision = got.length === 0 ? 0 : overlap / got.length;
  const recall = expected.length === 0 ? 0 : overlap / expected.length;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1 };
}

/** Runs of `n` words (a text shorter than `n` words is one run). */
export function shingles(list: readonly string[], n = 4): string[] {
  if (list.length === 0) return [];
  if (list.length < n) return [list.join(' ')];
  const out: string[] = [];
  for (let i = 0; i + n <= list.length; i++) out.push(list.slice(i, i + n).join(' '));
  return out;
}

/** Token F1 of `got` against the marked text `expected`. */
export function tokenScore(got: string, expected: string): Score {
  return scoreBags(words(got), words(expected));
}

/** Shingle F1 (runs of four words) of `got` against the marked text `expected`. */
export function shingleScore(got: string, expected: string): Score {
  return scoreBags(shingles(words(got)), shingles(words(expected)));
}
