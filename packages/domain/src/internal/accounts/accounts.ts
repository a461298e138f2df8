import { createHash } from 'node:crypto';
import { type Database, newId } from '@scrapejobs/db';
import { burnVerification, hashPassword, passwordProblem, verifyPassword } from './password.ts';

export interface Account {
  userId: string;
  email: string;
  /** Changes whenever the password does, so sessions opened before a reset end. */
  passwordStamp: string;
}

/** Thrown for a request the account holder can correct (bad email, weak password, exists, unknown). */
export class AccountError extends Error {
  override name = 'AccountError';
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** A short fingerprint of the stored hash; kept in the session instead of the hash itself. */
export const passwordStamp = (hash: string): string =>
  createHash('sha256').update(hash).digest('base64url').slice(0, 16);

/** Console sign-in accounts: the users of the API keys, with a password. */
export class Accounts {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  /** Creates a user with a password, or gives a password to a user that has only API keys. */
  async create(rawEmail: string, password: string): Promise<Account> {
    const email = this.#checkEmail(rawEmail);
    const hash = await this.#hash(password);
    const existing = await this.#db.user.findUnique({ where: { email } });
    if (existing?.passwordHash) throw new AccountError(`${email} already has a password; use set-password`);
    const user = existing
      ? await this.#db.user.update({ where: { id: existing.id }, data: { passwordHash: hash } })
      : await this.#db.user.create({ data: { id: newId('usr'), email, passwordHash: hash } });
    return { userId: user.id, email, passwordStamp: passwordStamp(hash) };
  }

  async setPassword(rawEmail: string, password: string): Promise<Account> {
    const email = this.#checkEmail(rawEmail);
    const hash = await this.#hash(password);
    const existing = await this.#db.user.findUnique({ where: { email } });
    if (!existing) throw new AccountError(`no account for ${email}`);
    await this.#db.user.update({ where: { id: existing.id }, data: { passwordHash: hash } });
    return { userId: existing.id, email, passwordStamp: passwordStamp(hash) };
  }

  /** The account when the password matches; the same time is spent whether or not the user exists. */
  async authenticate(rawEmail: string, password: string): Promise<Account | null> {
    const email = normalizeEmail(rawEmail);
    const user = await this.#db.user.findUnique({ where: { email } });
    if (!user?.passwordHash) return burnVerification(password).then(() => null);
    if (!(await verifyPassword(password, user.passwordHash))) return null;
    return { userId: user.id, email, passwordStamp: passwordStamp(user.passwordHash) };
  }

  /** The account as it is now, for checking a session on each request. */
  async current(userId: string): Promise<Account | null> {
    const user = await this.#db.user.findUnique({ where: { id: userId } });
    if (!user?.passwordHash) return null;
    return { userId: user.id, email: user.email, passwordStamp: passwordStamp(user.passwordHash) };
  }

  #checkEmail(raw: string): string {
    const email = normalizeEmail(raw);
    if (!EMAIL.test(email) || email.length > 254) throw new AccountError('--email must be an email address');
    return email;
  }

  async #hash(password: string): Promise<string> {
    const problem = passwordProblem(password);
    if (problem) throw new AccountError(`the password ${problem}`);
    return hashPassword(password);
  }
}
