import type { DeliveryView, WebhookEventName, WebhookView } from '@scrapejobs/contracts';
import type { Prisma } from '@scrapejobs/db';

/** The columns of an endpoint of the API; never the sealed secret, which never leaves the service. */
export const WEBHOOK_SELECT = {
  id: true,
  userId: true,
  mode: true,
  url: true,
  events: true,
  description: true,
  active: true,
  createdAt: true,
} as const satisfies Prisma.WebhookSelect;

export type WebhookRow = Prisma.WebhookGetPayload<{ select: typeof WEBHOOK_SELECT }>;

export function toWebhookView(w: WebhookRow): WebhookView {
  return {
    webhook_id: w.id,
    url: w.url,
    events: w.events as WebhookEventName[],
    description: w.description,
    active: w.active,
    created_at: w.createdAt.toISOString(),
  };
}

export const DELIVERY_SELECT = {
  id: true,
  webhookId: true,
  eventId: true,
  eventKind: true,
  status: true,
  attempts: true,
  createdAt: true,
  updatedAt: true,
  attemptLog: { orderBy: [{ attempt: 'desc' }, { createdAt: 'desc' }] },
} satisfies Prisma.DeliverySelect;

/** A delivery with its attempts, newest first; the stored body stays out of views. */
export type DeliveryRow = Prisma.DeliveryGetPayload<{ select: typeof DELIVERY_SELECT }>;

export function toDeliveryView(d: DeliveryRow): DeliveryView {
  return {
    delivery_id: d.id,
    webhook_id: d.webhookId,
    event_id: d.eventId,
    event: d.eventKind,
    status: d.status,
    attempts: d.attempts,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    attempt_log: d.attemptLog.map((a) => ({
      attempt: a.attempt,
      status_code: a.statusCode,
      error: a.error,
      duration_ms: a.durationMs,
      at: a.createdAt.toISOString(),
    })),
  };
}
