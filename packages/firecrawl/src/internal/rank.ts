import type { MapLink } from './bodies.ts';

const words = (text: string | undefined): string[] =>
  (text ?? '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');

function pathWords(url: string): string[] {
  const parsed = URL.parse(url);
  if (parsed === null) return words(url);
  const path = `${parsed.pathname} ${parsed.search}`;
  try {
    return words(decodeURIComponent(path));
  } catch {
    return words(path);
  }
}

/** True when `phrase` (words) appears in `text` (words) as consecutive words. */
const hasPhrase = (text: readonly string[], phrase: string): boolean =>
  ` ${text.join(' ')} `.includes(` ${phrase} `);

const hits = (text: readonly string[], terms: readonly string[]): number =>
  terms.filter((term) => text.some((word) => word.startsWith(term))).length;

interface Scored<T> {
  link: T;
  at: number;
  exact: boolean;
  matched: number;
  score: number;
}

/**
 * Links ordered by relevance to `search`: those whose path or title holds the search as a
 * phrase first, then by how many of its words the path, title and description hold (a path
 * or title word counting more); ties, and links matching nothing, keep their order.
 */
export function rankLinks<T extends MapLink>(links: readonly T[], search: string | null): T[] {
  const searchWords = words(search ?? '');
  if (searchWords.length === 0) return [...links];
  const terms = [...new Set(searchWords)];
  const phrase = searchWords.join(' ');
  const scored = links.map((link, at): Scored<T> => {
    const path = pathWords(link.url);
    const title = words(link.title);
    const description = words(link.description);
    const all = [...path, ...title, ...description];
    return {
      link,
      at,
      exact: hasPhrase(path, phrase) || hasPhrase(title, phrase),
      matched: hits(all, terms),
      score: 3 * hits(path, terms) + 2 * hits(title, terms) + hits(description, terms),
    };
  });
  scored.sort(
    (a, b) => Number(b.exact) - Number(a.exact) || b.matched - a.matched || b.score - a.score || a.at - b.at,
  );
  return scored.map((s) => s.link);
}
