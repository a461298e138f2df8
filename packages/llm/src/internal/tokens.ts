import { createRequire } from 'node:module';

type Tokenizer = typeof import('gpt-tokenizer');
let tokenizer: Tokenizer | undefined;
/**
 * The tokenizer, loaded on first use: its tables take about 40 MB, which every extraction thread
 * and process would otherwise carry whether or not its pages ever go to a model.
 */
const loadTokenizer = (): Tokenizer => {
  tokenizer ??= createRequire(import.meta.url)('gpt-tokenizer') as Tokenizer;
  return tokenizer;
};

/** A token is rarely longer than this many characters: text past it is cut before it is counted. */
const MAX_CHARS_PER_TOKEN = 16;
// Text like `<|endoftext|>` in a page is ordinary text, never a control token.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** Text cut to at most `maxTokens` tokens (o200k_base, OpenAI's current encoding), and its count. */
export function cutToTokens(text: string, maxTokens: number): { text: string; tokens: number; cut: boolean } {
  const head =
    text.length > maxTokens * MAX_CHARS_PER_TOKEN ? text.slice(0, maxTokens * MAX_CHARS_PER_TOKEN) : text;
  const { encode, decode } = loadTokenizer();
  const tokens = encode(head, AS_TEXT);
  if (tokens.length <= maxTokens && head.length === text.length)
    return { text, tokens: tokens.length, cut: false };
  const kept = tokens.slice(0, maxTokens);
  return { text: decode(kept), tokens: kept.length, cut: true };
}

/** An estimate of the tokens of `text` (about four characters a token), for servers that report no usage. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);
