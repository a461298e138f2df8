import { PDFDocument, type PDFFont, PDFString, StandardFonts } from 'pdf-lib';

/** What {@link makePdf} writes. */
export interface PdfSpec {
  /** The Info dictionary's Title (absent when not given). */
  title?: string;
  /** The Info dictionary's Author (absent when not given). */
  author?: string;
  /** Each page's paragraphs, in order; a page must fit its paragraphs (else makePdf throws). */
  pages: string[][];
  /** URLs written as link annotations (URI actions) in the first page's corner, with no visible text. */
  links?: string[];
}

const PAGE_WIDTH = 612; // US Letter, in points
const PAGE_HEIGHT = 792;
const MARGIN = 72;
const FONT_SIZE = 12;
const LINE_HEIGHT = FONT_SIZE * 1.2;
// The blank space between paragraphs, which a reader (and pdfDocument) sees as a paragraph break.
const PARAGRAPH_GAP = FONT_SIZE;

/**
 * Writes a real PDF for tests: US Letter pages, Helvetica 12 pt, each paragraph wrapped to the
 * page width with a blank line's gap after it, so pdfDocument reads the same paragraphs back.
 * Helvetica encodes only WinAnsi (Latin-1 and a few more) characters: others make pdf-lib throw.
 */
export async function makePdf(spec: PdfSpec): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  if (spec.title !== undefined) doc.setTitle(spec.title);
  if (spec.author !== undefined) doc.setAuthor(spec.author);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const width = PAGE_WIDTH - 2 * MARGIN;

  for (const [index, paragraphs] of spec.pages.entries()) {
    const page = doc.addPage([PAGE_WIDTH, PAGE_HEIGHT]);
    let y = PAGE_HEIGHT - MARGIN - FONT_SIZE;
    for (const paragraph of paragraphs) {
      for (const line of wrap(paragraph, font, width)) {
        if (y < MARGIN) throw new Error(`makePdf: page ${index + 1}'s paragraphs do not fit on one page`);
        page.drawText(line, { x: MARGIN, y, size: FONT_SIZE, font });
        y -= LINE_HEIGHT;
      }
      y -= PARAGRAPH_GAP;
    }
  }

  const first = doc.getPages()[0];
  for (const url of spec.links ?? []) {
    if (!first) throw new Error('makePdf: links need at least one page');
    const annotation = doc.context.obj({
      Type: 'Annot',
      Subtype: 'Link',
      Rect: [0, PAGE_HEIGHT - 20, 20, PAGE_HEIGHT],
      Border: [0, 0, 0],
      A: { Type: 'Action', S: 'URI', URI: PDFString.of(url) },
    });
    first.node.addAnnot(doc.context.register(annotation));
  }
  // pdf-lib names itself as Creator and Producer; tests can tell the two fields apart.
  doc.setProducer('makePdf (pdf-lib)');
  return doc.save();
}

/** Splits a paragraph into lines no wider than `width`; a word wider than a line is split. */
function wrap(paragraph: string, font: PDFFont, width: number): string[] {
  const measure = (text: string) => font.widthOfTextAtSize(text, FONT_SIZE);
  const space = measure(' ');
  const lines: string[] = [];
  let line = '';
  let lineWidth = 0;
  for (let word of paragraph.split(/\s+/).filter(Boolean)) {
    let wordWidth = measure(word);
    if (line && lineWidth + space + wordWidth <= width) {
      line += ` ${word}`;
      lineWidth += space + wordWidth;
      continue;
    }
    if (line) lines.push(line);
    while (wordWidth > width && word.length > 1) {
      let cut = 1;
      while (cut < word.length - 1 && measure(word.slice(0, cut + 1)) <= width) cut++;
      lines.push(word.slice(0, cut));
      word = word.slice(cut);
      wordWidth = measure(word);
    }
    line = word;
    lineWidth = wordWidth;
  }
  if (line) lines.push(line);
  return lines;
}
