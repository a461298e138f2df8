import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.ts';
import type { WebhookEvent } from './types.ts';

/** Request headers as Node's `req.headers`, a fetch `Headers`, or any record (names in any case). */
export type WebhookHeaders = Headers | Record<string, string | readonly string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Largest gap between `webhook-timestamp` and now, either way, in seconds (default 300). */
  toleranceSeconds?: number;
  /**
   * Which signature to check (docs/api.md §6; every delivery carries both): `standard` (default;
   * the `webhook-*` headers, whose timestamp refuses replays), `service` (`X-Service-Signature`
   * over the body alone, so a captured delivery can be replayed), or `any`: `standard` when its
   * headers are present, else `service`.
   */
  scheme?: 'standard' | 'service' | 'any';
  /** The current time (tests). */
  now?: Date;
}

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(
    headers as Record<string, string | readonly string[] | undefined>,
  ))
    if (key.toLowerCase() === name) return typeof value === 'string' ? value : value?.join(' ');
  return undefined;
}

/** Equal bytes, compared in constant time (a difference of length is not secret: digests have one). */
const sameBytes = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

function bodyBytes(rawBody: unknown): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (rawBody instanceof Uint8Array)
    return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  throw new TypeError(
    'rawBody must be the request body as received (a string or bytes), before any JSON parsing',
  );
}

function verifyStandard(
  body: Buffer,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions,
) {
  const id = headerOf(headers, 'webhook-id');
  const timestamp = headerOf(headers, 'webhook-timestamp');
  const signatures = headerOf(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError(
      'missing_signature',
      'webhook-id, webhook-timestamp or webhook-signature header missing',
    );
  const seconds = /^\d{1,15}$/.test(timestamp) ? Number(timestamp) : Number.NaN;
  const now = (options.now ?? new Date()).getTime() / 1000;
  const tolerance = options.toleranceSeconds ?? 300;
  if (Number.isNaN(seconds) || Math.abs(now - seconds) > tolerance)
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `webhook-timestamp is not within ${tolerance} s of now`,
    );
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${id}.${timestamp}.`)
    .update(body)
    .digest();
  // Several space-separated signatures may be sent (during a secret rotation); one match suffices.
  const matches = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .some((s) => sameBytes(Buffer.from(s.slice(3), 'base64'), expected));
  if (!matches) throw new WebhookVerificationError('invalid_signature', 'webhook-signature does not match');
}

function verifyService(body: Buffer, headers: WebhookHeaders, secret: string) {
  const header = headerOf(headers, 'x-service-signature');
  if (!header) throw new WebhookVerificationError('missing_signature', 'X-Service-Signature header missing');
  const hex = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim())?.[1];
  const expected = createHmac('sha256', secret).update(body).digest();
  if (!hex || !sameBytes(Buffer.from(hex, 'hex'), expected))
    throw new WebhookVerificationError('invalid_signature', 'X-Service-Signature does not match');
}

/**
 * Checks that a webhook delivery was signed with `secret` by the service, over the exact bytes
 * received, and returns its parsed event; throws a `WebhookVerificationError` otherwise.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const body = bodyBytes(rawBody);
  const scheme = options.scheme ?? 'standard';
  const standard =
    scheme === 'standard' || (scheme === 'any' && headerOf(headers, 'webhook-signature') !== undefined);
  if (standard) verifyStandard(body, headers, secret, options);
  else verifyService(body, headers, secret);
  try {
    return JSON.parse(body.toString('utf8')) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('invalid_body', 'the signed body is not JSON');
  }
}
