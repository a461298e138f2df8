import { randomBytes } from 'node:crypto';

// Crockford base32: ids sort by creation time, so "newest first" is "id descending".
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export type IdPrefix = 'usr' | 'key' | 'job' | 'run' | 'res' | 'wh' | 'evt' | 'dlv' | 'att';

/** A new time-ordered id such as `job_01JDQ3…` (10 time characters, 16 random). */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(16);
  let rand = '';
  for (const b of bytes) rand += ALPHABET[b % 32];
  return `${prefix}_${time}${rand}`;
}

const ID_BODY = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** Whether `id` is a well-formed id with this prefix (malformed ids are answered 404 without a query). */
export function isId(prefix: IdPrefix, id: string): boolean {
  return id.startsWith(`${prefix}_`) && ID_BODY.test(id.slice(prefix.length + 1));
}
