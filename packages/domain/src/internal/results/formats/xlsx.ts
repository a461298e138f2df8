import type { Readable } from 'node:stream';
import yazl from 'yazl';
import type { Encoder } from './encoder.ts';

/** Excel refuses longer cell text. */
export const XLSX_MAX_CELL = 32_767;

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';
const CT = 'application/vnd.openxmlformats-officedocument';
const XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

const PARTS: Record<string, string> = {
  '[Content_Types].xml': `${XML_DECL}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="${CT}.package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="${CT}.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="${CT}.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="${CT}.spreadsheetml.styles+xml"/></Types>`,
  '_rels/.rels': `${XML_DECL}<Relationships xmlns="${PKG_REL}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  'xl/workbook.xml': `${XML_DECL}<workbook xmlns="${MAIN}" xmlns:r="${REL}"><sheets><sheet name="results" sheetId="1" r:id="rId1"/></sheets></workbook>`,
  'xl/_rels/workbook.xml.rels': `${XML_DECL}<Relationships xmlns="${PKG_REL}"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${REL}/styles" Target="styles.xml"/></Relationships>`,
  'xl/styles.xml': `${XML_DECL}<styleSheet xmlns="${MAIN}"><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>`,
};

// Characters XML 1.0 cannot carry, and a literal `_xHHHH_` that a reader would decode.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const SPECIAL = /[&<>\r\0-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|_(?=x[0-9A-Fa-f]{4}_)/g;
const hex4 = (c: string) => c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#13;', '\0': '' };

/**
 * Cell text as XML. Control characters use the `_xHHHH_` escape of the spreadsheet format (as
 * Excel writes them), a literal `_xHHHH_` is protected as `_x005F_xHHHH_`, a carriage return is a
 * character reference (a parser would turn a raw one into a line feed), NUL is dropped (no XML
 * can hold it), and text is cut at Excel's 32,767 characters (without splitting a surrogate pair).
 */
export function xlsxText(value: string): string {
  let v = value;
  if (v.length > XLSX_MAX_CELL) {
    const cut = /[\uD800-\uDBFF]/.test(v[XLSX_MAX_CELL - 1]!) ? XLSX_MAX_CELL - 1 : XLSX_MAX_CELL;
    v = v.slice(0, cut);
  }
  return v.replace(SPECIAL, (c) => ENTITY[c] ?? (c === '_' ? '_x005F_' : `_x${hex4(c)}_`));
}

const EDGE_SPACE = /^\s|\s$/;

/** A1-style column letters: 0 → A, 26 → AA. */
export function columnLetters(index: number): string {
  let s = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26))
    s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

/** The XML of the one worksheet: a header row, then one row per record, every value as text. */
export function sheetEncoder(columns: readonly string[]): Encoder {
  const letters = columns.map((_, i) => columnLetters(i));
  let rowNumber = 0;
  const row = (cells: readonly (string | null)[]) => {
    rowNumber++;
    let out = `<row r="${rowNumber}">`;
    for (let i = 0; i < letters.length; i++) {
      const v = cells[i];
      if (v == null || v === '') continue;
      // Without xml:space="preserve" a reader may drop white space at either end.
      const space = EDGE_SPACE.test(v) ? ' xml:space="preserve"' : '';
      out += `<c r="${letters[i]}${rowNumber}" t="inlineStr"><is><t${space}>${xlsxText(v)}</t></is></c>`;
    }
    return `${out}</row>`;
  };
  return {
    head: () => `${XML_DECL}<worksheet xmlns="${MAIN}"><sheetData>${row(columns)}`,
    rows(rows) {
      let out = '';
      for (const r of rows) out += row(r);
      return out;
    },
    tail: () => '</sheetData></worksheet>',
  };
}

/**
 * The workbook as a zip stream around a sheet stream. The zip is written as the sheet arrives
 * (sizes go in data descriptors, ZIP64 when needed), with backpressure through to the sheet.
 * Destroying the returned stream destroys the sheet stream, which releases its source.
 */
export function xlsxStream(sheet: Readable): Readable {
  const zip = new yazl.ZipFile();
  for (const [name, text] of Object.entries(PARTS)) zip.addBuffer(Buffer.from(text), name);
  // Level 1: several times faster than the default 6 on sheet XML, for a somewhat larger file.
  zip.addReadStream(sheet, 'xl/worksheets/sheet1.xml', { compressionLevel: 1 });
  zip.end();
  const out = zip.outputStream as Readable;
  zip.on('error', (err: Error) => out.destroy(err));
  // yazl only pipes the sheet: its errors and an early end of the output must be passed on by hand.
  sheet.on('error', (err) => out.destroy(err));
  out.on('close', () => sheet.destroy());
  return out;
}
