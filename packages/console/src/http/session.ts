import { randomBytes } from 'node:crypto';
import type { Mode } from '@scrapejobs/db';
import type { Redis } from 'ioredis';

export const SESSION_COOKIE = 'sj_session';
/** Idle lifetime of a signed-in session, renewed by every request. */
export const SESSION_IDLE_SECONDS = 12 * 60 * 60;
/** A session ends this long after sign-in, however active. */
export const SESSION_MAX_SECONDS = 7 * 24 * 60 * 60;
/** Lifetime of a session without a user; the router makes none (its sign-in form keeps nothing). */
export const ANONYMOUS_SECONDS = 60 * 60;

export interface Flash {
  kind: 'ok' | 'error';
  text: string;
}

export interface SessionData {
  csrf: string;
  createdAt: number;
  user: { id: string; email: string; passwordStamp: string } | null;
  mode: Mode;
  flash?: Flash | undefined;
  /** A new API token to show on the next page, once; deleted as it is shown. */
  reveal?: { name: string; token: string; replaced: boolean } | undefined;
  /** The Firecrawl webhook secret to show on the next account page (just rotated or asked for), once; deleted as it is shown. */
  revealFirecrawlSecret?: { secret: string; rotated: boolean } | undefined;
}

export interface Session {
  id: string;
  data: SessionData;
}

const ID = /^[A-Za-z0-9_-]{43}$/;
export const newSecret = (): string => randomBytes(32).toString('base64url');

/** Sessions kept in Redis under `<prefix>:session:<id>`; the id is 32 random bytes. */
export class SessionStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #now: () => number;

  constructor(redis: Redis, prefix: string, now: () => number = Date.now) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#now = now;
  }

  #key(id: string): string {
    return `${this.#prefix}:session:${id}`;
  }

  /** A new session with a new id and CSRF token (never reuses an id: no fixation). */
  async create(user: SessionData['user'], mode: Mode = 'test'): Promise<Session> {
    const session = { id: newSecret(), data: { csrf: newSecret(), createdAt: this.#now(), user, mode } };
    await this.save(session);
    return session;
  }

  /** The session for a cookie value, with its idle time renewed; null if unknown or expired. */
  async load(id: string | undefined): Promise<Session | null> {
    if (!id || !ID.test(id)) return null;
    const raw = await this.#redis.get(this.#key(id));
    if (!raw) return null;
    const data = JSON.parse(raw) as SessionData;
    if (this.#now() - data.createdAt > SESSION_MAX_SECONDS * 1000) {
      await this.destroy(id);
      return null;
    }
    await this.#redis.expire(this.#key(id), this.#ttl(data));
    return { id, data };
  }

  async save(session: Session): Promise<void> {
    await this.#redis.set(this.#key(session.id), JSON.stringify(session.data), 'EX', this.#ttl(session.data));
  }

  async destroy(id: string): Promise<void> {
    await this.#redis.del(this.#key(id));
  }

  #ttl(data: SessionData): number {
    return data.user ? SESSION_IDLE_SECONDS : ANONYMOUS_SECONDS;
  }
}

/** Reads one cookie from a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie value for a session id (or its removal when `id` is null). */
export function sessionCookie(id: string | null, secure: boolean): string {
  const attrs = [`${SESSION_COOKIE}=${id ?? ''}`, 'Path=/console', 'HttpOnly', 'SameSite=Lax'];
  if (id === null) attrs.push('Max-Age=0');
  if (secure) attrs.push('Secure');
  return attrs.join('; ');
}
