import type { ValueSink } from './page.ts';

export interface CompiledRegex {
  readonly pattern: RegExp;
  /** True when the pattern has a capture group: the value is then group 1. */
  readonly hasGroup: boolean;
}

const DELIMITED = /^\/([\s\S]*)\/([imsu]*)$/;

/**
 * Compiles a regex query: `/body/flags` (flags from `imsu`) or a bare pattern. Evaluation is
 * always global. JavaScript RegExp syntax; the page's time limit (not the syntax) keeps it safe.
 * Throws SyntaxError with a readable message; the caller bounds the time of the group count.
 */
export function compileRegex(query: string): CompiledRegex {
  const delimited = query.length >= 2 ? DELIMITED.exec(query) : null;
  const body = delimited ? (delimited[1] ?? '') : query;
  const flags = delimited ? (delimited[2] ?? '') : '';
  if (body === '') throw new SyntaxError('the pattern is empty');
  if (new Set(flags).size !== flags.length) throw new SyntaxError(`repeated flag in "${flags}"`);
  let pattern: RegExp;
  try {
    pattern = new RegExp(body, `${flags}g`);
  } catch (error) {
    throw new SyntaxError(cleanRegexMessage((error as Error).message));
  }
  // An alternative that always matches the empty string makes the group count observable.
  const groups = (new RegExp(`${body}|`, flags).exec('')?.length ?? 1) - 1;
  return { pattern, hasGroup: groups > 0 };
}

function cleanRegexMessage(message: string): string {
  return message.replace(/^Invalid regular expression: /, '').replace(/^\/(.*)\/[a-z]*: /s, '');
}

/** Puts every match on `text` (group 1 or the whole match) into `sink`. */
export function evaluateRegex(regex: CompiledRegex, text: string, sink: ValueSink): void {
  eachRegexMatch(regex, text, (value) => {
    sink.push(value);
    return true;
  });
}

/**
 * Gives `visit` the value of each match on `text` (group 1 or the whole match) in turn, finding
 * the next only when `visit` returns true, so a caller that has enough stops the search.
 */
export function eachRegexMatch(regex: CompiledRegex, text: string, visit: (value: string) => boolean): void {
  const { pattern, hasGroup } = regex;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (!visit((hasGroup ? match[1] : match[0]) ?? '')) return;
    if (match[0] === '') pattern.lastIndex = advance(text, pattern.lastIndex, pattern.unicode);
  }
}

function advance(text: string, index: number, unicode: boolean): number {
  if (!unicode || index + 1 >= text.length) return index + 1;
  const code = text.charCodeAt(index);
  return code >= 0xd800 && code <= 0xdbff ? index + 2 : index + 1;
}
