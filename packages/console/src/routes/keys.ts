import type { Request, Response, Router } from 'express';
import type { ConsoleServices } from '../deps.ts';
import { field, fields, type Kit } from '../http/kit.ts';
import type { SessionData } from '../http/session.ts';
import { type KeyForm, keysPage, SCOPES } from '../views/keys.ts';

type Scope = (typeof SCOPES)[number];

function parseKeyForm(req: Request): KeyForm {
  const name = field(req, 'name').trim();
  const mode = field(req, 'mode');
  const scopes = fields(req, 'scopes');
  const errors: Record<string, string> = {};
  if (name.length < 1 || name.length > 100) errors.name = 'Give the key a name of 1 to 100 characters.';
  if (mode !== 'test' && mode !== 'live') errors.mode = 'Choose test or live.';
  if (scopes.length === 0) errors.scopes = 'Choose at least one scope.';
  else if (!scopes.every((s) => (SCOPES as readonly string[]).includes(s))) errors.scopes = 'Unknown scope.';
  return { name, mode: mode === 'live' ? 'live' : 'test', scopes, errors };
}

/** API keys of the signed-in user: exactly the key service of the CLI (docs/api.md §2). */
export function keysRoutes(router: Router, kit: Kit, services: ConsoleServices): void {
  const { keys } = services;
  const listFor = (req: Request) => keys.list(kit.session(req).data.user.email);

  /** A key of this user that is still active, or a 404 page. */
  async function ownKey(req: Request, res: Response) {
    const id = String(req.params.id);
    const key = (await listFor(req)).find((k) => k.key_id === id && !k.revoked_at);
    if (!key)
      await kit.redirect(req, res, '/console/keys', {
        kind: 'error',
        text: 'That key is not an active key of yours.',
      });
    return key;
  }

  router.get('/keys', async (req, res) => {
    const session = kit.session(req);
    const reveal = session.data.reveal;
    if (reveal) {
      session.data.reveal = undefined;
      await kit.sessions.save(session);
    }
    kit.send(res, 200, keysPage(await kit.page(req), await listFor(req), { newToken: reveal }));
  });

  /**
   * Post/redirect/get, so reloading the page cannot create another key. The token waits in the
   * session (Redis) only until that next page is rendered, which takes it out again.
   */
  async function reveal(req: Request, res: Response, newToken: NonNullable<SessionData['reveal']>) {
    const session = kit.session(req);
    session.data.reveal = newToken;
    await kit.sessions.save(session);
    res.redirect(303, '/console/keys');
  }

  router.post('/keys', async (req, res) => {
    const form = parseKeyForm(req);
    if (Object.keys(form.errors).length > 0)
      return kit.send(res, 400, keysPage(await kit.page(req), await listFor(req), { form }));
    const { key, token } = await keys.create({
      email: kit.session(req).data.user.email,
      mode: form.mode,
      scopes: form.scopes as Scope[],
      name: form.name,
    });
    await reveal(req, res, { name: key.name, token, replaced: false });
  });

  router.post('/keys/:id/regenerate', async (req, res) => {
    const old = await ownKey(req, res);
    if (!old) return;
    const { key, token } = await keys.regenerate(old.key_id);
    await reveal(req, res, { name: key.name, token, replaced: true });
  });

  router.post('/keys/:id/revoke', async (req, res) => {
    const key = await ownKey(req, res);
    if (!key) return;
    await keys.revoke(key.key_id);
    await kit.redirect(req, res, '/console/keys', {
      kind: 'ok',
      text: `Key “${key.name}” (${key.prefix}…) is revoked; requests with it are refused.`,
    });
  });
}
