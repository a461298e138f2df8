import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { markdownText, tokenScore } from '../../testing/text-score.ts';
import { htmlDocument } from './index.ts';

/** Pages written to reproduce real layouts, each with the text a reader counts as its article. */
const CORPUS = join(import.meta.dirname, 'fixtures', 'reader');
/** Each page keeps at least this token F1 against its marked text (bench/content-quality.ts has the figures). */
const MIN_F1 = 0.9;

const pages = readdirSync(CORPUS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

describe('reader corpus: the main content against the marked text', () => {
  test('the corpus has its pages', () => expect(pages.length).toBeGreaterThanOrEqual(20));

  test.each(pages)('%s', (name) => {
    const html = readFileSync(join(CORPUS, name, 'source.html'), 'utf8');
    const expected = readFileSync(join(CORPUS, name, 'expected.txt'), 'utf8');
    const url = `https://reader.example/${name}`;
    const { markdown } = htmlDocument(
      html,
      { sourceUrl: url, url, statusCode: 200, contentType: 'text/html' },
      { formats: ['markdown'], onlyMainContent: true, includeTags: [], excludeTags: [] },
    );
    expect(tokenScore(markdownText(markdown!), expected).f1).toBeGreaterThanOrEqual(MIN_F1);
  });
});
