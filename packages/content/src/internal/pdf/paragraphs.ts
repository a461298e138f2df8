/** The fields of a pdf.js text item that paragraph building reads. */
export interface PositionedText {
  str: string;
  /** The text matrix [a, b, c, d, x, y]: x and y are the start of the baseline, in points, y upwards. */
  transform: readonly number[];
  width: number;
  height: number;
  hasEOL: boolean;
}

interface Line {
  text: string;
  x: number;
  y: number;
  right: number;
  /** Font size, in points. */
  size: number;
}

/**
 * A page's paragraphs from its text items, in content order: items are joined into lines (at
 * `hasEOL` or a change of baseline), lines into paragraphs; a paragraph ends at a gap taller than
 * the page's usual line spacing, a change of font size, a bullet (•) or a short line followed by an
 * indented one.
 */
export function paragraphs(items: readonly PositionedText[]): string[] {
  const lines = toLines(items);
  const leading = usualLeading(lines);
  const right = Math.max(0, ...lines.map((line) => line.right));
  const result: string[] = [];
  let current = '';
  let previous: Line | undefined;
  for (const line of lines) {
    if (previous && current && breaksBetween(previous, line, leading, right)) {
      result.push(current);
      current = '';
    }
    current = current ? joinLines(current, line.text) : line.text;
    previous = line;
  }
  if (current) result.push(current);
  return result;
}

function toLines(items: readonly PositionedText[]): Line[] {
  const lines: Line[] = [];
  let line: Line | undefined;
  let ended = true;
  for (const item of items) {
    const x = item.transform[4] ?? 0;
    const y = item.transform[5] ?? 0;
    const size = Math.abs(item.height) || Math.hypot(item.transform[2] ?? 0, item.transform[3] ?? 0);
    const str = clean(item.str);
    if (str.trim()) {
      const sameLine = line && !ended && Math.abs(line.y - y) <= Math.max(line.size, size) * 0.5;
      if (line && sameLine) {
        // pdf.js usually puts spaces in the strings; a visible gap without one is a space too.
        const gap = x - line.right > Math.max(line.size, size) * 0.15;
        line.text += gap && !/\s$/.test(line.text) && !/^\s/.test(str) ? ` ${str}` : str;
        line.right = Math.max(line.right, x + item.width);
        line.size = Math.max(line.size, size);
      } else {
        line = { text: str, x, y, right: x + item.width, size };
        lines.push(line);
      }
      ended = false;
    }
    if (item.hasEOL) ended = true;
  }
  for (const each of lines) each.text = each.text.replace(/\s+/g, ' ').trim();
  return lines.filter((each) => each.text);
}

/** The most common distance between one baseline and the next (rounded), the page's line spacing. */
function usualLeading(lines: readonly Line[]): number | undefined {
  const counts = new Map<number, number>();
  for (let i = 1; i < lines.length; i++) {
    const dy = lines[i - 1]!.y - lines[i]!.y;
    const size = lines[i]!.size;
    if (dy <= size * 0.5 || dy > size * 3) continue;
    const key = Math.round(dy);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  let best: number | undefined;
  let bestCount = 0;
  for (const [dy, count] of counts) {
    if (count > bestCount || (count === bestCount && best !== undefined && dy < best)) {
      best = dy;
      bestCount = count;
    }
  }
  return best;
}

/** A line starting with a bullet is a list item, a paragraph of its own. */
const BULLET = /^[•◦▪▫‣⁃●○■□►▸]\s/u;

function breaksBetween(a: Line, b: Line, leading: number | undefined, right: number): boolean {
  const size = Math.max(a.size, b.size);
  const dy = a.y - b.y;
  if (Math.abs(a.size - b.size) > size * 0.2) return true;
  // Moving up (the next column or a new text block) starts a paragraph; staying on the line does not.
  if (dy < -size * 0.5) return true;
  if (dy <= size * 0.5) return false;
  if (BULLET.test(b.text)) return true;
  // Where every paragraph is one line, the usual spacing is the paragraph gap: cap it by the font
  // size, since text is rarely set with more than 1.5 times its size between lines.
  const spacing = Math.min(leading ?? size * 1.2, size * 1.5);
  if (dy > spacing * 1.3 + size * 0.1) return true;
  return b.x > a.x + size && a.right < right - size * 3;
}

/** Lines of one paragraph joined by a space; a line ending in a hyphen joins without one (and keeps it). */
function joinLines(text: string, next: string): string {
  return /\p{L}-$/u.test(text) ? `${text}${next}` : `${text} ${next}`;
}

/** Drops control characters pdf.js passes through (NUL, form feeds) except whitespace. */
function clean(str: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  return str.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, ' ');
}
