import { type AnyNode, hasChildren, isComment, isText, type ParentNode } from 'domhandler';

/**
 * The value as PostgreSQL's jsonb can store it: NUL characters dropped, lone surrogates replaced
 * by U+FFFD. Both checks are single scans that allocate nothing when the value is already fine.
 */
export function storable(value: string): string {
  const withoutNul = value.includes('\0') ? value.replaceAll('\0', '') : value;
  return withoutNul.isWellFormed() ? withoutNul : withoutNul.toWellFormed();
}

const WHITESPACE = /\s+/g;

// NUL is dropped before white space is collapsed, so `a \0 b` gives `a b`, and squeezing a
// prefix first never changes the result: squeeze(squeeze(a) + b) is squeeze(a + b).
function squeeze(text: string): string {
  return (text.includes('\0') ? text.replaceAll('\0', '') : text).replace(WHITESPACE, ' ');
}

/**
 * Text nodes' data gathered into one value (NUL dropped, trimmed, white space runs collapsed),
 * given up as soon as the value is sure to be longer than `cap` characters. Whatever the size of
 * the subtree, it never holds much more than twice `cap` characters: past `cap` unsqueezed
 * characters it squeezes what it has and checks that.
 */
export class TextValue {
  private parts: string[] = [];
  private pending = 0;
  private squeezed = '';
  private readonly cap: number;

  constructor(cap: number) {
    this.cap = cap;
  }

  /** False once the value is sure to be over the cap. */
  add(data: string): boolean {
    this.parts.push(data);
    this.pending += data.length;
    return this.pending <= this.cap || this.compact();
  }

  private compact(): boolean {
    this.squeezed = squeeze(this.squeezed + this.parts.join('')).trimStart();
    this.parts = [];
    this.pending = 0;
    // A trailing space may still be trimmed away.
    return this.squeezed.length <= this.cap + 1;
  }

  /** The value, or null when it is longer than the cap. */
  value(): string | null {
    const value = squeeze(this.squeezed + this.parts.join('')).trim();
    return value.length <= this.cap ? value : null;
  }
}

/**
 * A node's value for css and XPath: all descendant text (the DOM textContent), NUL dropped,
 * trimmed, white space collapsed; null once it is sure to be longer than `cap` characters.
 */
export function textValue(node: AnyNode, cap: number): string | null {
  if (isText(node) || isComment(node)) return textDataValue(node.data, cap);
  const text = new TextValue(cap);
  if (hasChildren(node) && !collectText(node.children, text)) return null;
  return text.value();
}

/** The value of one text node's data, as textValue gives it. */
export function textDataValue(data: string, cap: number): string | null {
  const value = squeeze(data).trim();
  return value.length <= cap ? value : null;
}

function collectText(children: readonly AnyNode[], text: TextValue): boolean {
  for (const child of children) {
    if (isText(child)) {
      if (!text.add(child.data)) return false;
    } else if (hasChildren(child) && !collectText(child.children, text)) return false;
  }
  return true;
}

/** Scrapy's `::text`: the node's own child text nodes only, as textValue treats them. */
export function ownTextValue(node: ParentNode, cap: number): string | null {
  const text = new TextValue(cap);
  for (const child of node.children) if (isText(child) && !text.add(child.data)) return null;
  return text.value();
}

class TooLong extends Error {}

/**
 * JSON of an XPath map or array, abandoned once it is sure to be longer than `cap` characters:
 * every value written adds at least its own length, so the count is a lower bound.
 */
export function jsonValue(item: unknown, cap: number): string | null {
  let length = 0;
  try {
    const json = JSON.stringify(item, function (this: unknown, key: string, value: unknown) {
      length += (Array.isArray(this) ? 0 : key.length) + (typeof value === 'string' ? value.length : 1);
      if (length > cap) throw new TooLong();
      return value;
    });
    return json.length <= cap ? json : null;
  } catch (error) {
    if (error instanceof TooLong) return null;
    throw error;
  }
}
