import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { readCookie, SESSION_COOKIE } from './session.ts';

export const CSRF_FIELD = '_csrf';

/** Whether a submitted synchronizer token equals the session's (constant time). */
export function csrfMatches(expected: string, submitted: unknown): boolean {
  if (typeof submitted !== 'string' || submitted.length === 0) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}

export type FormTokenCheck = 'ok' | 'expired' | 'invalid';

/** A sign-in form older than this must be reloaded. */
export const FORM_TOKEN_SECONDS = 60 * 60;
// Tolerated clock difference between the API processes that issue and check a token.
const SKEW_SECONDS = 60;
const TOKEN = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/;
const NONCE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The nonce of the sign-in form's token: before sign-in the session cookie holds 32 random
 * bytes that name nothing on the server (after it, the session id, which is never a nonce's).
 */
export function formNonce(req: Request): string | undefined {
  const value = readCookie(req.headers.cookie, SESSION_COOKIE);
  return value && NONCE.test(value) ? value : undefined;
}

/**
 * The sign-in form's CSRF token, kept nowhere on the server (a signed double submit): an HMAC
 * of the random nonce in the visitor's cookie and the time of issue. A cross-site page can
 * neither read the cookie nor compute the HMAC; any API process holding the key can check it.
 */
export class FormTokens {
  readonly #key: Buffer;
  readonly #now: () => number;

  constructor(key: Buffer, now: () => number = Date.now) {
    if (key.length < 32) throw new Error('the sign-in form key must have at least 32 bytes');
    this.#key = key;
    this.#now = now;
  }

  #mac(nonce: string, issuedAt: string): Buffer {
    return createHmac('sha256', this.#key).update(`console sign-in\n${nonce}\n${issuedAt}`).digest();
  }

  /** A token for the form shown to the holder of `nonce`. */
  issue(nonce: string): string {
    const issuedAt = String(Math.floor(this.#now() / 1000));
    return `${issuedAt}.${this.#mac(nonce, issuedAt).toString('base64url')}`;
  }

  /** Whether `submitted` was issued by `issue(nonce)` within FORM_TOKEN_SECONDS. */
  check(nonce: string | undefined, submitted: unknown): FormTokenCheck {
    const m = typeof submitted === 'string' ? TOKEN.exec(submitted) : null;
    if (!nonce || !m) return 'invalid';
    const [, issuedAt, mac] = m as unknown as [string, string, string];
    if (!timingSafeEqual(this.#mac(nonce, issuedAt), Buffer.from(mac, 'base64url'))) return 'invalid';
    const age = this.#now() / 1000 - Number(issuedAt);
    return age >= -SKEW_SECONDS && age <= FORM_TOKEN_SECONDS ? 'ok' : 'expired';
  }
}
