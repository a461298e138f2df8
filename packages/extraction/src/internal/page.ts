import { Buffer } from 'node:buffer';
import { ExtractionError } from './errors.ts';
import { formatBytes, type ResolvedLimits } from './limits.ts';
import { storable } from './values.ts';

/** Where an evaluator puts its values; it fails the page as soon as a limit is crossed. */
export interface ValueSink {
  /** Characters the next value may have before it is sure to cross a limit (UTF-8 takes at least one byte per character). */
  readonly cap: number;
  /** Adds a match's value (made storable first); throws ExtractionError past a limit. */
  push(value: string): void;
  /** Fails the page for a value that was found to be longer than `cap`. */
  overflow(): never;
}

/**
 * UTF-8 bytes of a growing set of strings, kept as cheap bounds (a string takes between its length
 * and three times its length) until a limit falls between them; then counted exactly from there on.
 */
class Tally {
  lo = 0;
  hi = 0;
  exact = false;

  add(value: string, extra: number): void {
    if (this.exact) {
      const bytes = Buffer.byteLength(value, 'utf8') + extra;
      this.lo += bytes;
      this.hi += bytes;
    } else {
      this.lo += value.length + extra;
      this.hi += 3 * value.length + extra;
    }
  }

  /** Switches to exact counting, `recount` giving the exact bytes of everything added so far. */
  resolve(recount: () => number): number {
    if (!this.exact) {
      this.lo = this.hi = recount();
      this.exact = true;
    }
    return this.lo;
  }

  exceeds(limit: number, recount: () => number): boolean {
    if (this.hi <= limit) return false;
    return this.lo > limit || this.resolve(recount) > limit;
  }
}

interface Column {
  readonly label: string;
  /** Every value of a row query; the non-empty values of a joined query. */
  readonly values: string[];
  /** For a joined query: the bytes of its joined value so far. Null for a row query. */
  readonly joined: Tally | null;
  matched: boolean;
}

const bytesOf = (values: readonly string[]): number => {
  let bytes = 0;
  for (const value of values) bytes += Buffer.byteLength(value, 'utf8');
  return bytes;
};
const joinedBytes = (values: readonly string[]): number => bytesOf(values) + Math.max(values.length - 1, 0);

/**
 * The values one page's queries give, counted against the page's limits as they arrive, so a
 * hostile page fails early instead of building what the limits forbid. One per page.
 */
export class PageValues implements ValueSink {
  /** What the page is doing, for the time limit's message. */
  activity = 'while parsing the page';
  private readonly limits: ResolvedLimits;
  private readonly columns: Column[] = [];
  private column: Column | null = null;
  /** Every value so far, a joined query's counted once, with its separators. */
  private readonly all = new Tally();

  constructor(limits: ResolvedLimits) {
    this.limits = limits;
  }

  /** Starts collecting the values of the next query, in the job's order. */
  begin(label: string, join: boolean): void {
    this.column = { label, values: [], joined: join ? new Tally() : null, matched: false };
    this.columns.push(this.column);
    this.activity = `${label} was running`;
  }

  get cap(): number {
    // Never below 0: an empty value always fits (a joined query's costs not even a separator).
    return Math.max(0, Math.min(this.valueRoom(), this.limits.maxTotalBytes - this.all.lo));
  }

  push(raw: string): void {
    const column = this.current();
    const value = storable(raw);
    const { values, joined } = column;
    column.matched = true;
    if (joined === null) {
      if (values.length >= this.limits.maxRecords) throw this.recordsError(column);
      if (this.overValueLimit(value)) throw this.valueError(column);
      values.push(value);
      this.all.add(value, 0);
    } else {
      if (value === '') return; // joining skips empty values
      const separator = values.length > 0 ? 1 : 0;
      values.push(value);
      joined.add(value, separator);
      if (joined.exceeds(this.limits.maxValueBytes, () => joinedBytes(values))) throw this.valueError(column);
      this.all.add(value, separator);
    }
    if (this.all.exceeds(this.limits.maxTotalBytes, () => this.recountAll())) throw this.totalError(column);
  }

  overflow(): never {
    const column = this.current();
    if (this.valueRoom() <= this.limits.maxTotalBytes - this.all.lo) throw this.valueError(column);
    throw this.totalError(column);
  }

  /** Characters the next non-empty value may have under the value limit (a joined one after its separator). */
  private valueRoom(): number {
    const { values, joined } = this.current();
    return this.limits.maxValueBytes - (joined && values.length > 0 ? joined.lo + 1 : 0);
  }

  /**
   * Each query's values for buildRecords (a joined query's as its one joined value), after
   * checking the page's total with joined values counted once per record.
   */
  finish(): string[][] {
    this.activity = 'while building the records';
    let rows = 0;
    for (const { values, joined } of this.columns) if (joined === null) rows = Math.max(rows, values.length);
    const repeats = Math.max(rows, 1) - 1;
    const joinedColumns = this.columns.filter((column) => column.joined !== null);
    if (repeats > 0 && joinedColumns.length > 0) this.checkRepeatedTotal(joinedColumns, rows, repeats);
    return this.columns.map(({ values, joined, matched }) => {
      if (joined === null) return values;
      return matched ? [values.join(' ')] : [];
    });
  }

  private checkRepeatedTotal(joinedColumns: readonly Column[], rows: number, repeats: number): void {
    const max = this.limits.maxTotalBytes;
    let lo = this.all.lo;
    let hi = this.all.hi;
    for (const { joined } of joinedColumns) {
      lo += joined!.lo * repeats;
      hi += joined!.hi * repeats;
    }
    if (hi <= max) return;
    if (lo <= max) {
      lo = this.all.resolve(() => this.recountAll());
      for (const { joined, values } of joinedColumns) {
        lo += joined!.resolve(() => joinedBytes(values)) * repeats;
      }
      if (lo <= max) return;
    }
    throw new ExtractionError(
      `the page's values go over the limit of ${max} bytes (${formatBytes(max)} of values in all) ` +
        `once its joined values repeat in each of its ${rows} records`,
      { limit: 'total' },
    );
  }

  private current(): Column {
    if (this.column === null) throw new Error('PageValues.begin was not called');
    return this.column;
  }

  private overValueLimit(value: string): boolean {
    const max = this.limits.maxValueBytes;
    if (value.length > max) return true;
    return 3 * value.length > max && Buffer.byteLength(value, 'utf8') > max;
  }

  private recountAll(): number {
    let bytes = 0;
    for (const { values, joined } of this.columns) {
      bytes += joined === null ? bytesOf(values) : joinedBytes(values);
    }
    return bytes;
  }

  private recordsError(column: Column): ExtractionError {
    const max = this.limits.maxRecords;
    return new ExtractionError(
      `${column.label} gave more than ${max} matches, over the limit of ${max} records per page`,
      { limit: 'records' },
    );
  }

  private valueError(column: Column): ExtractionError {
    const max = this.limits.maxValueBytes;
    const what = column.joined === null ? 'a value' : 'a joined value';
    return new ExtractionError(
      `${column.label} gave ${what} over the limit of ${max} bytes (${formatBytes(max)} per value)`,
      { limit: 'value' },
    );
  }

  private totalError(column: Column): ExtractionError {
    const max = this.limits.maxTotalBytes;
    return new ExtractionError(
      `${column.label} took the page's values over the limit of ${max} bytes (${formatBytes(max)} of values in all)`,
      { limit: 'total' },
    );
  }
}
