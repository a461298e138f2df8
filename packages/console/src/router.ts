import { unstorableText } from '@scrapejobs/contracts';
import { isDatabaseUnavailable } from '@scrapejobs/db';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import type { ConsoleDeps } from './deps.ts';
import { assetHandler } from './http/assets.ts';
import { CSRF_FIELD, csrfMatches, FormTokens, formNonce } from './http/csrf.ts';
import { securityHeaders } from './http/headers.ts';
import { Kit, serviceFailure } from './http/kit.ts';
import { readCookie, SESSION_COOKIE, SessionStore } from './http/session.ts';
import { SignInLimiter } from './http/sign-in-limit.ts';
import { accountRoutes } from './routes/account.ts';
import { authRoutes, modeRoutes } from './routes/auth.ts';
import { documentsRoutes } from './routes/documents.ts';
import { jobsRoutes } from './routes/jobs.ts';
import { keysRoutes } from './routes/keys.ts';
import { webhooksRoutes } from './routes/webhooks.ts';
import { errorPage } from './views/errors.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
// ioredis failures while Redis is away (the API's client has no offline queue).
const REDIS_DOWN =
  /Stream isn't writeable|Connection is closed|ECONNREFUSED|ETIMEDOUT|Command timed out|MaxRetriesPerRequest|enableOfflineQueue/i;
const unavailable = (err: unknown) =>
  isDatabaseUnavailable(err) || (err instanceof Error && REDIS_DOWN.test(err.message));
/** The router's error for a path parameter that is not valid percent-encoding (`/jobs/%`). */
const malformedParam = (err: unknown) =>
  err instanceof URIError && (err as { status?: unknown }).status === 400;

const EXPIRED = 'Your session has expired. Sign in again.';
const FORGED =
  'The form was not sent from this console (its security token is missing or wrong). Reload the page and try again.';

/**
 * The account console, server-rendered, mounted by the API at /console (same origin).
 * Every request: the API's rate limit, then the session from the cookie; every non-GET: CSRF
 * token checked first (sign-in: the signed form token; otherwise the session's); everything but
 * sign-in: a signed-in session. Nothing is stored for a visitor until they sign in.
 */
export function consoleRouter(deps: ConsoleDeps): Router {
  const kit = new Kit(new SessionStore(deps.redis, deps.prefix), deps.secureCookies);
  const { accounts } = deps.services;
  const formTokens = new FormTokens(deps.formKey);
  const router = Router();

  router.use(securityHeaders);
  if (deps.rateLimit) router.use(deps.rateLimit);
  router.get('/assets/:file', assetHandler());
  router.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 300 }));

  router.use(async (req: Request, res: Response, next: NextFunction) => {
    let session = await kit.sessions.load(readCookie(req.headers.cookie, SESSION_COOKIE));
    if (session?.data.user) {
      // A password reset (or a deleted account) ends every session opened before it.
      const account = await accounts.current(session.data.user.id);
      if (!account || account.passwordStamp !== session.data.user.passwordStamp) {
        await kit.sessions.destroy(session.id);
        kit.setSessionCookie(req, res, null);
        session = null;
      }
    }
    req.consoleSession = session;
    if (!SAFE_METHODS.has(req.method)) {
      const token = (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
      let refusal: string | null = null;
      if (req.path === '/login') {
        const nonce = formNonce(req);
        const check = formTokens.check(nonce, token);
        if (check !== 'ok') refusal = check === 'expired' || !nonce ? EXPIRED : FORGED;
      } else if (!session || !csrfMatches(session.data.csrf, token)) refusal = session ? FORGED : EXPIRED;
      if (refusal) return kit.send(res, 403, errorPage(403, refusal, kit.peek(req)));
    }
    next();
  });

  // Text no column could store (NUL) is refused before any service sees it.
  router.use((req: Request, res: Response, next: NextFunction) => {
    const details = { ...unstorableText(req.query), ...unstorableText(req.body) };
    const problems = Object.entries(details).map(([path, text]) => `${path} ${text}`);
    if (problems.length === 0) return next();
    kit.send(
      res,
      400,
      errorPage(400, `The request cannot be stored: ${problems.join('; ')}.`, kit.peek(req)),
    );
  });

  router.get('/', (_req, res) => res.redirect(303, '/console/jobs'));
  authRoutes(router, kit, accounts, new SignInLimiter(deps.redis, deps.prefix), formTokens);

  router.use((req: Request, res: Response, next: NextFunction) => {
    if (req.consoleSession?.data.user) return next();
    res.redirect(303, '/console/login');
  });

  modeRoutes(router, kit);
  keysRoutes(router, kit, deps.services);
  jobsRoutes(router, kit, deps);
  documentsRoutes(router, kit, deps);
  webhooksRoutes(router, kit, deps.services);
  accountRoutes(router, kit, deps.services);

  router.use((req: Request, res: Response) => {
    kit.send(res, 404, errorPage(404, 'There is no such page in the console.', kit.peek(req)));
  });

  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const failure = serviceFailure(err);
    // The form parser's errors (too large, too many fields, bad charset or compression) are 4xx
    // http-errors meant to be shown; the page says the request could not be read.
    const e = err as { status?: unknown; expose?: unknown };
    const bodyError = e.expose === true && typeof e.status === 'number' && e.status >= 400 && e.status < 500;
    const status =
      failure?.status ?? (malformedParam(err) ? 404 : bodyError ? 400 : unavailable(err) ? 503 : 500);
    if (status >= 500)
      deps.log.error({ err, req_id: req.requestId, path: req.originalUrl }, 'console request failed');
    if (res.headersSent) return void res.destroy();
    const message =
      status === 404
        ? 'It does not exist, or it belongs to another account or to the other mode.'
        : status === 503
          ? 'The service is temporarily unavailable. Try again shortly.'
          : status >= 500
            ? 'An internal error occurred; it has been logged.'
            : (failure?.message ?? 'The request could not be read.');
    if (status === 503) res.set('Retry-After', '5');
    kit.send(res, status, errorPage(status, message, kit.peek(req)));
  });

  return router;
}
