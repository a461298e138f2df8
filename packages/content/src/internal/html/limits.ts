const encoder = new TextEncoder();

/**
 * `text` cut to at most `maxBytes` bytes of UTF-8, never inside a character; `cut` says whether
 * anything was left out.
 */
export function cutUtf8(text: string, maxBytes: number): { value: string; cut: boolean } {
  // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4).
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes) return { value: text, cut: false };
  // encodeInto writes whole characters only; `read` is the UTF-16 length of what fitted.
  const { read } = encoder.encodeInto(text, new Uint8Array(maxBytes));
  return { value: text.slice(0, read), cut: true };
}

/**
 * Collects a writer's output, and stops taking more past `maxChars` UTF-16 code units: the text
 * is then over any byte limit of that many bytes, and cutUtf8 makes the exact cut.
 */
export class Output {
  private readonly parts: string[] = [];
  private length = 0;
  private readonly maxChars: number;

  constructor(maxChars: number) {
    this.maxChars = maxChars;
  }

  /** Whether the output is past its limit (what is written then is not kept). */
  get full(): boolean {
    return this.length > this.maxChars;
  }

  write(text: string): void {
    if (this.length > this.maxChars) return;
    this.parts.push(text);
    this.length += text.length;
  }

  toString(): string {
    return this.parts.join('');
  }
}
