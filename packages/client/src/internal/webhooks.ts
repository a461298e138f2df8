import { paginate } from './paging.ts';
import type { Transport } from './transport.ts';
import type {
  CreateWebhookRequest,
  Delivery,
  DeliveryList,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  Webhook,
  WebhookList,
} from './types.ts';

const webhookPath = (webhookId: string) => `/webhooks/${encodeURIComponent(webhookId)}`;

/** Webhook endpoints and their deliveries (docs/api.md §6). */
export class Webhooks {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** POST /webhooks: the URL receives signed events of every job of the key's owner and mode. */
  create(body: CreateWebhookRequest): Promise<Webhook> {
    return this.#t.json('POST', '/webhooks', { body });
  }

  /** GET /webhooks: one page of webhooks, newest first. */
  list(query: ListWebhooksQuery = {}): Promise<WebhookList> {
    return this.#t.json('GET', '/webhooks', { query });
  }

  /** Every webhook, page after page. */
  iterate(query: ListWebhooksQuery = {}): AsyncGenerator<Webhook, void, undefined> {
    return paginate(
      (cursor) => this.list({ ...query, cursor }),
      (page) => page.webhooks,
      query.cursor,
    );
  }

  /** GET /webhooks/{id}. */
  get(webhookId: string): Promise<Webhook> {
    return this.#t.json('GET', webhookPath(webhookId));
  }

  /** DELETE /webhooks/{id}, with its delivery history. */
  async delete(webhookId: string): Promise<void> {
    await this.#t.json('DELETE', webhookPath(webhookId));
  }

  /** GET /webhooks/{id}/deliveries: one page of deliveries with every attempt, newest first. */
  deliveries(webhookId: string, query: ListDeliveriesQuery = {}): Promise<DeliveryList> {
    return this.#t.json('GET', `${webhookPath(webhookId)}/deliveries`, { query });
  }

  /** Every delivery of a webhook (of `status`, if given), page after page. */
  iterateDeliveries(
    webhookId: string,
    query: ListDeliveriesQuery = {},
  ): AsyncGenerator<Delivery, void, undefined> {
    return paginate(
      (cursor) => this.deliveries(webhookId, { ...query, cursor }),
      (page) => page.deliveries,
      query.cursor,
    );
  }

  /** POST /webhooks/{id}/deliveries/{delivery_id}/resend: one new attempt of a failed delivery. */
  resend(webhookId: string, deliveryId: string): Promise<Delivery> {
    return this.#t.json(
      'POST',
      `${webhookPath(webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/resend`,
    );
  }

  /** POST /webhooks/{id}/test: sends a `webhook.test` event to this endpoint alone. */
  test(webhookId: string): Promise<Delivery> {
    return this.#t.json('POST', `${webhookPath(webhookId)}/test`);
  }
}
