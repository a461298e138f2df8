import { createHmac } from 'node:crypto';

export interface SignInput {
  secret: string;
  eventId: string;
  event: string;
  body: string;
  /** 1–6 within the delivery's series of attempts. */
  attempt: number;
  now: Date;
}

/**
 * The headers of one attempt (docs/api.md §6): our `X-Service-*` headers, with an HMAC-SHA256 of
 * the exact body, and the Standard Webhooks three, whose signature also covers the id and
 * this attempt's timestamp so that receivers can reject replays.
 */
export function deliveryHeaders({
  secret,
  eventId,
  event,
  body,
  attempt,
  now,
}: SignInput): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000).toString();
  const hex = createHmac('sha256', secret).update(body).digest('hex');
  const standard = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${eventId}.${timestamp}.${body}`)
    .digest('base64');
  return {
    'Content-Type': 'application/json',
    'X-Service-Signature': `sha256=${hex}`,
    'X-Service-Event': event,
    'X-Service-Event-Id': eventId,
    'X-Service-Delivery-Attempt': String(attempt),
    'webhook-id': eventId,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${standard}`,
  };
}

/** Headers a Firecrawl webhook's own `headers` cannot set: ours, and those framing the request. */
const RESERVED = new Set([
  'content-type',
  'x-firecrawl-signature',
  'content-length',
  'transfer-encoding',
  'host',
  'connection',
]);

/**
 * The headers of one attempt of a Firecrawl-style delivery (docs/api.md §18): the webhook's own
 * headers, then `Content-Type` and, with the account's secret, `X-Firecrawl-Signature:
 * sha256=<hex HMAC-SHA256 of the exact body>`; unsigned without a secret, as Firecrawl does.
 */
export function firecrawlHeaders({
  secret,
  body,
  headers,
}: {
  secret: string | null;
  body: string;
  headers: Record<string, string> | null;
}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {}))
    if (!RESERVED.has(name.toLowerCase())) out[name] = value;
  out['Content-Type'] = 'application/json';
  if (secret !== null)
    out['X-Firecrawl-Signature'] = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  return out;
}
