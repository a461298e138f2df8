import { makePdf } from '../../../content/src/testing/pdf.ts';
import { fileKind, parsedFileDocument } from './parse-file.ts';
import { parseParseOptions } from './parse-request.ts';
import { parsedValue } from './testing.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const optionsOf = (fields: Record<string, unknown> = {}) =>
  parsedValue(parseParseOptions(JSON.stringify(fields)));

const PAGE = `<!doctype html><html lang="en"><head><title>Release notes</title>
<meta name="description" content="What changed"></head><body>
<nav><a href="/home">Home</a></nav>
<main><h1>Version 2</h1><p>Faster <a href="https://example.com/changes">changes</a>.</p>
<img src="https://example.com/chart.png" alt="chart"></main>
<footer>Footer text</footer></body></html>`;

describe('fileKind', () => {
  it('reads a PDF by its first bytes, whatever its name or type says', () => {
    const pdf = bytes('%PDF-1.7\n...');
    expect(fileKind({ name: 'report.pdf', type: 'application/pdf', bytes: pdf })).toBe('pdf');
    expect(fileKind({ name: 'blob', type: 'application/octet-stream', bytes: pdf })).toBe('pdf');
  });

  it('is a 400 for a file named or typed a PDF that is not one', () => {
    expect(fileKind({ name: 'report.pdf', type: 'application/pdf', bytes: bytes('<html>') })).toEqual({
      status: 400,
      message: 'is not a PDF: it does not start with %PDF-',
    });
  });

  it('reads HTML by its type, its name when untyped, or its first bytes when neither says', () => {
    const html = bytes(PAGE);
    expect(fileKind({ name: 'a.bin', type: 'text/html; charset=utf-8', bytes: html })).toBe('html');
    expect(fileKind({ name: 'page.xhtml', type: 'application/xhtml+xml', bytes: html })).toBe('html');
    expect(fileKind({ name: 'page.HTM', type: 'application/octet-stream', bytes: html })).toBe('html');
    expect(fileKind({ name: 'page', type: '', bytes: bytes('\uFEFF <!-- x --> <html><body>x') })).toBe(
      'html',
    );
  });

  it('is a 415 naming the kinds it reads for Word, spreadsheets, RTF and text', () => {
    const docx = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
    expect(fileKind({ name: 'a.docx', type: docx, bytes: bytes('PK\u0003\u0004') })).toEqual({
      status: 415,
      message: `this file (${docx}, .docx) cannot be parsed: this service parses HTML (.html, .htm, .xhtml) and PDF (.pdf) files`,
    });
    expect(
      fileKind({ name: 'a.rtf', type: 'application/octet-stream', bytes: bytes('{\\rtf1') }),
    ).toMatchObject({
      status: 415,
      message: expect.stringMatching(/^this file \(\.rtf\) cannot be parsed/),
    });
    expect(fileKind({ name: 'notes', type: 'text/plain', bytes: bytes('just text') })).toMatchObject({
      status: 415,
      message: expect.stringMatching(/^this file cannot be parsed/),
    });
  });
});

describe('parsedFileDocument', () => {
  const file = { name: 'notes.html', type: 'text/html' };

  it('gives an HTML file’s main content as markdown and its metadata under the file’s name', async () => {
    const doc = await parsedFileDocument({ kind: 'html', html: PAGE }, file, optionsOf());
    expect(doc.markdown).toBe(
      '# Version 2\n\nFaster [changes](https://example.com/changes).\n\n![chart](https://example.com/chart.png)',
    );
    expect(doc.metadata).toEqual({
      title: 'Release notes',
      description: 'What changed',
      language: 'en',
      sourceURL: 'notes.html',
      url: 'notes.html',
      contentType: 'text/html',
    });
    expect(Object.keys(doc).sort()).toEqual(['markdown', 'metadata']);
  });

  it('gives the formats asked for: the whole body without onlyMainContent, raw HTML, links, images', async () => {
    const doc = await parsedFileDocument(
      { kind: 'html', html: PAGE },
      file,
      optionsOf({
        formats: ['markdown', 'rawHtml', 'links', 'images'],
        onlyMainContent: false,
        excludeTags: ['footer'],
      }),
    );
    expect(doc.markdown).toContain('Home');
    expect(doc.markdown).not.toContain('Footer text');
    expect(doc.rawHtml).toBe(PAGE);
    // Only absolute URLs resolve: a file has no address of its own.
    expect(doc.links).toEqual(['https://example.com/changes']);
    expect(doc.images).toEqual(['https://example.com/chart.png']);
  });

  it('gives a PDF’s text page by page, its first maxPages pages only, with its page count', async () => {
    const pdf = await makePdf({
      title: 'Minutes',
      pages: [['First page text.'], ['Second page text.'], ['Third.']],
    });
    const doc = await parsedFileDocument(
      { kind: 'pdf', bytes: pdf },
      { name: 'minutes.pdf', type: 'application/pdf' },
      optionsOf({ formats: ['markdown', 'rawHtml'], pdfOptions: { maxPages: 2 } }),
    );
    expect(doc.markdown).toBe('First page text.\n\n---\n\nSecond page text.');
    expect(doc).not.toHaveProperty('rawHtml');
    expect(doc.metadata).toMatchObject({ title: 'Minutes', numPages: 3, sourceURL: 'minutes.pdf' });
  });
});
