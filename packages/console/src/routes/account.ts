import type { Request, Response, Router } from 'express';
import type { ConsoleServices } from '../deps.ts';
import type { Kit } from '../http/kit.ts';
import { accountPage } from '../views/account.ts';

/**
 * The account page: the Firecrawl webhook secret (docs/api.md §18, §26), which every account has
 * (made here when it has none yet), shown on request or when rotated.
 */
export function accountRoutes(router: Router, kit: Kit, services: ConsoleServices): void {
  const { webhooks } = services;

  router.get('/account', async (req, res) => {
    const session = kit.session(req);
    const shown = session.data.revealFirecrawlSecret;
    if (shown) {
      session.data.revealFirecrawlSecret = undefined;
      await kit.sessions.save(session);
    }
    const owner = kit.owner(req);
    await webhooks.ensureFirecrawlSecret(owner);
    const createdAt = await webhooks.firecrawlSecretCreatedAt(owner);
    kit.send(res, 200, accountPage(await kit.page(req), { createdAt, shown }));
  });

  // Post/redirect/get, as for API keys: the secret waits in the session until the next page takes it out.
  const showNext = async (req: Request, res: Response, secret: string, rotated: boolean) => {
    const session = kit.session(req);
    session.data.revealFirecrawlSecret = { secret, rotated };
    await kit.sessions.save(session);
    res.redirect(303, '/console/account');
  };
  router.post('/account/firecrawl-webhook-secret', async (req, res) => {
    await showNext(req, res, await webhooks.rotateFirecrawlSecret(kit.owner(req)), true);
  });
  router.post('/account/firecrawl-webhook-secret/show', async (req, res) => {
    await showNext(req, res, await webhooks.revealFirecrawlSecret(kit.owner(req)), false);
  });
}
