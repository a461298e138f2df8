import { describe, expect, test } from '@jest/globals';
import { PDFDocument, PDFHexString, PDFName, PDFString } from 'pdf-lib';
import { makePdf } from '../../testing/pdf.ts';
import type { DocumentFormat, PageInfo } from '../document.ts';
import { ContentError } from '../errors.ts';
import { pdfDocument } from './index.ts';
import { escapeMarkdown } from './output.ts';
import { type PositionedText, paragraphs } from './paragraphs.ts';

const PAGE: PageInfo = {
  sourceUrl: 'https://example.com/report',
  url: 'https://example.com/report.pdf',
  statusCode: 200,
  contentType: 'application/pdf',
};
const ALL: DocumentFormat[] = ['markdown', 'html', 'raw_html', 'links', 'metadata'];

// Long enough to wrap over several lines of the page.
const long = (label: string) =>
  `${label} ${'words that fill the line and wrap onto the next one '.repeat(4).trim()}.`;
const THREE_PAGES = [
  [long('Alpha one'), 'Alpha two is short.', long('Alpha three')],
  ['Beta one.', long('Beta two')],
  [long('Gamma one'), 'Gamma two.'],
];

async function failure(promise: Promise<unknown>): Promise<ContentError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ContentError);
  return error as ContentError;
}

describe('pdfDocument', () => {
  test('markdown holds each page’s paragraphs in order, pages separated by ---', async () => {
    const bytes = await makePdf({ title: 'Quarterly report', author: 'Ada Lovelace', pages: THREE_PAGES });
    const { document, text } = await pdfDocument(bytes, PAGE, ['markdown']);
    expect(document.markdown).toBe(THREE_PAGES.map((page) => page.join('\n\n')).join('\n\n---\n\n'));
    expect(text).toBe(THREE_PAGES.flat().join('\n\n'));
    expect(document).toEqual({ markdown: document.markdown, truncated: [] });
  });

  test('metadata has the PDF’s title, author and page count and the fetch’s fields', async () => {
    const bytes = await makePdf({ title: 'Quarterly report', author: 'Ada Lovelace', pages: THREE_PAGES });
    const { document } = await pdfDocument(bytes, PAGE, ['metadata']);
    expect(document.metadata).toMatchObject({
      title: 'Quarterly report',
      author: 'Ada Lovelace',
      pages: 3,
      subject: null,
      producer: 'makePdf (pdf-lib)',
      status_code: 200,
      content_type: 'application/pdf',
      source_url: PAGE.sourceUrl,
      url: PAGE.url,
      og: {},
      json_ld: [],
      canonical_url: null,
    });
    expect(document.metadata?.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
  });

  test('a PDF without a title has title null', async () => {
    const { document } = await pdfDocument(await makePdf({ pages: [['Text.']] }), PAGE, ['metadata']);
    expect(document.metadata).toMatchObject({ title: null, author: null, pages: 1 });
  });

  test('links are the http(s) link annotations, once each, in order; raw_html is left out', async () => {
    const links = [
      'https://example.com/b',
      'mailto:someone@example.com',
      'http://example.org/a',
      'https://example.com/b',
    ];
    const bytes = await makePdf({ pages: [['Text.']], links });
    const { document } = await pdfDocument(bytes, PAGE, ALL);
    expect(document.links).toEqual(['https://example.com/b', 'http://example.org/a']);
    expect(document).not.toHaveProperty('raw_html');
  });

  test('html is the paragraphs as escaped <p> elements, pages separated by <hr>', async () => {
    const bytes = await makePdf({ pages: [['Fish & chips <b>', 'Second.'], ['Next page.']] });
    const { document } = await pdfDocument(bytes, PAGE, ['html']);
    expect(document.html).toBe('<p>Fish &amp; chips &lt;b&gt;</p>\n<p>Second.</p>\n<hr>\n<p>Next page.</p>');
  });

  test('markdown escapes what would not render as the text itself', async () => {
    const bytes = await makePdf({ pages: [['# Not a heading', 'A *star*, a [link](x) and snake_case.']] });
    const { document, text } = await pdfDocument(bytes, PAGE, ['markdown']);
    expect(document.markdown).toBe('\\# Not a heading\n\nA \\*star\\*, a [link\\](x) and snake_case.');
    expect(text).toBe('# Not a heading\n\nA *star*, a [link](x) and snake_case.');
  });

  test('the caller’s bytes are left whole (pdf.js is given a copy)', async () => {
    const bytes = await makePdf({ pages: [['Text.']] });
    const length = bytes.byteLength;
    await pdfDocument(bytes, PAGE, ['markdown']);
    await pdfDocument(Buffer.from(bytes), PAGE, ['markdown']);
    expect(bytes.byteLength).toBe(length);
  });

  test('text in a CJK font with a predefined CMap is read (the CMaps ship with pdfjs-dist)', async () => {
    const { document } = await pdfDocument(await makeCjkPdf('日本語のテキスト'), PAGE, ['markdown']);
    expect(document.markdown).toBe('日本語のテキスト');
  });

  test('a body that is not a PDF is a ContentError', async () => {
    const error = await failure(pdfDocument(new TextEncoder().encode('<html>not a pdf</html>'), PAGE, ALL));
    expect(error).toMatchObject({ name: 'ContentError', code: 'EXTRACTION_ERROR' });
    expect(error.message).toMatch(/^not a readable PDF/);
    await failure(pdfDocument(new Uint8Array(0), PAGE, ALL));
  });

  test('a damaged page gives no text and the other pages still do', async () => {
    const { document } = await pdfDocument(await makeDamagedPdf(), PAGE, ['markdown']);
    expect(document.markdown).toBe('One.\n\n---\n\n\n\n---\n\nThree.');
  });

  test('a password-protected PDF is a ContentError', async () => {
    const error = await failure(pdfDocument(await makeEncryptedPdf(), PAGE, ['markdown']));
    expect(error.message).toBe('the PDF is encrypted with a password');
  });

  test('a PDF over the page or byte limit is a ContentError', async () => {
    const bytes = await makePdf({ pages: THREE_PAGES });
    const pages = await failure(pdfDocument(bytes, PAGE, ['markdown'], { pages: 2 }));
    expect(pages.message).toBe('the PDF has 3 pages, more than the limit of 2');
    const size = await failure(pdfDocument(bytes, PAGE, ['markdown'], { bytes: 1000 }));
    expect(size.message).toBe(`the PDF has ${bytes.byteLength} bytes, more than the limit of 1000`);
    await expect(pdfDocument(bytes, PAGE, ['markdown'], { pages: 3 })).resolves.toBeDefined();
  });

  test('maxPages reads the first pages only; the metadata still counts them all', async () => {
    const bytes = await makePdf({ pages: THREE_PAGES });
    const { document, text } = await pdfDocument(bytes, PAGE, ['markdown', 'metadata'], {}, { maxPages: 2 });
    expect(document.markdown).toBe(
      THREE_PAGES.slice(0, 2)
        .map((page) => page.join('\n\n'))
        .join('\n\n---\n\n'),
    );
    expect(text).not.toContain('Gamma');
    expect(document.metadata).toMatchObject({ pages: 3 });
  });

  test('a PDF over the page limit is read when maxPages is within it', async () => {
    const bytes = await makePdf({ pages: THREE_PAGES });
    const { document } = await pdfDocument(bytes, PAGE, ['markdown'], { pages: 2 }, { maxPages: 1 });
    expect(document.markdown).toBe(THREE_PAGES[0]!.join('\n\n'));
  });

  test('markdown and html over their limits are cut, never inside a character, and named in truncated', async () => {
    const pages = [['Café crème brûlée '.repeat(20).trim()], ['Déjà vu '.repeat(30).trim()]];
    const bytes = await makePdf({ pages });
    const whole = await pdfDocument(bytes, PAGE, ['markdown', 'html']);
    expect(whole.document.truncated).toEqual([]);
    for (const limit of [100, 101, 102, 103]) {
      const { document, text } = await pdfDocument(bytes, PAGE, ['markdown', 'html'], {
        markdownBytes: limit,
        htmlBytes: limit,
      });
      expect(document.truncated).toEqual(['markdown', 'html']);
      const markdown = document.markdown ?? '';
      expect(Buffer.byteLength(markdown)).toBeLessThanOrEqual(limit);
      expect(Buffer.byteLength(markdown)).toBeGreaterThan(limit - 4);
      expect(whole.document.markdown?.startsWith(markdown)).toBe(true);
      const html = document.html ?? '';
      expect(Buffer.byteLength(html)).toBeLessThanOrEqual(limit);
      expect(html).toMatch(/^<p>[^<>]*<\/p>$/);
      expect(text).toBe(pages.flat().join('\n\n'));
    }
  });
});

describe('paragraphs', () => {
  const item = (str: string, x: number, y: number, size = 10, hasEOL = true): PositionedText => ({
    str,
    transform: [size, 0, 0, size, x, y],
    width: str.length * size * 0.5,
    height: size,
    hasEOL,
  });

  test('lines 12 pt apart join; a larger gap, a bigger font or a bullet starts a paragraph', () => {
    expect(
      paragraphs([
        item('Title', 50, 700, 16),
        item('First line of a para-', 50, 680),
        item('graph, and its end.', 50, 668),
        item('After a gap.', 50, 640),
        item('• An item', 50, 628),
        item('• Another', 50, 616),
      ]),
    ).toEqual([
      'Title',
      'First line of a para-graph, and its end.',
      'After a gap.',
      '• An item',
      '• Another',
    ]);
  });

  test('items on one baseline join, with a space where the layout has a gap', () => {
    expect(
      paragraphs([item('Left', 50, 700, 10, false), item('right', 100, 700), item('Next', 50, 688)]),
    ).toEqual(['Left right Next']);
  });

  test('a short line followed by an indented one ends a paragraph set without gaps', () => {
    expect(
      paragraphs([
        item('A full line of text that reaches the right margin', 50, 700),
        item('short end.', 50, 688),
        item('Indented start', 70, 676),
      ]),
    ).toEqual(['A full line of text that reaches the right margin short end.', 'Indented start']);
  });
});

describe('escapeMarkdown', () => {
  test('escapes block markers at the start and inline marks, and leaves plain punctuation alone', () => {
    expect(escapeMarkdown('- item')).toBe('\\- item');
    expect(escapeMarkdown('---')).toBe('\\---');
    expect(escapeMarkdown('> quote')).toBe('\\> quote');
    expect(escapeMarkdown('#hashtag and 1. list-like')).toBe('#hashtag and 1. list-like');
    expect(escapeMarkdown('a `b` ~c~ <div> &amp; \\')).toBe('a \\`b\\` \\~c\\~ \\<div> \\&amp; \\\\');
    expect(escapeMarkdown('_lead and trail_ but not_inside')).toBe('\\_lead and trail\\_ but not_inside');
    expect(escapeMarkdown('-5 degrees, 3 < 4, [note] here')).toBe('-5 degrees, 3 < 4, [note] here');
  });
});

/** A PDF whose text is in a non-embedded Japanese font addressed through the UniJIS-UCS2-H CMap. */
async function makeCjkPdf(text: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([300, 200]);
  const { context } = doc;
  const descriptor = context.obj({
    Type: 'FontDescriptor',
    FontName: 'KozMinPr6N-Regular',
    Flags: 4,
    FontBBox: [0, -200, 1000, 900],
    ItalicAngle: 0,
    Ascent: 880,
    Descent: -120,
    CapHeight: 700,
    StemV: 80,
  });
  const cidFont = context.obj({
    Type: 'Font',
    Subtype: 'CIDFontType0',
    BaseFont: 'KozMinPr6N-Regular',
    CIDSystemInfo: { Registry: PDFString.of('Adobe'), Ordering: PDFString.of('Japan1'), Supplement: 6 },
    FontDescriptor: context.register(descriptor),
  });
  const font = context.obj({
    Type: 'Font',
    Subtype: 'Type0',
    BaseFont: 'KozMinPr6N-Regular-UniJIS-UCS2-H',
    Encoding: 'UniJIS-UCS2-H',
    DescendantFonts: [context.register(cidFont)],
  });
  page.node.setFontDictionary(PDFName.of('F1'), context.register(font));
  const ucs2 = [...text].map((c) => c.charCodeAt(0).toString(16).padStart(4, '0')).join('');
  page.node.set(
    PDFName.of('Contents'),
    context.register(context.flateStream(`BT /F1 20 Tf 20 100 Td <${ucs2}> Tj ET`)),
  );
  return doc.save();
}

/** Three pages whose second has a syntax error in its page dictionary (the file's offsets still hold). */
async function makeDamagedPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.load(await makePdf({ pages: [['One.'], ['Two.'], ['Three.']] }));
  const bytes = await doc.save({ useObjectStreams: false });
  const text = Buffer.from(bytes).toString('latin1');
  const second = text.indexOf('/MediaBox', text.indexOf('/MediaBox') + 1);
  bytes.set(Buffer.from('/MediaBox [ 0 0 612 792 )', 'latin1'), second);
  return bytes;
}

/** A PDF with a standard security handler whose user password is not empty (so it cannot be opened). */
async function makeEncryptedPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.load(await makePdf({ pages: [['Secret.']] }));
  const { context } = doc;
  const hash = PDFHexString.of('11'.repeat(32));
  const encrypt = context.obj({ Filter: 'Standard', V: 1, R: 2, O: hash, U: hash, P: -4 });
  context.trailerInfo.Encrypt = context.register(encrypt);
  context.trailerInfo.ID = context.obj([PDFHexString.of('22'.repeat(16)), PDFHexString.of('22'.repeat(16))]);
  return doc.save({ useObjectStreams: false });
}
