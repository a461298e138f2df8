import { once } from 'node:events';
import type { Writable } from 'node:stream';

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

const MAX_CELL = 60;

/** One line of text for a cell: null as `-`, objects as compact JSON, long values cut. */
export function cell(value: unknown): string {
  const text =
    value === null || value === undefined
      ? '-'
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
  const line = text.replace(/\s+/g, ' ');
  return line.length > MAX_CELL ? `${line.slice(0, MAX_CELL - 1)}…` : line;
}

/** Writes what a command prints: JSON with `--json`, readable text otherwise. */
export class Output {
  readonly json: boolean;
  readonly #out: Writable;
  constructor(out: Writable, json: boolean) {
    this.#out = out;
    this.json = json;
  }

  line(text = ''): void {
    this.#out.write(`${text}\n`);
  }

  /** A value as indented JSON. */
  value(value: unknown): void {
    this.line(JSON.stringify(value, null, 2));
  }

  /** An object as `key  value` lines (JSON with `--json`). */
  record(value: object): void {
    if (this.json) {
      this.value(value);
      return;
    }
    const entries = Object.entries(value);
    const width = Math.max(...entries.map(([k]) => k.length));
    for (const [key, v] of entries)
      this.line(`${key.padEnd(width)}  ${typeof v === 'object' && v !== null ? JSON.stringify(v) : cell(v)}`);
  }

  /** Writes text, waiting while a slow reader (a pipe) catches up rather than letting output pile up. */
  async write(text: string): Promise<void> {
    if (!this.#out.write(text)) await once(this.#out, 'drain');
  }

  /** The items as one JSON array, streamed item by item. */
  async array<T>(items: AsyncIterable<T>): Promise<number> {
    let count = 0;
    this.#out.write('[');
    for await (const item of items) await this.write(`${count++ ? ',' : ''}\n  ${JSON.stringify(item)}`);
    this.line(count ? '\n]' : ']');
    return count;
  }

  /** The items as JSON Lines: one compact JSON object a line, streamed. */
  async jsonLines<T>(items: AsyncIterable<T>): Promise<number> {
    let count = 0;
    for await (const item of items) {
      await this.write(`${JSON.stringify(item)}\n`);
      count++;
    }
    return count;
  }

  /**
   * The items of a list: a JSON array streamed item by item with `--json`, else an aligned table
   * (which needs every row for its widths).
   */
  async list<T>(items: AsyncIterable<T>, columns: (first: T | undefined) => Column<T>[]): Promise<number> {
    if (this.json) return this.array(items);
    const rows: T[] = [];
    for await (const item of items) rows.push(item);
    const cols = columns(rows[0]);
    const cells = rows.map((row) => cols.map((c) => cell(c.value(row))));
    const widths = cols.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
    const format = (values: string[]) =>
      values
        .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd();
    this.line(format(cols.map((c) => c.header.toUpperCase())));
    for (const r of cells) this.line(format(r));
    if (rows.length === 0) this.line('(none)');
    return rows.length;
  }
}

/** At most `limit` items of an iterator (all when undefined); stops its requests after that. */
export async function* take<T>(items: AsyncIterable<T>, limit: number | undefined): AsyncGenerator<T> {
  if (limit === 0) return;
  let n = 0;
  for await (const item of items) {
    yield item;
    if (limit !== undefined && ++n >= limit) return;
  }
}
