import type { Request, Response, Router } from 'express';
import type { Accounts } from '../auth/accounts.ts';
import { normalizeEmail } from '../auth/accounts.ts';
import { field, type Kit } from '../http/kit.ts';
import type { SignInLimiter } from '../http/sign-in-limit.ts';
import { errorPage } from '../views/errors.ts';
import { signInPage } from '../views/sign-in.ts';

const RETURN_TO = /^\/console\/(jobs|webhooks|keys)$/;

/** Sign-in (with its own anonymous session for the form's CSRF token) and sign-out. */
export function authRoutes(router: Router, kit: Kit, accounts: Accounts, limiter: SignInLimiter): void {
  /** The anonymous session of the sign-in form, created on first sight. */
  async function formSession(req: Request, res: Response) {
    const current = req.consoleSession;
    if (current && !current.data.user) return current;
    const session = await kit.sessions.create(null);
    kit.setSessionCookie(req, res, session.id);
    return session;
  }

  router.get('/login', async (req, res) => {
    if (req.consoleSession?.data.user) return res.redirect(303, '/console/jobs');
    const session = await formSession(req, res);
    const notice = req.query.signed_out === '1' ? 'You are signed out.' : undefined;
    kit.send(res, 200, signInPage({ csrf: session.data.csrf, notice }));
  });

  // The router has checked the form's CSRF token against the anonymous session already.
  router.post('/login', async (req, res) => {
    const email = normalizeEmail(field(req, 'email'));
    const password = field(req, 'password');
    const ip = req.ip ?? 'unknown';
    const form = req.consoleSession!;
    const wait = await limiter.blockedFor(email, ip);
    if (wait > 0) {
      res.set('Retry-After', String(wait));
      const minutes = Math.ceil(wait / 60);
      return kit.send(
        res,
        429,
        signInPage({
          csrf: form.data.csrf,
          email,
          error: `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
        }),
      );
    }
    const account = email && password ? await accounts.authenticate(email, password) : null;
    if (!account) {
      await limiter.recordFailure(email, ip);
      return kit.send(
        res,
        401,
        signInPage({ csrf: form.data.csrf, email, error: 'Incorrect email or password.' }),
      );
    }
    await limiter.recordSuccess(email, ip);
    // A fresh id and CSRF token at sign-in: a session id planted before cannot be taken over.
    await kit.sessions.destroy(form.id);
    const session = await kit.sessions.create({
      id: account.userId,
      email: account.email,
      passwordStamp: account.passwordStamp,
    });
    kit.setSessionCookie(req, res, session.id);
    res.redirect(303, '/console/jobs');
  });

  router.post('/logout', async (req, res) => {
    if (req.consoleSession) await kit.sessions.destroy(req.consoleSession.id);
    kit.setSessionCookie(req, res, null);
    res.redirect(303, '/console/login?signed_out=1');
  });
}

/** The mode switch: the console acts in test or live mode, as a key of that mode would. */
export function modeRoutes(router: Router, kit: Kit): void {
  router.post('/mode', async (req, res) => {
    const mode = field(req, 'mode');
    if (mode !== 'test' && mode !== 'live')
      return kit.send(res, 400, errorPage(400, 'The mode must be test or live.', kit.peek(req)));
    const session = kit.session(req);
    session.data.mode = mode;
    const back = field(req, 'return_to');
    await kit.redirect(req, res, RETURN_TO.test(back) ? back : '/console/jobs', {
      kind: 'ok',
      text: `Switched to ${mode} mode.`,
    });
  });
}
