import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

const VERSION = 'v1';
const KEY_BYTES = 32;

/**
 * The key used when the operator sets none. It is derived from a published string, so it
 * protects nothing: processes that fall back to it must log a warning.
 */
export const DEVELOPMENT_SECRET_KEY: Buffer = createHash('sha256')
  .update('scrapejobs development webhook secret key - NOT SECRET, set WEBHOOK_SECRET_KEY')
  .digest();

/** Reads a 32-byte key written as 64 hex characters or as (url-safe) base64. */
export function parseSecretKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-f]{64}$/i.test(t)) return Buffer.from(t, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(t)) return null;
  const key = Buffer.from(t, 'base64');
  return key.length === KEY_BYTES ? key : null;
}

const KEY_HELP = 'must be 32 bytes as 64 hex characters or base64 (e.g. `openssl rand -base64 32`)';

/** Environment value of a key (see parseSecretKey); for the apps' config schemas. */
export const secretKeyEnv = z.string().transform((text, ctx) => {
  const key = parseSecretKey(text);
  if (!key) ctx.addIssue({ code: 'custom', message: KEY_HELP });
  return key ?? Buffer.alloc(0);
});

/** A comma-separated list of keys (for rotation: old keys still open what they sealed). */
export const secretKeyListEnv = z.string().transform((text, ctx) => {
  const keys: Buffer[] = [];
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const key = parseSecretKey(part);
    if (key) keys.push(key);
    else ctx.addIssue({ code: 'custom', message: `every key ${KEY_HELP}` });
  }
  return keys;
});

/**
 * The key settings of every process that seals or opens secrets at rest (webhook secrets, jobs'
 * request secrets): the API and both workers share them.
 */
export const secretKeysEnv = {
  /** AES-256-GCM key; unset falls back to the public development key (each process logs it). */
  WEBHOOK_SECRET_KEY: secretKeyEnv.optional(),
  /** Earlier keys, comma-separated, still accepted for opening secrets sealed before a rotation. */
  WEBHOOK_SECRET_KEY_PREVIOUS: secretKeyListEnv.default([]),
};

const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 8);

/** The sealed value could not be opened: wrong key, tampering, or another row's value. */
export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
}

/**
 * AES-256-GCM encryption of small secrets at rest. A sealed value reads
 * `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url); `context` (the owning row's id) is bound
 * as associated data, so a value copied to another row does not open there.
 */
export class SecretBox {
  readonly #current: { id: string; key: Buffer };
  readonly #keys: Map<string, Buffer>;

  constructor(key: Buffer, previous: readonly Buffer[] = []) {
    if (key.length !== KEY_BYTES) throw new RangeError(`a secret key has ${KEY_BYTES} bytes`);
    this.#current = { id: keyId(key), key };
    this.#keys = new Map([...previous, key].map((k) => [keyId(k), k]));
  }

  /** Whether this box seals with the public development key. */
  get isDevelopmentKey(): boolean {
    return this.#current.key.equals(DEVELOPMENT_SECRET_KEY);
  }

  seal(plain: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#current.key, iv);
    cipher.setAAD(Buffer.from(context));
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), data].map((b) => b.toString('base64url'));
    return [VERSION, this.#current.id, ...parts].join('.');
  }

  open(sealed: string, context: string): string {
    const [version, id = '', iv = '', tag = '', data = ''] = sealed.split('.');
    const key = this.#keys.get(id);
    if (version !== VERSION) throw new SecretBoxError('unknown sealed-secret format');
    if (!key) throw new SecretBoxError(`sealed with key ${id}, which is not configured`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), {
        authTagLength: 16,
      });
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new SecretBoxError('the sealed secret does not authenticate');
    }
  }
}

/** The box of a process's key settings (`secretKeysEnv`). */
export const secretBoxOf = (config: {
  WEBHOOK_SECRET_KEY?: Buffer | undefined;
  WEBHOOK_SECRET_KEY_PREVIOUS: Buffer[];
}) => new SecretBox(config.WEBHOOK_SECRET_KEY ?? DEVELOPMENT_SECRET_KEY, config.WEBHOOK_SECRET_KEY_PREVIOUS);
