import {
  createWebhookSchema,
  deliveryListSchema,
  deliverySchema,
  listDeliveriesQuerySchema,
  listWebhooksQuerySchema,
  webhookListSchema,
  webhookSchema,
} from '@scrapejobs/contracts';
import { toDeliveryView, toWebhookView, type WebhooksService } from '@scrapejobs/domain';
import type { z } from 'zod';
import { defineRoute, type RouteDef } from '../http/routes.ts';

const tag = 'Webhooks';

export function webhookRoutes(webhooks: WebhooksService): RouteDef[] {
  const one = { 200: { description: 'The webhook.', schema: webhookSchema } };
  const queued = { 202: { description: 'The delivery, queued for sending.', schema: deliverySchema } };
  return [
    defineRoute({
      method: 'get',
      path: '/webhooks',
      tag,
      scope: 'webhooks:read',
      summary: 'List the webhooks of the caller (in the key mode), newest first',
      query: listWebhooksQuerySchema,
      responses: { 200: { description: 'A page of webhooks.', schema: webhookListSchema } },
      handler: async ({ principal, query }) => {
        const page = await webhooks.list(principal, query);
        const items = page.items.map(toWebhookView);
        return { status: 200, body: { webhooks: items, count: items.length, next_cursor: page.nextCursor } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks',
      tag,
      scope: 'webhooks:write',
      summary: 'Create a webhook: the URL receives signed POSTs for the subscribed events of every job',
      body: createWebhookSchema as z.ZodType<z.output<typeof createWebhookSchema>>,
      responses: {
        201: { description: 'The created webhook (the secret is never returned).', schema: webhookSchema },
      },
      handler: async ({ principal, body }) => {
        const webhook = await webhooks.create(principal, body);
        return {
          status: 201,
          body: toWebhookView(webhook),
          headers: { Location: `/webhooks/${webhook.id}` },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{id}',
      tag,
      scope: 'webhooks:read',
      summary: 'Get a webhook',
      responses: one,
      handler: async ({ principal, params }) => ({
        status: 200,
        body: toWebhookView(await webhooks.get(principal, params.id!)),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/webhooks/{id}',
      tag,
      scope: 'webhooks:write',
      summary: 'Delete a webhook and its delivery history (queued attempts are dropped)',
      responses: { 204: { description: 'Deleted.' } },
      handler: async ({ principal, params }) => {
        await webhooks.delete(principal, params.id!);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{id}/deliveries',
      tag,
      scope: 'webhooks:read',
      summary: 'List the deliveries of a webhook with every attempt, newest first',
      query: listDeliveriesQuerySchema,
      responses: { 200: { description: 'A page of deliveries.', schema: deliveryListSchema } },
      handler: async ({ principal, params, query }) => {
        const page = await webhooks.listDeliveries(principal, params.id!, query);
        const items = page.items.map(toDeliveryView);
        return {
          status: 200,
          body: {
            webhook_id: params.id,
            deliveries: items,
            count: items.length,
            next_cursor: page.nextCursor,
          },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/{id}/deliveries/{delivery_id}/resend',
      tag,
      scope: 'webhooks:write',
      summary: 'Make one new attempt of a failed delivery (same event id, same body); 409 unless failed',
      responses: queued,
      handler: async ({ principal, params }) => ({
        status: 202,
        body: toDeliveryView(await webhooks.resend(principal, params.id!, params.delivery_id!)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/{id}/test',
      tag,
      scope: 'webhooks:write',
      summary: 'Send a webhook.test event to this endpoint alone',
      responses: queued,
      handler: async ({ principal, params }) => ({
        status: 202,
        body: toDeliveryView(await webhooks.test(principal, params.id!)),
      }),
    }),
  ];
}
