import { describe, expect, test } from '@jest/globals';
import { pageDiff } from './diff.ts';

const numbered = (count: number, label = 'line') =>
  Array.from({ length: count }, (_, i) => `${label} ${i + 1}`);

describe('pageDiff', () => {
  test('equal texts have no diff', () => {
    expect(pageDiff('# Title\n\nText.', '# Title\n\nText.')).toBeNull();
    expect(pageDiff('', '')).toBeNull();
  });

  test('one changed line gives one hunk with 3 lines of context', () => {
    const before = numbered(20);
    const after = [...before];
    after[9] = 'line 10, edited';
    expect(pageDiff(before.join('\n'), after.join('\n'))).toBe(
      [
        '--- before',
        '+++ after',
        '@@ -7,7 +7,7 @@',
        ' line 7',
        ' line 8',
        ' line 9',
        '-line 10',
        '+line 10, edited',
        ' line 11',
        ' line 12',
        ' line 13',
        '',
      ].join('\n'),
    );
  });

  test('a text that appears or vanishes is all added or all removed', () => {
    expect(pageDiff('', 'new page')).toBe(
      '--- before\n+++ after\n@@ -0,0 +1,1 @@\n+new page\n\\ No newline at end of file\n',
    );
    expect(pageDiff('a\nb\n', '')).toBe('--- before\n+++ after\n@@ -1,2 +0,0 @@\n-a\n-b\n');
  });

  test('a diff over the limit is cut at a line boundary and ends with a line saying so', () => {
    const before = numbered(2000).join('\n');
    const after = numbered(2000, 'row').join('\n');
    const diff = pageDiff(before, after, 1000) ?? '';
    expect(Buffer.byteLength(diff)).toBeLessThanOrEqual(1000);
    expect(Buffer.byteLength(diff)).toBeGreaterThan(900);
    expect(diff.endsWith('\n\\ Diff cut at 1000 bytes\n')).toBe(true);
    const lines = diff.split('\n').slice(0, -2);
    expect(lines.slice(0, 3)).toEqual(['--- before', '+++ after', '@@ -1,2000 +1,2000 @@']);
    // Every kept line is whole.
    expect(lines.slice(3).every((line) => /^-line \d+$/.test(line))).toBe(true);
  });

  test('a first changed line longer than the limit is kept in part, not cut inside a character', () => {
    const diff = pageDiff('intro\n', `intro\n${'é'.repeat(1000)}\n`, 300) ?? '';
    expect(Buffer.byteLength(diff)).toBeGreaterThan(296);
    expect(Buffer.byteLength(diff)).toBeLessThanOrEqual(300);
    expect(diff).toMatch(
      /^--- before\n\+\+\+ after\n@@ -1,1 \+1,2 @@\n intro\n\+é+\n\\ Diff cut at 300 bytes\n$/,
    );
  });

  test('two unrelated 5 MiB texts give a bounded "replaced" diff instead of a long computation', () => {
    const text = (label: string) => {
      const lines: string[] = [];
      for (let i = 0, size = 0; size < 5 * 1024 * 1024; i++) {
        const line = `${label} ${i} ${((i * 2654435761) % 4294967296).toString(36)}`;
        lines.push(line);
        size += line.length + 1;
      }
      return lines.join('\n');
    };
    const before = text('old');
    const after = text('new');
    const diff = pageDiff(before, after) ?? '';
    expect(Buffer.byteLength(diff)).toBeLessThanOrEqual(64 * 1024);
    const lines = diff.split('\n');
    expect(lines[2]).toBe(`@@ -1,${before.split('\n').length} +1,${after.split('\n').length} @@`);
    expect(lines[3]).toBe('-old 0 0');
    expect(lines.at(-2)).toBe('\\ Diff cut at 65536 bytes');
  });
});
