import { setImmediate as nextTurn } from 'node:timers/promises';
import type { MapLink } from './bodies.ts';

/** Characters of a link's path, title or description read for ranking. */
const MAX_FIELD_CHARS = 256;
/** Distinct search words ranked on: a longer search costs no more. */
const MAX_TERMS = 32;
/** Links scored between two turns of the event loop, so a big map never holds it for long. */
const LINKS_PER_TURN = 2_000;

const words = (text: string | undefined): string[] =>
  (text ?? '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');

function pathWords(url: string): string[] {
  const parsed = URL.parse(url);
  if (parsed === null) return words(url.slice(0, MAX_FIELD_CHARS));
  const path = `${parsed.pathname} ${parsed.search}`.slice(0, MAX_FIELD_CHARS);
  try {
    return words(decodeURIComponent(path));
  } catch {
    return words(path);
  }
}

/** True when `phrase` (words) appears in `text` (words) as consecutive words. */
const hasPhrase = (text: readonly string[], phrase: string): boolean =>
  ` ${text.join(' ')} `.includes(` ${phrase} `);

interface TrieNode {
  next: Map<string, TrieNode>;
  /** Index of the term that ends here. */
  term: number | null;
}

/**
 * The search terms as a trie of their characters: the terms a word starts with are found in one
 * walk along the word, so scoring costs the links' characters, whatever the number of terms.
 */
function termTrie(terms: readonly string[]): TrieNode {
  const root: TrieNode = { next: new Map(), term: null };
  terms.forEach((term, at) => {
    let node = root;
    for (const ch of term) {
      const child = node.next.get(ch) ?? { next: new Map(), term: null };
      node.next.set(ch, child);
      node = child;
    }
    node.term = at;
  });
  return root;
}

/** How many distinct terms some word of `text` starts with. */
function hits(text: readonly string[], trie: TrieNode): number {
  const matched = new Set<number>();
  for (const word of text) {
    let node: TrieNode | undefined = trie;
    for (const ch of word) {
      node = node.next.get(ch);
      if (node === undefined) break;
      if (node.term !== null) matched.add(node.term);
    }
  }
  return matched.size;
}

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
 * or title word counting more); ties, and links matching nothing, keep their order. Linear in
 * the links' text (each field read up to MAX_FIELD_CHARS) and yields to other requests as it goes.
 */
export async function rankLinks<T extends MapLink>(links: readonly T[], search: string | null): Promise<T[]> {
  const searchWords = words(search ?? '');
  if (searchWords.length === 0) return [...links];
  const trie = termTrie([...new Set(searchWords)].slice(0, MAX_TERMS));
  const phrase = searchWords.join(' ');
  const matching: Scored<T>[] = [];
  const rest: T[] = [];
  for (const [at, link] of links.entries()) {
    if (at > 0 && at % LINKS_PER_TURN === 0) await nextTurn();
    const path = pathWords(link.url);
    const title = words(link.title?.slice(0, MAX_FIELD_CHARS));
    const description = words(link.description?.slice(0, MAX_FIELD_CHARS));
    const scored = {
      link,
      at,
      exact: hasPhrase(path, phrase) || hasPhrase(title, phrase),
      matched: hits([...path, ...title, ...description], trie),
      score: 3 * hits(path, trie) + 2 * hits(title, trie) + hits(description, trie),
    };
    if (scored.exact || scored.matched > 0) matching.push(scored);
    else rest.push(link);
  }
  matching.sort(
    (a, b) => Number(b.exact) - Number(a.exact) || b.matched - a.matched || b.score - a.score || a.at - b.at,
  );
  return [...matching.map((s) => s.link), ...rest];
}
