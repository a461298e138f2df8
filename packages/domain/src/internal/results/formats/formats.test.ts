import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { setImmediate } from 'node:timers/promises';
import {
  loadIntoPostgres,
  loadIntoSqlite,
  readCsv,
  readXlsx,
} from '../../../../../../test/support/readers.ts';
import { columnNames, type Row } from './columns.ts';
import { csvField } from './csv.ts';
import { DOWNLOADS } from './index.ts';
import { jsonEncoder } from './json.ts';
import { sqlIdentifier, sqlLiteral } from './sql.ts';
import { arraySource, encodeStream, type RowSource } from './stream.ts';
import { columnLetters, sheetEncoder, XLSX_MAX_CELL, xlsxStream, xlsxText } from './xlsx.ts';

// Values no database row can hold (NUL: jsonb and text reject it) are tested here, on the encoders.
const names = ['title', 'note'];
const rows: Row[] = [
  ['https://a.test/1', '2026-01-02T03:04:05.006Z', 'nul\0inside', 'tab\there'],
  ['https://a.test/2', '2026-01-02T03:04:05.007Z', 'bell\x07 and _x0041_ literal', 'cr\ronly'],
  ['https://a.test/3', '2026-01-02T03:04:05.008Z', null, '\\ backslash :var \\q'],
  ['https://a.test/4', '2026-01-02T03:04:05.009Z', 'crlf\r\nend\r', "it's \r\r\n"],
];
const file = async (format: keyof typeof DOWNLOADS, r: readonly Row[] = rows, n = names) =>
  buffer(DOWNLOADS[format].stream(n, arraySource(r)));

describe('columnNames', () => {
  it('puts url and scraped_at first and keeps the query order', () => {
    expect(columnNames(['b', 'a'])).toEqual(['url', 'scraped_at', 'b', 'a']);
  });

  it('renames a query that repeats an earlier column name', () => {
    expect(columnNames(['url', 'url_2', 'x'])).toEqual(['url', 'scraped_at', 'url_2', 'url_2_2', 'x']);
  });

  it('compares names as the key function says (SQLite ignores case)', () => {
    expect(columnNames(['Title', 'title'], (n) => n.toLowerCase())).toEqual([
      'url',
      'scraped_at',
      'Title',
      'title_2',
    ]);
  });
});

describe('csv', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['line\nbreak', '"line\nbreak"'],
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', `"'\rx"`],
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    [null, ''],
  ])('writes %j as %j', (value, field) => {
    expect(csvField(value)).toBe(field);
  });

  it.each([
    [' =1+1', "' =1+1"],
    ['  @SUM(A1)', "'  @SUM(A1)"],
    ['\u00a0=1', "'\u00a0=1"],
    ['\ufeff+1', "'\ufeff+1"],
    ['\n-1', `"'\n-1"`],
    [' \tx', "' \tx"],
    ['\n\r=1', `"'\n\r=1"`],
    ['\uff1d1+1', "'\uff1d1+1"],
    ['\uff0b1', "'\uff0b1"],
    ['\uff0d1', "'\uff0d1"],
    ['\uff20SUM(A1)', "'\uff20SUM(A1)"],
    [' \uff1dHYPERLINK("x")', `"' \uff1dHYPERLINK(""x"")"`],
    // Leading white space before anything else is left alone.
    ['  spaced  ', '  spaced  '],
    ['\nline', '"\nline"'],
    ['a=1', 'a=1'],
  ])('guards %j, a formula after leading white space or in full-width form, as %j', (value, field) => {
    expect(csvField(value)).toBe(field);
  });

  it('keeps NUL and every other character, read back by csv-parse', async () => {
    const text = (await file('csv')).toString();
    expect(text.endsWith('\r\n')).toBe(true);
    expect(readCsv(text)).toEqual({
      columns: ['url', 'scraped_at', 'title', 'note'],
      rows: [
        [...rows[0]!],
        [...rows[1]!],
        [rows[2]![0], rows[2]![1], '', '\\ backslash :var \\q'],
        [...rows[3]!],
      ],
    });
  });
});

describe('json', () => {
  it('is an array of flat objects that keeps NUL (as \\u0000)', async () => {
    expect(JSON.parse((await file('json')).toString())).toEqual(
      rows.map(([url, scraped_at, title, note]) => ({ url, scraped_at, title, note })),
    );
  });

  it('is [] without records', async () => {
    expect((await file('json', [])).toString()).toBe('[]');
  });
});

describe('xlsx', () => {
  it('escapes what XML cannot hold the way spreadsheet readers undo it', () => {
    expect(xlsxText('a & <b> \r\n')).toBe('a &amp; &lt;b&gt; &#13;\n');
    expect(xlsxText('\x01_x0041_\0')).toBe('_x0001__x005F_x0041_');
  });

  it('cuts text at 32,767 characters without splitting an emoji', () => {
    expect(xlsxText('a'.repeat(XLSX_MAX_CELL + 5))).toHaveLength(XLSX_MAX_CELL);
    const cut = xlsxText(`${'a'.repeat(XLSX_MAX_CELL - 1)}😀`);
    expect(cut).toBe('a'.repeat(XLSX_MAX_CELL - 1));
  });

  it('names columns A…Z, AA…', () => {
    expect([0, 25, 26, 51, 52, 701, 702].map(columnLetters)).toEqual([
      'A',
      'Z',
      'AA',
      'AZ',
      'BA',
      'ZZ',
      'AAA',
    ]);
  });

  it('is one sheet "results" that SheetJS reads back (NUL dropped, control characters kept)', async () => {
    const book = readXlsx(await file('xlsx'));
    expect(book.sheets).toEqual(['results']);
    expect(book.columns).toEqual(['url', 'scraped_at', 'title', 'note']);
    expect(book.rows).toEqual([
      ['https://a.test/1', '2026-01-02T03:04:05.006Z', 'nulinside', 'tab\there'],
      ['https://a.test/2', '2026-01-02T03:04:05.007Z', 'bell\x07 and _x0041_ literal', 'cr\ronly'],
      ['https://a.test/3', '2026-01-02T03:04:05.008Z', null, '\\ backslash :var \\q'],
      ['https://a.test/4', '2026-01-02T03:04:05.009Z', 'crlf\r\nend\r', "it's \r\r\n"],
    ]);
  });
});

describe('sql', () => {
  const expected = rows.map((r) => r.map((v) => (v === null ? null : v.replaceAll('\0', ''))));

  it('loads into SQLite with NUL removed and backslashes kept', async () => {
    expect(loadIntoSqlite((await file('sql')).toString())).toEqual({
      columns: ['url', 'scraped_at', 'title', 'note'],
      rows: expected,
    });
  });

  it('loads into PostgreSQL with psql, NUL removed and backslashes kept', async () => {
    expect(await loadIntoPostgres((await file('sql')).toString())).toEqual({
      columns: ['url', 'scraped_at', 'title', 'note'],
      rows: expected,
    });
  });

  it('double-quotes identifiers and single-quotes strings, doubling the quotes inside', () => {
    expect(sqlIdentifier('a"b')).toBe('"a""b"');
    expect(sqlLiteral("it's")).toBe("'it''s'");
    expect(sqlLiteral(null)).toBe('NULL');
    expect(sqlLiteral('a\r\nb')).toBe("'a\r' || '\nb'");
  });

  it('keeps column names distinct the way both databases compare them', async () => {
    const odd = ['Title', 'title', 'url', 'x'.repeat(64), `${'x'.repeat(63)}y`];
    const text = (await file('sql', [['u', 't', '1', '2', '3', '4', '5']], odd)).toString();
    expect(text).toContain(
      `CREATE TABLE IF NOT EXISTS "scrape_results" ("url" text, "scraped_at" text, "Title" text, "title_2" text, "url_2" text, "${'x'.repeat(64)}" text, "${'x'.repeat(59)}_2" text);`,
    );
    expect(loadIntoSqlite(text).rows).toEqual([['u', 't', '1', '2', '3', '4', '5']]);
    expect((await loadIntoPostgres(text)).rows).toEqual([['u', 't', '1', '2', '3', '4', '5']]);
  });
});

describe('streams', () => {
  // Far more rows than every buffer between the source and a client holds.
  const ROWS = 5_000;

  /** A source of ROWS wide rows, recording how far it was read and whether it was closed. */
  function plentiful() {
    const state = { fetched: 0, closed: 0 };
    const source: RowSource = {
      async next(max) {
        const n = Math.min(max, ROWS - state.fetched);
        state.fetched += n;
        // Random text: the zip cannot squeeze it, so its buffers fill as a client's would.
        return Array.from({ length: n }, () => [
          'https://a.test/x',
          '2026-01-02T03:04:05.006Z',
          randomBytes(250).toString('hex'),
          null,
        ]);
      },
      async close() {
        state.closed++;
      },
    };
    return { state, source };
  }

  const firstChunk = (stream: NodeJS.ReadableStream) => new Promise((r) => stream.once('data', r));
  const full = (stream: Readable) => stream.readableLength >= stream.readableHighWaterMark;

  /** The encoded records, and the stream the client reads (for xlsx, the zip around them). */
  const json = (s: RowSource) => {
    const encoded = encodeStream(s, jsonEncoder(columnNames(names)));
    return { encoded, out: encoded };
  };
  const xlsx = (s: RowSource) => {
    const encoded = encodeStream(s, sheetEncoder(columnNames(names)));
    return { encoded, out: xlsxStream(encoded) };
  };

  it.each([
    ['json', json],
    ['xlsx', xlsx],
  ])('%s: reads only as far as the consumer wants, and closes the source once destroyed', async (_, make) => {
    const { state, source } = plentiful();
    const { encoded, out } = make(source);
    await firstChunk(out);
    out.pause();
    // Once the buffers at both ends are full, a reader that waits for the client is asked for
    // nothing more; one that does not wait goes on to the source's end, however fast or slow.
    let seen = -1;
    while (!(full(encoded) && full(out) && state.fetched === seen) && state.fetched < ROWS) {
      seen = state.fetched;
      await setImmediate();
    }
    expect(state.fetched).toBeLessThan(ROWS);
    out.destroy();
    await once(out, 'close');
    expect(state.closed).toBe(1);
  });
});
