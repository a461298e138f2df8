import { type AnyNode, type Element, isTag, isText } from 'domhandler';
import { InlineText, type InlineWriter, inlineInto } from './markdown-inline.ts';
import { HOLDS_LAYOUT_BLOCK, HOLDS_TABLE } from './markdown-kinds.ts';

/** Spans larger than this are taken as this (browsers cap colspan at 1000; a table this wide is no table to read). */
const MAX_COLSPAN = 50;
const MAX_ROWSPAN = 1000;
const MAX_COLUMNS = 200;
/** A table's rows and cells (outside nested tables), and what they say about its kind. */
interface Grid {
  rows: Element[][];
  caption: Element | null;
  hasHeaderCell: boolean;
  blockContent: boolean;
  nested: boolean;
  /** Whether text or elements sit in the table outside its cells (browsers move them out of it). */
  stray: boolean;
}

/** What a table, its row groups and rows may hold besides rows and cells without it being stray. */
const TABLE_PARTS = new Set(['caption', 'colgroup', 'col', 'tbody', 'tfoot', 'thead', 'tr', 'td', 'th']);

/**
 * A data table as GFM: its caption's text, and its lines (the first row is the header row; cells
 * spanning columns or rows are followed by empty cells; cell content is flattened to one line).
 * Null for a layout table, written as its content: role presentation or none, a table inside it,
 * content outside its cells, a single column, or, without header cells, anything but a regular
 * grid (two rows or more, as many columns in each) of inline content.
 */
export function tableMarkdown(
  table: Element,
  writer: InlineWriter,
): { caption: string; rows: string[] } | null {
  const role = table.attribs.role?.trim().toLowerCase();
  if (role === 'presentation' || role === 'none') return null;
  const grid = readGrid(table, writer);
  if (grid.nested || grid.stray) return null;
  const placed = placeCells(grid.rows);
  const widths = placed.map((row) => row.length);
  const columns = Math.min(
    MAX_COLUMNS,
    widths.reduce((most, width) => Math.max(most, width), 0),
  );
  if (columns < 2) return null;
  // Without header cells, only a regular grid of inline cells reads as data.
  if (
    !grid.hasHeaderCell &&
    (grid.blockContent || placed.length < 2 || widths.some((width) => width !== columns))
  ) {
    return null;
  }
  const lines: string[] = [];
  for (const row of placed) {
    const cells = row.slice(0, columns).map((cell) => (cell === null ? '' : cellText(cell, writer)));
    if (cells.every((cell) => cell === '')) continue;
    while (cells.length < columns) cells.push('');
    lines.push(`| ${cells.join(' | ')} |`);
    if (lines.length === 1) lines.push(`|${' --- |'.repeat(columns)}`);
  }
  return { caption: grid.caption === null ? '' : cellText(grid.caption, writer), rows: lines };
}

function readGrid(table: Element, writer: InlineWriter): Grid {
  const { skip } = writer;
  const grid: Grid = {
    rows: [],
    caption: null,
    hasHeaderCell: false,
    blockContent: false,
    nested: false,
    stray: false,
  };
  const rowsOf = (parent: Element) => {
    // Cells without a row around them make one row (as browsers add it).
    let loose: Element[] | null = null;
    for (const child of parent.children) {
      if (isStray(child, skip)) grid.stray = true;
      if (!isTag(child) || skip(child)) continue;
      if (child.name === 'td' || child.name === 'th') {
        if (loose === null) {
          loose = [];
          grid.rows.push(loose);
        }
        addCell(child, loose, grid, writer);
        continue;
      }
      loose = null;
      if (child.name === 'tr') grid.rows.push(cellsOf(child, grid, writer));
      else if (child.name === 'thead' || child.name === 'tbody' || child.name === 'tfoot') rowsOf(child);
      else if (child.name === 'caption') grid.caption ??= child;
    }
  };
  rowsOf(table);
  return grid;
}

function cellsOf(row: Element, grid: Grid, writer: InlineWriter): Element[] {
  const { skip } = writer;
  const cells: Element[] = [];
  for (const child of row.children) {
    if (
      isStray(child, skip) ||
      (isTag(child) && !skip(child) && child.name !== 'td' && child.name !== 'th')
    ) {
      grid.stray = true;
    }
    if (isTag(child) && !skip(child) && (child.name === 'td' || child.name === 'th'))
      addCell(child, cells, grid, writer);
  }
  return cells;
}

function addCell(cell: Element, cells: Element[], grid: Grid, writer: InlineWriter): void {
  cells.push(cell);
  if (cell.name === 'th') grid.hasHeaderCell = true;
  inspectCell(cell, grid, writer);
}

function isStray(node: AnyNode, skip: (element: Element) => boolean): boolean {
  if (isText(node)) return node.data.trim() !== '';
  return isTag(node) && !skip(node) && !TABLE_PARTS.has(node.name);
}

/** Notes a table or layout block inside a cell. */
function inspectCell(cell: Element, grid: Grid, writer: InlineWriter): void {
  const kinds = writer.kinds(cell);
  if ((kinds & HOLDS_TABLE) !== 0) grid.nested = true;
  if ((kinds & HOLDS_LAYOUT_BLOCK) !== 0) grid.blockContent = true;
}

/** The cells placed on the grid: each cell, then null for each column or row more it spans. */
function placeCells(rows: readonly Element[][]): (Element | null)[][] {
  const placed: (Element | null)[][] = [];
  /** Rows still covered by a cell above, per column. */
  const covered: number[] = [];
  for (const row of rows) {
    const out: (Element | null)[] = [];
    const fillCovered = () => {
      while ((covered[out.length] ?? 0) > 0) {
        covered[out.length]!--;
        out.push(null);
      }
    };
    for (const cell of row) {
      fillCovered();
      if (out.length >= MAX_COLUMNS) break;
      const colspan = span(cell.attribs.colspan, MAX_COLSPAN);
      const rowspan = span(cell.attribs.rowspan, MAX_ROWSPAN);
      for (let i = 0; i < colspan; i++) {
        if (rowspan > 1) covered[out.length] = rowspan - 1;
        out.push(i === 0 ? cell : null);
      }
    }
    fillCovered();
    placed.push(out);
  }
  return placed;
}

function span(value: string | undefined, max: number): number {
  const n = Number.parseInt(value ?? '', 10);
  return Number.isFinite(n) && n > 1 ? Math.min(n, max) : 1;
}

/** A cell's content on one line, its pipes escaped (GFM splits cells before anything else). */
function cellText(cell: Element, writer: InlineWriter): string {
  const text = new InlineText();
  for (const child of cell.children) inlineInto(text, child, writer, 0);
  return text.value().replace(/\n/g, ' ').replace(/\|/g, '\\|');
}
