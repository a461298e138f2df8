import { randomBytes } from 'node:crypto';
import { createWebhookSchema, issuesToDetails, WEBHOOK_EVENTS } from '@scrapejobs/contracts';
import type { Request, Response, Router } from 'express';
import type { ConsoleServices } from '../deps.ts';
import { attempt, field, fields, type Kit } from '../http/kit.ts';
import { type WebhookFormValues, webhookDetailPage, webhooksPage } from '../views/webhooks.ts';

const LIST_LIMIT = 100;
const DELIVERIES_SHOWN = 50;

const freshForm = (): WebhookFormValues => ({
  url: '',
  events: [...WEBHOOK_EVENTS],
  secret: `whsec_${randomBytes(24).toString('base64url')}`,
  description: '',
});

/** Webhooks of the signed-in user in the session's mode, through the API's webhooks service. */
export function webhooksRoutes(router: Router, kit: Kit, services: ConsoleServices): void {
  const { webhooks } = services;

  async function listPage(req: Request, res: Response, status: number, form: WebhookFormValues, errors = {}) {
    const page = await webhooks.list(kit.owner(req), { limit: LIST_LIMIT });
    kit.send(res, status, webhooksPage(await kit.page(req), page.items, form, errors));
  }

  router.get('/webhooks', (req, res) => listPage(req, res, 200, freshForm()));

  router.post('/webhooks', async (req, res) => {
    const form: WebhookFormValues = {
      url: field(req, 'url').trim(),
      events: fields(req, 'events'),
      secret: field(req, 'secret'),
      description: field(req, 'description').trim(),
    };
    const parsed = createWebhookSchema.safeParse({
      url: form.url,
      events: form.events,
      secret: form.secret,
      description: form.description || null,
    });
    if (!parsed.success) return listPage(req, res, 400, form, issuesToDetails(parsed.error.issues));
    const created = await attempt(() => webhooks.create(kit.owner(req), parsed.data), [400]);
    if (!created.ok) return listPage(req, res, 400, form, created.failure.details);
    await kit.redirect(req, res, `/console/webhooks/${created.value.id}`, {
      kind: 'ok',
      text: 'Webhook added. Send a test event to check the endpoint.',
    });
  });

  router.get('/webhooks/:id', async (req, res) => {
    const owner = kit.owner(req);
    const id = String(req.params.id);
    const hook = await webhooks.get(owner, id);
    const deliveries = await webhooks.listDeliveries(owner, id, { limit: DELIVERIES_SHOWN });
    kit.send(res, 200, webhookDetailPage(await kit.page(req), hook, deliveries.items));
  });

  router.post('/webhooks/:id/delete', async (req, res) => {
    await webhooks.delete(kit.owner(req), String(req.params.id));
    await kit.redirect(req, res, '/console/webhooks', { kind: 'ok', text: 'Webhook deleted.' });
  });

  router.post('/webhooks/:id/test', async (req, res) => {
    const id = String(req.params.id);
    const sent = await attempt(() => webhooks.test(kit.owner(req), id), [409]);
    await kit.redirect(
      req,
      res,
      `/console/webhooks/${id}`,
      sent.ok
        ? { kind: 'ok', text: 'Test event queued; refresh to see the delivery.' }
        : { kind: 'error', text: sent.failure.message },
    );
  });

  router.post('/webhooks/:id/deliveries/:delivery/resend', async (req, res) => {
    const id = String(req.params.id);
    const resent = await attempt(
      () => webhooks.resend(kit.owner(req), id, String(req.params.delivery)),
      [409],
    );
    await kit.redirect(
      req,
      res,
      `/console/webhooks/${id}`,
      resent.ok
        ? { kind: 'ok', text: 'Delivery queued again.' }
        : { kind: 'error', text: resent.failure.message },
    );
  });
}
