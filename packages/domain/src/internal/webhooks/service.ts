import {
  type CreateWebhookInput,
  type DeliveryStatusName,
  encodeEnvelope,
  RESEND_COMMAND,
  TEST_EVENT,
} from '@scrapejobs/contracts';
import { type Database, isId, newId, type Prisma } from '@scrapejobs/db';
import { checkUrlTarget, type Resolve, type SecretBox, systemResolve } from '@scrapejobs/outbound';
import { conflict, notFound, validationError } from '../errors.ts';
import { outboxEvent } from '../outbox.ts';
import { decodeCursor, type Page, pageOf } from '../paging.ts';
import type { Owner } from '../principal.ts';
import { FirecrawlSecrets } from './firecrawl.ts';
import { DELIVERY_SELECT, type DeliveryRow, WEBHOOK_SELECT, type WebhookRow } from './presenter.ts';

type Tx = Prisma.TransactionClient;

export interface WebhookSettings {
  /** Seals secrets at rest (AES-256-GCM, bound to the webhook id). */
  box: SecretBox;
  /** ALLOW_PRIVATE_NETWORK_TARGETS: loopback and private targets allowed (metadata never). */
  allowPrivate: boolean;
  /** Name resolution for the target check; tests pass a fake one. */
  resolve?: Resolve;
}

/**
 * Webhook endpoints and their delivery history (docs/api.md §6). Nothing here talks to the
 * queue: a test event and a resend are outbox rows written in the same transaction as the
 * delivery they concern, and the webhook worker's fan-out enqueues them.
 */
export class WebhooksService {
  readonly #db: Database;
  readonly #settings: WebhookSettings;
  readonly #now: () => Date;
  readonly #firecrawlSecrets: FirecrawlSecrets;

  constructor(db: Database, settings: WebhookSettings, now: () => Date = () => new Date()) {
    this.#db = db;
    this.#settings = settings;
    this.#now = now;
    this.#firecrawlSecrets = new FirecrawlSecrets(db, settings.box, now);
  }

  async list(owner: Owner, opts: { limit: number; cursor?: string | undefined }): Promise<Page<WebhookRow>> {
    const before = decodeCursor('wh', opts.cursor);
    const rows = await this.#db.webhook.findMany({
      where: { userId: owner.userId, mode: owner.mode, jobId: null, ...(before && { id: { lt: before } }) },
      orderBy: { id: 'desc' },
      take: opts.limit + 1,
      select: WEBHOOK_SELECT,
    });
    return pageOf(rows, opts.limit, (row) => row.id);
  }

  async get(owner: Owner, id: string, tx: Tx = this.#db): Promise<WebhookRow> {
    const webhook = isId('wh', id)
      ? await tx.webhook.findFirst({
          where: { id, userId: owner.userId, mode: owner.mode, jobId: null },
          select: WEBHOOK_SELECT,
        })
      : null;
    if (!webhook) throw notFound('Webhook');
    return webhook;
  }

  /** Creates an endpoint after the rules the schema cannot see: https for live keys, an allowed target. */
  async create(owner: Owner, input: CreateWebhookInput): Promise<WebhookRow> {
    if (owner.mode === 'live' && new URL(input.url).protocol !== 'https:')
      throw validationError({ url: 'must be an https URL for a live-mode key' });
    const target = await checkUrlTarget(
      input.url,
      this.#settings.allowPrivate,
      this.#settings.resolve ?? systemResolve,
    );
    if (!target.ok) throw validationError({ url: target.reason });
    const now = this.#now();
    const id = newId('wh', now.getTime());
    return this.#db.webhook.create({
      data: {
        id,
        userId: owner.userId,
        mode: owner.mode,
        url: input.url,
        events: input.events,
        secretEncrypted: this.#settings.box.seal(input.secret, id),
        description: input.description,
        active: true,
        createdAt: now,
      },
      select: WEBHOOK_SELECT,
    });
  }

  /** Deletes the endpoint with its deliveries; queued attempts find nothing and are dropped. */
  async delete(owner: Owner, id: string): Promise<void> {
    const { count } = isId('wh', id)
      ? await this.#db.webhook.deleteMany({
          where: { id, userId: owner.userId, mode: owner.mode, jobId: null },
        })
      : { count: 0 };
    if (count === 0) throw notFound('Webhook');
  }

  async listDeliveries(
    owner: Owner,
    id: string,
    opts: { limit: number; cursor?: string | undefined; status?: DeliveryStatusName | undefined },
  ): Promise<Page<DeliveryRow>> {
    await this.get(owner, id);
    const before = decodeCursor('dlv', opts.cursor);
    const rows = await this.#db.delivery.findMany({
      where: {
        webhookId: id,
        ...(opts.status && { status: opts.status }),
        ...(before && { id: { lt: before } }),
      },
      orderBy: { id: 'desc' },
      take: opts.limit + 1,
      select: DELIVERY_SELECT,
    });
    return pageOf(rows, opts.limit, (row) => row.id);
  }

  /** Queues one new attempt of a failed delivery: same event id, same bytes. */
  async resend(owner: Owner, id: string, deliveryId: string): Promise<DeliveryRow> {
    const now = this.#now();
    return this.#db.$transaction(async (tx) => {
      const webhook = await this.get(owner, id, tx);
      if (!isId('dlv', deliveryId)) throw notFound('Delivery');
      const locked = await tx.$queryRaw<{ status: DeliveryStatusName; attempts: number }[]>`
        SELECT status, attempts FROM deliveries WHERE id = ${deliveryId} AND webhook_id = ${id} FOR UPDATE`;
      const delivery = locked[0];
      if (!delivery) throw notFound('Delivery');
      if (delivery.status !== 'failed')
        throw conflict(`The delivery is ${delivery.status}; only a failed delivery can be resent.`);
      if (!webhook.active)
        throw conflict('The webhook is inactive (its endpoint answered 410 Gone); create it again.');
      await tx.event.create({
        data: outboxEvent(
          owner,
          RESEND_COMMAND,
          { delivery_id: deliveryId, attempts: delivery.attempts },
          { jobId: null, at: now },
        ),
      });
      return tx.delivery.update({
        where: { id: deliveryId },
        data: { status: 'pending', updatedAt: now },
        select: DELIVERY_SELECT,
      });
    });
  }

  /** When the account's Firecrawl webhook secret (docs/api.md §18) was made, or null without one. */
  firecrawlSecretCreatedAt(owner: Pick<Owner, 'userId'>): Promise<Date | null> {
    return this.#firecrawlSecrets.createdAt(owner.userId);
  }

  /** Makes the account's Firecrawl webhook secret unless it has one (at its first crawl or batch with a webhook). */
  ensureFirecrawlSecret(owner: Pick<Owner, 'userId'>): Promise<void> {
    return this.#firecrawlSecrets.ensure(owner.userId);
  }

  /** The account's Firecrawl webhook secret, made first when it has none. */
  revealFirecrawlSecret(owner: Pick<Owner, 'userId'>): Promise<string> {
    return this.#firecrawlSecrets.reveal(owner.userId);
  }

  /** Makes a new Firecrawl webhook secret for the account (both modes), replacing the current one. */
  rotateFirecrawlSecret(owner: Pick<Owner, 'userId'>): Promise<string> {
    return this.#firecrawlSecrets.rotate(owner.userId);
  }

  /** Sends a `webhook.test` event to this endpoint alone. */
  async test(owner: Owner, id: string): Promise<DeliveryRow> {
    const now = this.#now();
    return this.#db.$transaction(async (tx) => {
      const webhook = await this.get(owner, id, tx);
      if (!webhook.active)
        throw conflict('The webhook is inactive (its endpoint answered 410 Gone); create it again.');
      const data = { webhook_id: id, message: 'This is a test event sent from the API.' };
      const event = await tx.event.create({
        data: outboxEvent(owner, TEST_EVENT, data, { jobId: null, at: now }),
      });
      return tx.delivery.create({
        data: {
          id: newId('dlv', now.getTime()),
          webhookId: id,
          eventId: event.id,
          eventKind: TEST_EVENT,
          body: encodeEnvelope({ id: event.id, kind: TEST_EVENT, createdAt: now, data }),
          status: 'pending',
          attempts: 0,
          createdAt: now,
          updatedAt: now,
        },
        select: DELIVERY_SELECT,
      });
    });
  }
}
