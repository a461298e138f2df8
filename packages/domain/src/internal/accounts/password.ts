import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

// scrypt at N=2^15, r=8, p=1 (OWASP's minimum for scrypt): about 32 MiB and tens of ms per hash.
const COST = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;
const MAX_MEM = 128 * 1024 * 1024;

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }, length: number) {
  const options: ScryptOptions = { ...cost, maxmem: MAX_MEM };
  return new Promise<Buffer>((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, length, options, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** Why a password is not acceptable, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `must have at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `must have at most ${MAX_PASSWORD_LENGTH} characters`;
  return null;
}

/**
 * A self-describing hash: `scrypt$<N>$<r>$<p>$<salt b64>$<key b64>`, with a fresh random salt,
 * so the cost can be raised later without breaking stored hashes.
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, COST, KEY_LENGTH);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64'), key.toString('base64')].join('$');
}

const FORMAT = /^scrypt\$(\d{1,8})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9+/=]{8,})\$([A-Za-z0-9+/=]{16,})$/;

/** Whether `password` matches `stored` (compared in constant time); a malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = FORMAT.exec(stored);
  if (!m) return false;
  const cost = { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  const expected = Buffer.from(m[5]!, 'base64');
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  const actual = await derive(password, Buffer.from(m[4]!, 'base64'), cost, expected.length);
  return timingSafeEqual(actual, expected);
}

let dummy: Promise<string> | undefined;

/** Spends the time of one verification, for unknown accounts, so timing does not reveal them. */
export async function burnVerification(password: string): Promise<false> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'));
  await verifyPassword(password, await dummy);
  return false;
}
