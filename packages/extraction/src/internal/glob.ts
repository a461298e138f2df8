/** One glob set ({a,b} or [x-y:step]): how many values it has and how to get the i-th. */
interface GlobSet {
  readonly size: number;
  at(index: number): string;
}

type Part = string | GlobSet;

export class GlobSyntaxError extends Error {
  override readonly name = 'GlobSyntaxError';
}

const NUMERIC_RANGE = /^(\d+)-(\d+)(?::(\d+))?$/;
const LETTER_RANGE = /^([a-zA-Z])-([a-zA-Z])(?::(\d+))?$/;
const IPV6_LITERAL = /^[0-9a-fA-F:.]*:[0-9a-fA-F:.]*(%[\w.~-]+)?$/;

/**
 * Splits a curl-style glob into literal text and sets. `\` escapes the next `[ ] { } ,`.
 * Like curl, a bracket right after `scheme://` holding an IPv6 address is literal.
 */
export function parseGlob(source: string): Part[] {
  const parts: Part[] = [];
  let literal = '';
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '\\' && i + 1 < source.length && '[]{},'.includes(source[i + 1]!)) {
      literal += source[i + 1];
      i += 2;
    } else if (c === '{') {
      const end = findClose(source, i, '}', '{');
      parts.push(literal, listSet(source.slice(i + 1, end)));
      literal = '';
      i = end + 1;
    } else if (c === '[') {
      const end = findClose(source, i, ']', '[');
      const body = source.slice(i + 1, end);
      if (/:\/\/$/.test(source.slice(0, i)) && IPV6_LITERAL.test(body)) {
        literal += `[${body}]`;
      } else {
        parts.push(literal, rangeSet(body, i));
        literal = '';
      }
      i = end + 1;
    } else if (c === '}' || c === ']') {
      throw new GlobSyntaxError(`unmatched '${c}' at position ${i + 1}`);
    } else {
      literal += c;
      i++;
    }
  }
  parts.push(literal);
  return parts.filter((part) => part !== '');
}

function findClose(source: string, open: number, close: string, opener: string): number {
  for (let i = open + 1; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === close) return i;
    else if (c === opener || c === '{' || c === '[') {
      throw new GlobSyntaxError(`nested '${c}' at position ${i + 1} (globs cannot nest)`);
    }
  }
  throw new GlobSyntaxError(`unmatched '${source[open]}' at position ${open + 1}`);
}

function listSet(body: string): GlobSet {
  const items: string[] = [];
  let current = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\' && i + 1 < body.length) current += body[++i];
    else if (c === ',') {
      items.push(current);
      current = '';
    } else current += c;
  }
  items.push(current);
  return { size: items.length, at: (index) => items[index]! };
}

function rangeSet(body: string, position: number): GlobSet {
  const where = `[${body}] at position ${position + 1}`;
  const numeric = NUMERIC_RANGE.exec(body);
  if (numeric) {
    const [, first = '', last = '', stepText] = numeric;
    const start = Number(first);
    const end = Number(last);
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || !Number.isSafeInteger(step)) {
      throw new GlobSyntaxError(`range ${where} has too large a number`);
    }
    checkRange(start, end, step, where);
    // curl pads every value to the width of the first number when it has a leading zero.
    const width = first.length > 1 && first.startsWith('0') ? first.length : 0;
    return {
      size: Math.floor((end - start) / step) + 1,
      at: (index) => String(start + index * step).padStart(width, '0'),
    };
  }
  const letters = LETTER_RANGE.exec(body);
  if (letters) {
    const [, first = '', last = '', stepText] = letters;
    const start = first.charCodeAt(0);
    const end = last.charCodeAt(0);
    const step = stepText === undefined ? 1 : Number(stepText);
    if (first >= 'a' !== last >= 'a') throw new GlobSyntaxError(`range ${where} mixes upper and lower case`);
    checkRange(start, end, step, where);
    return {
      size: Math.floor((end - start) / step) + 1,
      at: (index) => String.fromCharCode(start + index * step),
    };
  }
  throw new GlobSyntaxError(`bad range ${where}: expected [1-10], [001-100], [a-z] or [0-100:10]`);
}

function checkRange(start: number, end: number, step: number, where: string): void {
  if (start > end) throw new GlobSyntaxError(`range ${where} goes backwards`);
  if (step < 1) throw new GlobSyntaxError(`range ${where} has a step below 1`);
}

/** Number of URLs a parsed glob expands to (may exceed Number.MAX_SAFE_INTEGER for absurd globs). */
export function globSize(parts: readonly Part[]): number {
  let size = 1;
  for (const part of parts) if (typeof part !== 'string') size *= part.size;
  return size;
}

/** Every expansion, the rightmost set varying fastest (curl's order). */
export function expandParts(parts: readonly Part[]): string[] {
  const sets = parts.filter((part): part is GlobSet => typeof part !== 'string');
  const counters = sets.map(() => 0);
  const total = globSize(parts);
  const urls: string[] = [];
  for (let n = 0; n < total; n++) {
    let url = '';
    let s = 0;
    for (const part of parts) url += typeof part === 'string' ? part : part.at(counters[s++]!);
    urls.push(url);
    for (let k = sets.length - 1; k >= 0; k--) {
      counters[k]!++;
      if (counters[k]! < sets[k]!.size) break;
      counters[k] = 0;
    }
  }
  return urls;
}
