import { randomBytes } from 'node:crypto';
import { type Database, type Mode, newId } from '@scrapejobs/db';
import { notFound, validationError } from '../errors.ts';
import { hashToken, SCOPES, type Scope } from '../principal.ts';
import type { KeyChanges } from './key-cache.ts';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A new plain token: `sk_<mode>_` and 32 base62 characters (about 190 bits). */
export function newToken(mode: Mode): string {
  let body = '';
  // Rejection sampling keeps every character equally likely.
  while (body.length < 32) {
    for (const b of randomBytes(48)) if (b < 248 && body.length < 32) body += BASE62[b % 62];
  }
  return `sk_${mode}_${body}`;
}

export interface KeyView {
  key_id: string;
  name: string;
  mode: Mode;
  scopes: string[];
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

type KeyRow = {
  id: string;
  name: string;
  mode: Mode;
  scopes: string[];
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
};

const view = (k: KeyRow): KeyView => ({
  key_id: k.id,
  name: k.name,
  mode: k.mode,
  scopes: k.scopes,
  prefix: k.prefix,
  created_at: k.createdAt.toISOString(),
  last_used_at: k.lastUsedAt?.toISOString() ?? null,
  revoked_at: k.revokedAt?.toISOString() ?? null,
});

export function parseScopes(raw: string | undefined): Scope[] {
  if (raw === undefined) return [...SCOPES];
  const scopes = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (bad.length || scopes.length === 0)
    throw validationError({ scopes: `must be a comma-separated subset of ${SCOPES.join(', ')}` });
  return [...new Set(scopes)] as Scope[];
}

/**
 * API keys of account holders (docs/api.md §2): only the SHA-256 of a token is stored. A revoked or
 * regenerated key is announced to the API processes, which cache keys, once the change is committed.
 */
export class KeysService {
  readonly #db: Database;
  readonly #changes: KeyChanges | undefined;
  /** Without `changes` keys can be created and listed, but not revoked or regenerated. */
  constructor(db: Database, changes?: KeyChanges) {
    this.#db = db;
    this.#changes = changes;
  }

  #changesOrThrow(): KeyChanges {
    if (!this.#changes) throw new Error('This KeysService cannot announce key changes to the API.');
    return this.#changes;
  }

  /** Creates the key (and the user on first use); the plain token is returned once. */
  async create(opts: { email: string; mode: Mode; scopes: Scope[]; name: string }) {
    const email = opts.email.trim().toLowerCase();
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw validationError({ user: 'must be an email address' });
    const user = await this.#db.user.upsert({
      where: { email },
      create: { id: newId('usr'), email },
      update: {},
    });
    const token = newToken(opts.mode);
    const key = await this.#db.apiKey.create({
      data: {
        id: newId('key'),
        userId: user.id,
        name: opts.name,
        mode: opts.mode,
        scopes: opts.scopes,
        tokenHash: hashToken(token),
        prefix: token.slice(0, 12),
      },
    });
    return { key: view(key), token, userId: user.id };
  }

  async list(email: string): Promise<KeyView[]> {
    const keys = await this.#db.apiKey.findMany({
      where: { user: { email: email.trim().toLowerCase() } },
      orderBy: { id: 'asc' },
    });
    return keys.map(view);
  }

  async revoke(keyId: string): Promise<KeyView> {
    const changes = this.#changesOrThrow();
    const key = await this.#db.apiKey.findUnique({ where: { id: keyId } });
    if (!key) throw notFound('API key');
    const revoked = key.revokedAt
      ? key
      : await this.#db.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
    // Announced again for a key already revoked, so that repeating a revoke whose announcement
    // failed completes it.
    await changes.announce(keyId);
    return view(revoked);
  }

  /** A new token with the same name, mode and scopes; the old key is revoked in the same transaction. */
  async regenerate(keyId: string) {
    const changes = this.#changesOrThrow();
    const regenerated = await this.#db.$transaction(async (tx) => {
      const old = await tx.apiKey.findUnique({ where: { id: keyId } });
      if (!old || old.revokedAt) throw notFound('Active API key');
      await tx.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
      const token = newToken(old.mode);
      const key = await tx.apiKey.create({
        data: {
          id: newId('key'),
          userId: old.userId,
          name: old.name,
          mode: old.mode,
          scopes: old.scopes,
          tokenHash: hashToken(token),
          prefix: token.slice(0, 12),
        },
      });
      return { key: view(key), token };
    });
    await changes.announce(keyId);
    return regenerated;
  }
}
