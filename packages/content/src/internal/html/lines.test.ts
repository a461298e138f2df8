import { describe, expect, test } from '@jest/globals';
import { isChromeLine } from './lines.ts';

describe('rule: lines a reader view leaves out by what they say', () => {
  test.each([
    'By JANE DOE and LI WEI',
    'By Maria Okafor | Staff writer',
    'Par Claire Le Goff, publié le 3 septembre 2024 à 07h15',
    'Von Jonas Weber Aktualisiert am 22.07.2024, 14:05 Uhr',
    'Words by Harriet Vane 12 February 2024 9 min read',
    'Updated 3:45 PM EST, March 5, 2024',
    'Published March 4, 2024 at 6:12 p.m.',
    'Posted on June 14, 2023 by Ruth',
    'Redacción · 14/05/2024 - 11:20',
    '2024年5月8日 17時30分',
    '15 апреля 2024, 12:40',
    '10:41pm',
    'Lesezeit: 4 Min.',
    '1 / 12',
    '3 of 10',
    '412',
    'Advertisement',
    'ADVERTISEMENT',
    'Anzeige',
    'Close',
    'Back to Gallery',
    'Share this:',
    'Skip to main content',
  ])('%s is such a line', (line) => expect(isChromeLine(line)).toBe(true));

  test.each([
    'By the end of the decade the leases were gone, replaced by computers.',
    'The meeting is on 12/05/2024.',
    'Sources: Census Bureau, 2020',
    'Closed for the winter',
    'Next year the bridge opens to cyclists as well as walkers.',
    'Updated rules for cyclists come into force next month, the council said.',
    '',
  ])('%s is not', (line) => expect(isChromeLine(line)).toBe(false));

  test('counts, counters and dates alone are judged only for a block, not inside a sentence', () => {
    expect(isChromeLine('5.2', false)).toBe(false);
    expect(isChromeLine('April 18, 2024', false)).toBe(false);
    expect(isChromeLine('1 / 12', false)).toBe(false);
    expect(isChromeLine('Close', false)).toBe(true);
    expect(isChromeLine('By Jane Doe', false)).toBe(true);
  });
});
