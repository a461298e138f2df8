import { type IdPrefix, isId } from '@scrapejobs/db';
import { validationError } from './errors.ts';

/** One page of a list and the cursor of the next, null on the last. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A cursor is the last id of a page, opaque to clients. */
export const encodeCursor = (id: string): string => Buffer.from(id).toString('base64url');

/** The id a cursor of ids with `prefix` stands for; a cursor of any other list is a 400 at `cursor`. */
export function decodeCursor(prefix: IdPrefix, cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString();
  if (!isId(prefix, id)) throw validationError({ cursor: 'is not a cursor returned by this endpoint' });
  return id;
}

const MAX_INT4 = 2 ** 31 - 1;

/** The position a cursor of positions (`encodeCursor(String(n))`) stands for; any other is a 400 at `cursor`. */
export function decodePositionCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString();
  const n = /^(0|[1-9]\d{0,9})$/.test(text) ? Number(text) : Number.NaN;
  if (!(n <= MAX_INT4)) throw validationError({ cursor: 'is not a cursor returned by this endpoint' });
  return n;
}

/** A page of `limit` rows from `limit + 1` read, newest first, with the cursor after its last. */
export function pageOf<T>(rows: T[], limit: number, idOf: (row: T) => string): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items, nextCursor: more ? encodeCursor(idOf(items[items.length - 1]!)) : null };
}
