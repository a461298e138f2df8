// RFC 9309 §2.2.2 compares octets with percent-encoding made consistent. Both sides (rule paths
// when parsed, URL paths when matched) go through canonicalPath: an octet that may stand as itself
// (RFC 3986 unreserved and reserved characters) stays literal, every other one is written %XX with
// upper-case hex, and %XX of an unreserved character is decoded. `'` counts as "other" because URL
// percent-encodes it in queries but not in paths. %XX of a reserved character stays encoded: `%2F`
// is not `/`.
const LITERAL = asciiTable(
  'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&()*+,;=',
);
const UNRESERVED = asciiTable('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~');
const ALREADY_CANONICAL = /^[A-Za-z0-9\-._~:/?#[\]@!$&()*+,;=]*$/;

/** A path (with query) or robots.txt pattern with its percent-encoding made canonical. */
export function canonicalPath(text: string): string {
  if (ALREADY_CANONICAL.test(text)) return text;
  const chars = text.toWellFormed();
  let out = '';
  for (let i = 0; i < chars.length; i++) {
    const code = chars.charCodeAt(i);
    if (code === 0x25) {
      const octet = hexOctet(chars, i + 1);
      if (octet < 0) {
        out += '%25';
      } else {
        out += UNRESERVED[octet] === 1 ? String.fromCharCode(octet) : percent(octet);
        i += 2;
      }
    } else if (code < 0x80) {
      out += LITERAL[code] === 1 ? chars[i] : percent(code);
    } else {
      const wide = code >= 0xd800 && code <= 0xdbff;
      out += encodeURIComponent(chars.slice(i, wide ? i + 2 : i + 1));
      if (wide) i++;
    }
  }
  return out;
}

/**
 * True when canonical `path` matches canonical robots `pattern`: anchored at the start, `*` any
 * sequence, a trailing `$` anchors the end. Greedy leftmost search per `*`-separated piece is
 * exact for this language and linear-ish, unlike a RegExp built from hostile rule text.
 */
export function patternMatches(pattern: string, path: string): boolean {
  const anchored = pattern.endsWith('$');
  const end = anchored ? pattern.length - 1 : pattern.length;
  let star = pattern.indexOf('*');
  if (star < 0) {
    const literal = anchored ? pattern.slice(0, end) : pattern;
    return anchored ? path === literal : path.startsWith(literal);
  }
  // Most rules fail on their literal prefix: test it before walking the pieces.
  if (!path.startsWith(pattern.slice(0, star))) return false;
  let position = star;
  for (;;) {
    const next = pattern.indexOf('*', star + 1);
    const piece = pattern.slice(star + 1, next < 0 ? end : next);
    if (next < 0) {
      if (anchored) return path.length - piece.length >= position && path.endsWith(piece);
      return path.includes(piece, position);
    }
    if (piece !== '') {
      const found = path.indexOf(piece, position);
      if (found < 0) return false;
      position = found + piece.length;
    }
    star = next;
  }
}

function hexOctet(text: string, at: number): number {
  const high = hexDigit(text.charCodeAt(at));
  const low = hexDigit(text.charCodeAt(at + 1));
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

function percent(octet: number): string {
  return `%${octet.toString(16).toUpperCase().padStart(2, '0')}`;
}

function asciiTable(chars: string): Uint8Array {
  const table = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) table[chars.charCodeAt(i)] = 1;
  return table;
}
