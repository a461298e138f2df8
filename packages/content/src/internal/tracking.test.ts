import { describe, expect, test } from '@jest/globals';
import { compareMarkdown, diffJson, fieldChanges } from './tracking.ts';

const at = new Date('2026-12-01T10:00:00.000Z');
const page = (price: number) => `# Kettle\n\nTitle: Kettle 1\n\nPrice: ${price}\n\nIt boils water.\n`;

describe('compareMarkdown', () => {
  test('a page never scraped before is new, with no previous time and no diff', () => {
    expect(compareMarkdown(null, page(25), true)).toEqual({
      previous_scrape_at: null,
      change_status: 'new',
      visibility: 'visible',
    });
  });

  test('equal markdown is same, with the previous time and no diff', () => {
    expect(compareMarkdown({ scrapedAt: at, markdown: page(25) }, page(25), true)).toEqual({
      previous_scrape_at: '2026-12-01T10:00:00.000Z',
      change_status: 'same',
      visibility: 'visible',
    });
  });

  test('changed markdown gives the unified diff and its parts in git-diff mode', () => {
    const tracking = compareMarkdown({ scrapedAt: at, markdown: page(25) }, page(30), true);
    expect(tracking.change_status).toBe('changed');
    expect(tracking.diff?.text).toBe(
      [
        '--- before',
        '+++ after',
        '@@ -2,6 +2,6 @@',
        ' ',
        ' Title: Kettle 1',
        ' ',
        '-Price: 25',
        '+Price: 30',
        ' ',
        ' It boils water.',
        '',
      ].join('\n'),
    );
    const [file] = tracking.diff?.json.files ?? [];
    expect(file?.from).toBe('before');
    expect(file?.to).toBe('after');
    expect(file?.chunks).toHaveLength(1);
    expect(file?.chunks[0]?.content).toBe('@@ -2,6 +2,6 @@');
    expect(file?.chunks[0]?.changes.slice(2, 5)).toEqual([
      { type: 'normal', normal: true, ln1: 4, ln2: 4, content: ' ' },
      { type: 'del', del: true, ln: 5, content: '-Price: 25' },
      { type: 'add', add: true, ln: 5, content: '+Price: 30' },
    ]);
  });

  test('changed markdown has no diff when git-diff is not asked', () => {
    const tracking = compareMarkdown({ scrapedAt: at, markdown: page(25) }, page(30), false);
    expect(tracking.change_status).toBe('changed');
    expect(tracking).not.toHaveProperty('diff');
  });

  test('a diff over its bound is cut, and its parts are those of the cut text', () => {
    const long = (label: string) => Array.from({ length: 500 }, (_, i) => `${label} ${i}`).join('\n');
    const tracking = compareMarkdown({ scrapedAt: at, markdown: long('old') }, long('new'), true, 1024);
    expect(Buffer.byteLength(tracking.diff?.text ?? '')).toBeLessThanOrEqual(1024);
    const changes = tracking.diff?.json.files[0]?.chunks[0]?.changes ?? [];
    const lines = (tracking.diff?.text ?? '')
      .split('\n')
      .filter((l) => /^[-+ ]/.test(l) && !/^(---|\+\+\+) /.test(l));
    expect(changes.map((c) => c.content)).toEqual(lines);
  });
});

describe('diffJson', () => {
  test('numbers each line in its own text across hunks, and skips "no newline" notes', () => {
    const text = [
      '--- before',
      '+++ after',
      '@@ -1,2 +1,1 @@',
      '-a',
      ' b',
      '@@ -10,1 +9,2 @@',
      ' j',
      '+k',
      '\\ No newline at end of file',
      '',
    ].join('\n');
    expect(diffJson(text).files[0]?.chunks).toEqual([
      {
        content: '@@ -1,2 +1,1 @@',
        changes: [
          { type: 'del', del: true, ln: 1, content: '-a' },
          { type: 'normal', normal: true, ln1: 2, ln2: 1, content: ' b' },
        ],
      },
      {
        content: '@@ -10,1 +9,2 @@',
        changes: [
          { type: 'normal', normal: true, ln1: 10, ln2: 9, content: ' j' },
          { type: 'add', add: true, ln: 10, content: '+k' },
        ],
      },
    ]);
  });

  test('an empty diff has no files', () => {
    expect(diffJson('')).toEqual({ files: [] });
  });
});

describe('fieldChanges', () => {
  test('gives only the fields whose values differ, with both values', () => {
    expect(
      fieldChanges(
        { title: 'Kettle', price: 25, tags: ['a'] },
        { title: 'Kettle', price: 30, tags: ['a'], stock: 3 },
      ),
    ).toEqual({ price: { previous: 25, current: 30 }, stock: { previous: null, current: 3 } });
  });

  test('objects equal but for their key order are the same', () => {
    expect(fieldChanges({ size: { w: 1, h: 2 } }, { size: { h: 2, w: 1 } })).toEqual({});
  });

  test('a field that vanished is given with a null current value', () => {
    expect(fieldChanges({ price: 25 }, {})).toEqual({ price: { previous: 25, current: null } });
  });
});
