import { describe, expect, test } from '@jest/globals';
import { buildRecords } from './records.ts';

const columns = [
  { name: 'a', join: false },
  { name: 'b', join: false },
  { name: 'j', join: true },
];

describe('buildRecords', () => {
  test('uneven match counts give as many rows as the longest, padded with null', () => {
    expect(buildRecords(columns, [['a1', 'a2', 'a3'], ['b1'], ['j1', 'j2']])).toEqual([
      { a: 'a1', b: 'b1', j: 'j1 j2' },
      { a: 'a2', b: null, j: 'j1 j2' },
      { a: 'a3', b: null, j: 'j1 j2' },
    ]);
  });

  test('a joined query without matches is null in every row', () => {
    expect(buildRecords(columns, [['a1', 'a2'], [], []])).toEqual([
      { a: 'a1', b: null, j: null },
      { a: 'a2', b: null, j: null },
    ]);
  });

  test('joining skips empty matches so no double spaces appear', () => {
    expect(buildRecords([{ name: 'j', join: true }], [['x', '', 'y']])).toEqual([{ j: 'x y' }]);
    expect(buildRecords([{ name: 'j', join: true }], [['']])).toEqual([{ j: '' }]);
  });

  test('no match anywhere gives no record', () => {
    expect(buildRecords(columns, [[], [], []])).toEqual([]);
    expect(buildRecords([], [])).toEqual([]);
  });

  test('all queries joined give exactly one record', () => {
    const joined = [
      { name: 'x', join: true },
      { name: 'y', join: true },
    ];
    expect(buildRecords(joined, [['1', '2', '3'], []])).toEqual([{ x: '1 2 3', y: null }]);
  });

  test('an empty string match still counts as a match', () => {
    expect(buildRecords([{ name: 'a', join: false }], [['']])).toEqual([{ a: '' }]);
  });

  test('a query named __proto__ is an ordinary own key', () => {
    const [record] = buildRecords([{ name: '__proto__', join: false }], [['x']]);
    expect(Object.keys(record ?? {})).toEqual(['__proto__']);
    expect(JSON.stringify(record)).toBe('{"__proto__":"x"}');
  });
});
