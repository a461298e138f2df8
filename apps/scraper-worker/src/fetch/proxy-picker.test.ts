import { describe, expect, test } from '@jest/globals';
import { createProxyPicker, NoProxyAvailableError, type ProxyEntry } from './proxy-picker.ts';

// Failure memory is shared by the process, so every test uses proxy URLs of its own.
let serial = 0;
function proxies(...countries: (string | null)[]): ProxyEntry[] {
  serial++;
  return countries.map((country, i) => ({ url: `http://proxy-${serial}-${i}.test:8080`, country }));
}

function picks(picker: { pick(attempt: number): { url: string } | null }, n: number): string[] {
  return Array.from({ length: n }, (_, i) => picker.pick(i)?.url ?? 'direct');
}

describe('createProxyPicker', () => {
  test('round_robin visits every proxy once per cycle', () => {
    const list = proxies(null, null, null);
    const seen = picks(createProxyPicker(list, 'round_robin', null, 'job_1'), 6);
    expect(new Set(seen.slice(0, 3)).size).toBe(3);
    expect(seen.slice(3)).toEqual(seen.slice(0, 3));
  });

  test('round_robin shares one counter between pickers', () => {
    const list = proxies(null, null, null);
    const a = createProxyPicker(list, 'round_robin', null, 'job_a');
    const b = createProxyPicker(list, 'round_robin', null, 'job_b');
    const seen = [a.pick(0)?.url, b.pick(0)?.url, a.pick(0)?.url];
    expect(new Set(seen).size).toBe(3);
  });

  test('random draws from the pool with the given random source', () => {
    const list = proxies(null, null, null);
    const values = [0, 0.5, 0.99];
    const picker = createProxyPicker(list, 'random', null, 'job_1', {
      now: Date.now,
      random: () => values.shift() ?? 0,
    });
    expect(picks(picker, 3)).toEqual(list.map((p) => p.url));
  });

  test('random eventually uses every proxy', () => {
    const list = proxies(null, null, null);
    const seen = new Set(picks(createProxyPicker(list, 'random', null, 'job_1'), 100));
    expect(seen.size).toBe(3);
  });

  test('sticky gives the same proxy for the same key, in every picker', () => {
    const list = proxies(null, null, null, null, null);
    const first = picks(createProxyPicker(list, 'sticky', null, 'job_sticky'), 5);
    const second = picks(createProxyPicker(list, 'sticky', null, 'job_sticky'), 5);
    expect(new Set([...first, ...second]).size).toBe(1);
  });

  test('sticky moves to another proxy after a failure and stays there', () => {
    const list = proxies(null, null, null);
    const picker = createProxyPicker(list, 'sticky', null, 'job_2');
    const before = picker.pick(0)?.url ?? '';
    picker.reportFailure(before);
    const after = picks(picker, 4);
    expect(after[0]).not.toBe(before);
    expect(new Set(after).size).toBe(1);
  });

  test('a failed proxy is skipped until its cooldown ends', () => {
    const list = proxies(null, null);
    let now = 1_000_000;
    const picker = createProxyPicker(list, 'round_robin', null, 'job_1', {
      now: () => now,
      random: Math.random,
    });
    const bad = list[0]?.url ?? '';
    picker.reportFailure(bad);
    expect(picks(picker, 4)).not.toContain(bad);
    now += 60_000;
    expect(picks(picker, 2)).toContain(bad);
  });

  test('when every proxy failed recently, the one that failed longest ago is used', () => {
    const list = proxies(null, null);
    let now = 1_000_000;
    const picker = createProxyPicker(list, 'random', null, 'job_1', { now: () => now, random: Math.random });
    picker.reportFailure(list[1]?.url ?? '');
    now += 10;
    picker.reportFailure(list[0]?.url ?? '');
    expect(picker.pick(0)?.url).toBe(list[1]?.url);
  });

  test('a country keeps only the proxies of that country', () => {
    const list = proxies('US', 'DE', 'de', null);
    const seen = new Set(picks(createProxyPicker(list, 'round_robin', 'DE', 'job_1'), 8));
    expect([...seen].sort()).toEqual([list[1]?.url, list[2]?.url].sort());
  });

  test('without proxies and without a country the page is fetched directly', () => {
    expect(createProxyPicker([], 'round_robin', null, 'job_1').pick(0)).toBeNull();
  });

  test('a country that no proxy has is an error, never a direct fetch', () => {
    const picker = createProxyPicker(proxies('US'), 'sticky', 'FR', 'job_1');
    expect(() => picker.pick(0)).toThrow(NoProxyAvailableError);
    expect(() => createProxyPicker([], 'sticky', 'FR', 'job_1').pick(0)).toThrow(NoProxyAvailableError);
  });
});
