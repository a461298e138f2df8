/** Characters that may start markdown syntax inside a line. */
const SPECIAL = /[\\*_`[\]<&~]/;
const WORD_CHAR = /[\p{L}\p{N}]/u;
const PUNCTUATION = /[!-/:-@[-`{-~]/;
/** An entity reference `&` may start: `&amp;`, `&#38;`, `&#x26;` (bounded, like the spec's longest name). */
const ENTITY = /^&(?:#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{0,31});/;
const TAG_START = /[A-Za-z/!?]/;

/**
 * Text escaped for markdown, only where a character could start syntax: `*`, `_` and `~` unless
 * they cannot open or close emphasis (`snake_case`, `a * b`), `` ` ``, `[`, `]`, a `<` that could
 * start a tag or autolink, an `&` that could start an entity, a `\` before punctuation.
 * Line-start syntax (`#`, `>`, `-`, `1.`) is escaped by escapeLineStart when lines are known.
 */
export function escapeText(text: string): string {
  if (!SPECIAL.test(text)) return text;
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    let needed = false;
    switch (c) {
      case '`':
      case '[':
      case ']':
        needed = true;
        break;
      case '*':
      case '~':
        needed = !(isSpaceOrEdge(text, i - 1) && isSpaceOrEdge(text, i + 1));
        break;
      case '_':
        needed = !(
          (isSpaceOrEdge(text, i - 1) && isSpaceOrEdge(text, i + 1)) ||
          (isWordChar(text, i - 1) && isWordChar(text, i + 1))
        );
        break;
      case '<':
        needed = i + 1 < text.length && TAG_START.test(text[i + 1]!);
        break;
      case '&':
        needed = ENTITY.test(text.slice(i, i + 40));
        break;
      case '\\':
        needed = i + 1 === text.length || PUNCTUATION.test(text[i + 1]!);
        break;
    }
    if (needed) {
      out += `${text.slice(from, i)}\\`;
      from = i;
    }
  }
  return out + text.slice(from);
}

function isSpaceOrEdge(text: string, i: number): boolean {
  if (i < 0 || i >= text.length) return true;
  const c = text.charCodeAt(i);
  return c === 32 || c === 9 || c === 10 || c === 0xa0;
}

function isWordChar(text: string, i: number): boolean {
  return i >= 0 && i < text.length && WORD_CHAR.test(text[i]!);
}

const ATX_START = /^#{1,6}(?:[ \t]|$)/;
const LIST_START = /^[-+](?:[ \t]|$)/;
const ORDERED_START = /^\d{1,9}(?=[.)](?:[ \t]|$))/;
const RULE_OR_UNDERLINE = /^(?:[-=][ \t]*)+$/;

/**
 * A line of a paragraph escaped where its start would make it a heading, quote, list item,
 * thematic break or setext underline.
 */
export function escapeLineStart(line: string): string {
  const c = line[0];
  if (c === '#') return ATX_START.test(line) ? `\\${line}` : line;
  if (c === '>') return `\\${line}`;
  if (c === '-' || c === '+' || c === '=') {
    return LIST_START.test(line) || RULE_OR_UNDERLINE.test(line) ? `\\${line}` : line;
  }
  if (c !== undefined && c >= '0' && c <= '9') {
    const digits = ORDERED_START.exec(line);
    if (digits !== null) return `${digits[0]}\\${line.slice(digits[0].length)}`;
  }
  return line;
}

/** A code span of `text` (white space collapsed), fenced with a backtick run the text lacks; '' for blank text. */
export function codeSpan(text: string): string {
  const code = text.replace(/[ \t\n\r\f]+/g, ' ');
  if (code.trim() === '') return '';
  const runs = new Set<number>();
  let run = 0;
  for (let i = 0; i <= code.length; i++) {
    if (code[i] === '`') run++;
    else if (run > 0) {
      runs.add(run);
      run = 0;
    }
  }
  let fence = 1;
  while (runs.has(fence)) fence++;
  const ticks = '`'.repeat(fence);
  const pad =
    code.startsWith('`') || code.endsWith('`') || (code.startsWith(' ') && code.endsWith(' ')) ? ' ' : '';
  return `${ticks}${pad}${code}${pad}${ticks}`;
}

/** The longest run of `char` in `text`. */
export function longestRun(text: string, char: string): number {
  let longest = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === char) {
      run++;
      if (run > longest) longest = run;
    } else run = 0;
  }
  return longest;
}

/** A link or image destination: as is, or in `<…>` when it has parentheses or spaces. */
export function destination(url: string): string {
  if (!/[\s()<>]/.test(url)) return url;
  return `<${url
    .replace(/</g, '%3C')
    .replace(/>/g, '%3E')
    .replace(/[\n\r]/g, '')}>`;
}

/** Text for a link's or image's label: white space collapsed and brackets escaped. */
export function escapeLabel(text: string): string {
  return escapeText(text.replace(/[ \t\n\r\f]+/g, ' ').trim());
}
