import { z } from 'zod';
import { healthSchema } from './changes.ts';

/** Event kinds a webhook can subscribe to (docs/api.md §6). */
export const WEBHOOK_EVENTS = [
  'job.completed',
  'job.failed',
  'job.started',
  'job.paused',
  'job.changed',
  'job.degraded',
] as const;
/** Sent by POST /webhooks/{id}/test to that endpoint alone; not subscribable. */
export const TEST_EVENT = 'webhook.test';
/**
 * Outbox row kind (never sent) by which the API asks the webhook worker to make a new attempt
 * of a failed delivery; written in the same transaction that sets the delivery back to pending.
 */
export const RESEND_COMMAND = 'delivery.resend';
export const resendCommandSchema = z.object({
  delivery_id: z.string(),
  /** Attempts the delivery had when resent: the new attempt is valid only from that state. */
  attempts: z.int(),
});
const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
/** `error.code` values of job.failed (docs/api.md §6): the codes a URL or a run fails with. */
export const FAILURE_CODES = [
  'TIMEOUT',
  'HTTP_ERROR',
  'NETWORK_ERROR',
  'BLOCKED_TARGET',
  'RENDER_ERROR',
  'PROXY_ERROR',
  'EXTRACTION_ERROR',
  // The account's model tokens for the day are spent (docs/api.md §24).
  'LLM_BUDGET',
] as const;

export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];
export type FailureCode = (typeof FAILURE_CODES)[number];
export type DeliveryStatusName = (typeof DELIVERY_STATUSES)[number];

function isHttpUrl(s: string): boolean {
  if (/\s/.test(s) || !URL.canParse(s)) return false;
  const url = new URL(s);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

/** POST /webhooks body (docs/api.md §6). HTTPS for live keys and the target address are checked by the service. */
export const createWebhookSchema = z.strictObject({
  url: z.string().max(2048).refine(isHttpUrl, 'must be an absolute http or https URL'),
  events: z
    .array(z.enum(WEBHOOK_EVENTS))
    .min(1)
    .max(WEBHOOK_EVENTS.length)
    .refine((a) => new Set(a).size === a.length, 'values must be unique'),
  secret: z.string().min(16).max(256),
  description: z.string().max(500).nullable().default(null),
});

export type CreateWebhookInput = z.output<typeof createWebhookSchema>;

const page = {
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(200).optional(),
};

/** GET /webhooks query string. */
export const listWebhooksQuerySchema = z.strictObject(page);

/** GET /webhooks/{id}/deliveries query string. */
export const listDeliveriesQuerySchema = z.strictObject({
  ...page,
  status: z.enum(DELIVERY_STATUSES).optional(),
});

const timestamp = z.iso.datetime().describe('ISO 8601 UTC with milliseconds');

export const webhookSchema = z.object({
  webhook_id: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  description: z.string().nullable(),
  active: z.boolean().describe('false after the endpoint answered 410 Gone'),
  created_at: timestamp,
});

export const webhookListSchema = z.object({
  webhooks: z.array(webhookSchema),
  count: z.int(),
  next_cursor: z.string().nullable(),
});

const deliveryAttemptSchema = z.object({
  attempt: z.int().describe('1 for the first attempt; resends continue the count'),
  status_code: z.int().nullable().describe('the HTTP status answered, null when none was'),
  error: z.string().nullable().describe('why the attempt failed without a status, or a note on it'),
  duration_ms: z.int(),
  at: timestamp.describe('when the attempt started'),
});

export const deliverySchema = z.object({
  delivery_id: z.string(),
  webhook_id: z.string(),
  event_id: z.string(),
  event: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.int().describe('number of attempts made so far'),
  created_at: timestamp,
  updated_at: timestamp,
  attempt_log: z.array(deliveryAttemptSchema).describe('every attempt, newest first'),
});

export const deliveryListSchema = z.object({
  webhook_id: z.string(),
  deliveries: z.array(deliverySchema),
  count: z.int(),
  next_cursor: z.string().nullable(),
});

export type WebhookView = z.infer<typeof webhookSchema>;
export type DeliveryView = z.infer<typeof deliverySchema>;

// The `data` of each event (docs/api.md §6). Their key order is the order on the wire.
const failureSchema = z.object({
  code: z.enum(FAILURE_CODES),
  message: z.string(),
  failed_urls: z.int(),
  successful_urls: z.int(),
});

const eventDataSchemas = {
  'job.completed': z.object({
    job_id: z.string(),
    job_name: z.string(),
    run_id: z.string(),
    status: z.literal('success'),
    results_count: z.int(),
    duration_ms: z.int(),
    download_url: z.string(),
    skipped_urls: z.int(),
  }),
  'job.failed': z.object({
    job_id: z.string(),
    job_name: z.string(),
    run_id: z.string(),
    status: z.literal('failed'),
    error: failureSchema,
    skipped_urls: z.int(),
  }),
  'job.started': z.object({
    job_id: z.string(),
    job_name: z.string(),
    run_id: z.string(),
    status: z.literal('running'),
    trigger: z.enum(['manual', 'schedule']),
  }),
  'job.paused': z.object({ job_id: z.string(), job_name: z.string(), status: z.literal('paused') }),
  'job.changed': z.object({
    job_id: z.string(),
    job_name: z.string(),
    run_id: z.string(),
    base_run_id: z.string().nullable(),
    added: z.int(),
    removed: z.int(),
    changed: z.int(),
    changes_url: z.string(),
  }),
  'job.degraded': z.object({
    job_id: z.string(),
    job_name: z.string(),
    run_id: z.string(),
    reasons: healthSchema.shape.reasons,
  }),
  [TEST_EVENT]: z.object({ webhook_id: z.string(), message: z.string() }),
} as const;

/** The `data` of each outbox row kind: every event's (docs/api.md §6), and the resend command's. */
export type OutboxData = { [K in keyof typeof eventDataSchemas]: z.infer<(typeof eventDataSchemas)[K]> } & {
  [RESEND_COMMAND]: z.infer<typeof resendCommandSchema>;
};

/** The body of every delivery. */
const eventEnvelopeSchema = z.object({
  id: z.string().describe('the event id (evt_…); the same in every attempt, deduplicate by it'),
  event: z.string(),
  timestamp,
  data: z.record(z.string(), z.unknown()),
});

type EventEnvelope = z.infer<typeof eventEnvelopeSchema>;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `value` with the keys named by `schema` first, in the schema's order; nested objects too. */
function ordered(value: unknown, schema: z.ZodType | undefined): unknown {
  if (!isObject(value) || !(schema instanceof z.ZodObject)) return value;
  const shape = schema.shape as Record<string, z.ZodType>;
  const out: Json = {};
  for (const key of Object.keys(shape)) if (key in value) out[key] = ordered(value[key], shape[key]);
  for (const [key, v] of Object.entries(value)) if (!(key in out)) out[key] = v;
  return out;
}

/**
 * The exact bytes of an event's delivery body, built once and stored, so every attempt sends
 * the same bytes. Data keys follow the documented order (the outbox stores them as jsonb).
 */
export function encodeEnvelope(event: { id: string; kind: string; createdAt: Date; data: unknown }): string {
  const schema = (eventDataSchemas as Record<string, z.ZodType>)[event.kind];
  const envelope: EventEnvelope = {
    id: event.id,
    event: event.kind,
    timestamp: event.createdAt.toISOString(),
    data: ordered(event.data, schema) as Json,
  };
  return JSON.stringify(envelope);
}
