import { describe, expect, test } from '@jest/globals';
import { isId, MAX_PAGE_RECORDS, newId, newRecordIdBase, recordId } from './ids.ts';

describe('newId', () => {
  test('gives the prefix, 10 time characters and 16 random Crockford base32 characters', () => {
    const id = newId('res', 0);
    expect(id).toMatch(/^res_0000000000[0-9A-HJKMNP-TV-Z]{16}$/);
    expect(isId('res', id)).toBe(true);
    expect(isId('job', id)).toBe(false);
  });

  test('encodes the time so that later ids sort after earlier ones', () => {
    expect(newId('job', 1_795_000_000_000).slice(4, 14)).toBe('01M7Q5CQG0');
    const earlier = newId('evt', 1_795_000_000_000);
    const later = newId('evt', 1_795_000_000_001);
    expect(later > earlier).toBe(true);
  });

  test('gives distinct random parts across many ids, past each refill of the random pool', () => {
    const now = Date.now();
    const ids = Array.from({ length: 2000 }, () => newId('res', now));
    expect(new Set(ids).size).toBe(2000);
    expect(ids.every((id) => isId('res', id))).toBe(true);
    // Every character of the alphabet turns up in the random parts.
    const characters = new Set(ids.flatMap((id) => [...id.slice(14)]));
    expect(characters.size).toBe(32);
  });
});

describe('record ids', () => {
  test("share their page's base and end with the row in three base-32 characters", () => {
    const base = newRecordIdBase(0);
    expect(base).toMatch(/^0000000000[0-9A-HJKMNP-TV-Z]{13}$/);
    expect(recordId(base, 0)).toBe(`res_${base}000`);
    expect(recordId(base, 33)).toBe(`res_${base}011`);
    expect(recordId(base, 9_999)).toBe(`res_${base}9RF`);
    expect(recordId(base, MAX_PAGE_RECORDS - 1)).toBe(`res_${base}ZZZ`);
    expect(isId('res', recordId(base, 123))).toBe(true);
  });
});
