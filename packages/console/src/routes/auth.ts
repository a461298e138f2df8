import { normalizeEmail } from '@scrapejobs/domain';
import type { Router } from 'express';
import type { ConsoleServices } from '../deps.ts';
import { type FormTokens, formNonce } from '../http/csrf.ts';
import { field, type Kit } from '../http/kit.ts';
import { newSecret } from '../http/session.ts';
import type { SignInLimiter } from '../http/sign-in-limit.ts';
import { errorPage } from '../views/errors.ts';
import { signInPage } from '../views/sign-in.ts';

const RETURN_TO = /^\/console\/(jobs|webhooks|keys)$/;

/**
 * Sign-in and sign-out. The sign-in form keeps nothing on the server: its CSRF token is signed
 * over a nonce in the visitor's cookie (FormTokens), so a visit stores nothing in Redis; the
 * session is created at sign-in only, under a new id.
 */
export function authRoutes(
  router: Router,
  kit: Kit,
  accounts: ConsoleServices['accounts'],
  limiter: SignInLimiter,
  tokens: FormTokens,
): void {
  router.get('/login', async (req, res) => {
    if (req.consoleSession?.data.user) return res.redirect(303, '/console/jobs');
    // The cookie's value is kept (two open forms both work), and set again: it may be the id of
    // a session that just ended, whose cookie this same response deletes first.
    const nonce = formNonce(req) ?? newSecret();
    kit.setSessionCookie(req, res, nonce);
    const notice = req.query.signed_out === '1' ? 'You are signed out.' : undefined;
    kit.send(res, 200, signInPage({ csrf: tokens.issue(nonce), notice }));
  });

  // The router has checked the form's token against the cookie's nonce already.
  router.post('/login', async (req, res) => {
    const email = normalizeEmail(field(req, 'email'));
    const password = field(req, 'password');
    const ip = req.ip ?? 'unknown';
    const csrf = tokens.issue(formNonce(req)!);
    const wait = await limiter.blockedFor(email, ip);
    if (wait > 0) {
      res.set('Retry-After', String(wait));
      const minutes = Math.ceil(wait / 60);
      return kit.send(
        res,
        429,
        signInPage({
          csrf,
          email,
          error: `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
        }),
      );
    }
    const account = email && password ? await accounts.authenticate(email, password) : null;
    if (!account) {
      await limiter.recordFailure(email, ip);
      return kit.send(res, 401, signInPage({ csrf, email, error: 'Incorrect email or password.' }));
    }
    await limiter.recordSuccess(email, ip);
    // A new session id (never the cookie's value): a nonce or id planted before cannot be taken over.
    if (req.consoleSession) await kit.sessions.destroy(req.consoleSession.id);
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
