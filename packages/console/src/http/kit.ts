import type { Request, Response } from 'express';
import type { Owner } from '../deps.ts';
import type { SafeHtml } from '../views/html.ts';
import type { PageContext } from '../views/layout.ts';
import { type Flash, type Session, type SessionStore, sessionCookie } from './session.ts';

declare module 'express-serve-static-core' {
  interface Request {
    /** The console session of this request (anonymous or signed in), if any. */
    consoleSession?: Session | null;
  }
}

export type Form = Record<string, string | string[] | undefined>;

/** One text field of a urlencoded form ('' when absent; the first value when repeated). */
export function field(req: Request, name: string): string {
  const v = (req.body as Form | undefined)?.[name];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

/** Every value of a repeated field (checkbox groups). */
export function fields(req: Request, name: string): string[] {
  const v = (req.body as Form | undefined)?.[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** What every handler of the signed-in console needs: the session, the owner it acts for, views. */
export class Kit {
  readonly sessions: SessionStore;
  readonly #alwaysSecure: boolean;

  constructor(sessions: SessionStore, alwaysSecure: boolean) {
    this.sessions = sessions;
    this.#alwaysSecure = alwaysSecure;
  }

  /** The cookie is Secure in production and on any https request (also behind a trusted proxy). */
  secure(req: Request): boolean {
    return this.#alwaysSecure || req.secure;
  }

  setSessionCookie(req: Request, res: Response, id: string | null): void {
    res.append('Set-Cookie', sessionCookie(id, this.secure(req)));
  }

  /** The signed-in session; the router's guard has made sure there is one. */
  session(req: Request): Session & { data: { user: NonNullable<Session['data']['user']> } } {
    const s = req.consoleSession;
    if (!s?.data.user) throw new Error('console route reached without a signed-in session');
    return s as Session & { data: { user: NonNullable<Session['data']['user']> } };
  }

  owner(req: Request): Owner {
    const s = this.session(req);
    return { userId: s.data.user.id, mode: s.data.mode };
  }

  /** The page context, taking the flash message (shown once). */
  async page(req: Request): Promise<PageContext> {
    const s = this.session(req);
    const flash = s.data.flash;
    if (flash) {
      s.data.flash = undefined;
      await this.sessions.save(s);
    }
    return { csrf: s.data.csrf, email: s.data.user.email, mode: s.data.mode, flash };
  }

  /** The page context without taking the flash (error pages). */
  peek(req: Request): PageContext | undefined {
    const s = req.consoleSession;
    if (!s?.data.user) return undefined;
    return { csrf: s.data.csrf, email: s.data.user.email, mode: s.data.mode };
  }

  send(res: Response, status: number, body: SafeHtml): void {
    res.status(status).type('html').send(body.value);
  }

  /** Post/redirect/get, with a message for the next page. */
  async redirect(req: Request, res: Response, to: string, flash?: Flash): Promise<void> {
    const s = req.consoleSession;
    if (flash && s) {
      s.data.flash = flash;
      await this.sessions.save(s);
    }
    res.redirect(303, to);
  }
}

export interface ServiceFailure {
  status: number;
  message: string;
  details: Record<string, string>;
}

/** The API's AppError (status, message, details), recognised without importing the API. */
export function serviceFailure(err: unknown): ServiceFailure | null {
  if (!(err instanceof Error) || err.name !== 'AppError') return null;
  const e = err as Error & { status?: unknown; extra?: { details?: Record<string, string> } };
  if (typeof e.status !== 'number') return null;
  return { status: e.status, message: e.message, details: e.extra?.details ?? {} };
}

/** Runs `fn`; a service failure with one of `statuses` is returned instead of thrown. */
export async function attempt<T>(
  fn: () => Promise<T>,
  statuses: readonly number[],
): Promise<{ ok: true; value: T } | { ok: false; failure: ServiceFailure }> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    const failure = serviceFailure(err);
    if (failure && statuses.includes(failure.status)) return { ok: false, failure };
    throw err;
  }
}
