import type { Router } from 'express';
import type { ConsoleServices } from '../deps.ts';
import type { Kit } from '../http/kit.ts';
import { accountPage } from '../views/account.ts';

/** The account page: the Firecrawl webhook secret (docs/api.md §18), shown once when made. */
export function accountRoutes(router: Router, kit: Kit, services: ConsoleServices): void {
  const { webhooks } = services;

  router.get('/account', async (req, res) => {
    const session = kit.session(req);
    const newSecret = session.data.revealFirecrawlSecret;
    if (newSecret) {
      session.data.revealFirecrawlSecret = undefined;
      await kit.sessions.save(session);
    }
    const createdAt = await webhooks.firecrawlSecretCreatedAt(kit.owner(req));
    kit.send(res, 200, accountPage(await kit.page(req), { createdAt, newSecret }));
  });

  // Post/redirect/get, as for API keys: the secret waits in the session until the next page takes it out.
  router.post('/account/firecrawl-webhook-secret', async (req, res) => {
    const secret = await webhooks.rotateFirecrawlSecret(kit.owner(req));
    const session = kit.session(req);
    session.data.revealFirecrawlSecret = secret;
    await kit.sessions.save(session);
    res.redirect(303, '/console/account');
  });
}
