import { describe, expect, test } from '@jest/globals';
import iconv from 'iconv-lite';
import { decodeHtml } from '../index.ts';

const RUSSIAN = 'Привет, мир';
const FRENCH = 'Crème brûlée à 5 €';

function page(head: string, body: string): string {
  return `<html><head>${head}<title>t</title></head><body><p>${body}</p></body></html>`;
}

describe('decodeHtml', () => {
  test('UTF-8 is the default', () => {
    const bytes = new TextEncoder().encode(page('', RUSSIAN));
    expect(decodeHtml(bytes, undefined)).toBe(page('', RUSSIAN));
    expect(decodeHtml(bytes, 'text/html')).toBe(page('', RUSSIAN));
  });

  test('a windows-1251 page declared in Content-Type', () => {
    const bytes = iconv.encode(page('', RUSSIAN), 'windows-1251');
    expect(decodeHtml(bytes, 'text/html; charset=windows-1251')).toBe(page('', RUSSIAN));
    expect(decodeHtml(bytes, 'text/html;charset="CP1251"')).toBe(page('', RUSSIAN));
  });

  test('a windows-1251 page declared by <meta charset>', () => {
    const html = page('<meta charset="windows-1251">', RUSSIAN);
    expect(decodeHtml(iconv.encode(html, 'windows-1251'), 'text/html')).toBe(html);
  });

  test('an iso-8859-1 page declared by http-equiv, decoded as windows-1252 like browsers', () => {
    const html = page('<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">', FRENCH);
    // The euro sign exists only in windows-1252, which WHATWG uses for every latin1 label.
    expect(decodeHtml(iconv.encode(html, 'windows-1252'), undefined)).toBe(html);
  });

  test('Content-Type wins over <meta>', () => {
    const html = page('<meta charset="utf-8">', FRENCH);
    expect(decodeHtml(iconv.encode(html, 'windows-1252'), 'text/html; charset=iso-8859-1')).toBe(html);
  });

  test('an unknown Content-Type charset falls through to <meta>', () => {
    const html = page('<meta charset="koi8-r">', RUSSIAN);
    expect(decodeHtml(iconv.encode(html, 'koi8-r'), 'text/html; charset=no-such-thing')).toBe(html);
  });

  test('a byte order mark wins over any declaration and is removed', () => {
    const utf8 = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(page('', RUSSIAN))]);
    expect(decodeHtml(utf8, 'text/html; charset=windows-1251')).toBe(page('', RUSSIAN));
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(page('', RUSSIAN), 'utf16le')]);
    expect(decodeHtml(utf16, undefined)).toBe(page('', RUSSIAN));
  });

  test('a utf-16 declaration without a BOM is read as UTF-8, as browsers do', () => {
    const html = page('<meta charset="utf-16">', FRENCH);
    expect(decodeHtml(new TextEncoder().encode(html), undefined)).toBe(html);
  });

  test('labels only iconv-lite knows still decode', () => {
    const bytes = iconv.encode(page('', 'Ünïcödé'), 'cp437');
    expect(decodeHtml(bytes, 'text/html; charset=cp437')).toBe(page('', 'Ünïcödé'));
  });

  test('invalid UTF-8 bytes become replacement characters rather than failing', () => {
    expect(decodeHtml(Uint8Array.from([0x61, 0xff, 0x62]), 'text/html; charset=utf-8')).toBe('a\uFFFDb');
  });

  test('a Shift_JIS page declared by an XML declaration', () => {
    const html = '<?xml version="1.0" encoding="Shift_JIS"?><html><body>日本語</body></html>';
    expect(decodeHtml(iconv.encode(html, 'shift_jis'), undefined)).toBe(html);
  });

  test('works on a Uint8Array view into a larger buffer', () => {
    const whole = iconv.encode(`xxxx${page('<meta charset="windows-1251">', RUSSIAN)}`, 'windows-1251');
    const view = new Uint8Array(whole.buffer, whole.byteOffset + 4, whole.length - 4);
    expect(decodeHtml(view, undefined)).toBe(page('<meta charset="windows-1251">', RUSSIAN));
  });
});
