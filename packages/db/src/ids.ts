import { randomBytes } from 'node:crypto';

// Crockford base32: ids sort by creation time, so "newest first" is "id descending".
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export type IdPrefix = 'usr' | 'key' | 'job' | 'run' | 'res' | 'wh' | 'evt' | 'dlv' | 'att';

// Random bytes are drawn from the CSPRNG in blocks: one call per 256 ids instead of one per id
// (the scraper stores hundreds of results per page, each with an id).
const POOL_BYTES = 16 * 256;
let pool = randomBytes(POOL_BYTES);
let poolOffset = 0;

/** A new time-ordered id such as `job_01JDQ3…` (10 time characters, 16 random). */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  if (poolOffset + 16 > POOL_BYTES) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  let rand = '';
  // 256 is a multiple of 32, so each character is uniform over the alphabet.
  for (let i = poolOffset; i < poolOffset + 16; i++) rand += ALPHABET[(pool[i] as number) % 32];
  poolOffset += 16;
  return `${prefix}_${time}${rand}`;
}

const ID_BODY = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** Whether `id` is a well-formed id with this prefix (malformed ids are answered 404 without a query). */
export function isId(prefix: IdPrefix, id: string): boolean {
  return id.startsWith(`${prefix}_`) && ID_BODY.test(id.slice(prefix.length + 1));
}

/** The ids of a page's records share all but their last three characters (prisma/schema.prisma, ResultPage). */
const RECORD_ROW_CHARS = 3;
/** More rows than a page may give (10,000 records, docs/api.md §16) fit in three characters. */
export const MAX_PAGE_RECORDS = 32 ** RECORD_ROW_CHARS;

/** A new page's `id_base`: a record id's time and random characters, less the row's. */
export function newRecordIdBase(now = Date.now()): string {
  return newId('res', now).slice(4, 30 - RECORD_ROW_CHARS);
}

/** The public id of row `row` of a page: its id_base and the row in base 32. */
export function recordId(idBase: string, row: number): string {
  let suffix = '';
  for (let i = 0, r = row; i < RECORD_ROW_CHARS; i++, r = Math.floor(r / 32))
    suffix = ALPHABET[r % 32] + suffix;
  return `res_${idBase}${suffix}`;
}
