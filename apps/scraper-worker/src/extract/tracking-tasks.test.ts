import { describe, expect, test } from '@jest/globals';
import { packDocument, unpackDocument } from '@scrapejobs/content';
import { trackTask } from './tracking-tasks.ts';

const at = new Date('2026-12-01T10:00:00.000Z');
const packed = (markdown: string) => packDocument({ markdown, truncated: [] });
const previous = (markdown: string) => ({ scrapedAt: at, document: packed(markdown).data });

describe('trackTask', () => {
  test('stores the comparison in the document, which keeps its other fields', () => {
    const document = packDocument({ markdown: 'Price: 30\n', summary: 'A kettle.', truncated: [] });
    const tracked = trackTask({
      document,
      previous: previous('Price: 25\n'),
      gitDiff: true,
      modelTokens: null,
    });
    const stored = unpackDocument(tracked.document.data);
    expect(stored.summary).toBe('A kettle.');
    expect(stored.change_tracking).toEqual(tracked.tracking);
    expect(tracked.tracking.change_status).toBe('changed');
    expect(tracked.tracking.diff?.text).toContain('-Price: 25\n+Price: 30\n');
    expect(tracked).not.toHaveProperty('texts');
  });

  test('json mode gives both versions cut to the model’s tokens, only for a changed page', () => {
    const long = `${'word '.repeat(400)}\n`;
    const changed = trackTask({
      document: packed(`Price: 30\n${long}`),
      previous: previous(`Price: 25\n${long}`),
      gitDiff: false,
      modelTokens: 50,
    });
    expect(changed.tracking).not.toHaveProperty('diff');
    expect(changed.texts?.previous.text.startsWith('Price: 25')).toBe(true);
    expect(changed.texts?.current.text.startsWith('Price: 30')).toBe(true);
    expect(changed.texts?.current.cut).toBe(true);
    const same = trackTask({
      document: packed('Price: 25\n'),
      previous: previous('Price: 25\n'),
      gitDiff: true,
      modelTokens: 50,
    });
    expect(same.tracking.change_status).toBe('same');
    expect(same).not.toHaveProperty('texts');
    const first = trackTask({
      document: packed('Price: 25\n'),
      previous: null,
      gitDiff: true,
      modelTokens: 50,
    });
    expect(first.tracking).toEqual({ previous_scrape_at: null, change_status: 'new', visibility: 'visible' });
    expect(first).not.toHaveProperty('texts');
  });
});
