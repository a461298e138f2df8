import { createHmac } from 'node:crypto';
import { verify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { webhookWorkerEnvSchema } from './config.ts';
import { retryBackoff } from './delivery.ts';
import { deliveryHeaders, firecrawlHeaders } from './signing.ts';

const body = '{"id":"evt_1","event":"job.paused","timestamp":"2026-11-21T10:00:00.000Z","data":{}}';
const secret = 'ünïcode-secret-0123456789';
const headers = deliveryHeaders({
  secret,
  eventId: 'evt_1',
  event: 'job.paused',
  body,
  attempt: 3,
  now: new Date('2026-11-21T10:00:05.999Z'),
});

describe('deliveryHeaders', () => {
  it('names the event, its id and the attempt, with unix-second timestamps', () => {
    expect(headers).toEqual(
      expect.objectContaining({
        'Content-Type': 'application/json',
        'X-Service-Event': 'job.paused',
        'X-Service-Event-Id': 'evt_1',
        'X-Service-Delivery-Attempt': '3',
        'webhook-id': 'evt_1',
        'webhook-timestamp': '1795255205',
      }),
    );
  });

  it('signs the exact body as sha256=<lowercase hex HMAC>, as GitHub-style verifiers expect', async () => {
    const hex = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
    expect(headers['X-Service-Signature']).toBe(`sha256=${hex}`);
    expect(await verify(secret, body, headers['X-Service-Signature']!)).toBe(true);
    expect(await verify(secret, `${body} `, headers['X-Service-Signature']!)).toBe(false);
  });

  it('signs "<id>.<timestamp>.<body>" for Standard Webhooks, keyed with the secret UTF-8 bytes', () => {
    const wh = new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
    expect(wh.sign('evt_1', new Date(1795255205 * 1000), body)).toBe(headers['webhook-signature']);
  });
});

describe('retry schedule', () => {
  it('waits delays[n-1] after the n-th failed attempt (BullMQ counts from 1)', () => {
    const backoff = retryBackoff([60_000, 300_000, 1_800_000, 7_200_000, 86_400_000]);
    expect([1, 2, 3, 4, 5].map((n) => backoff(n))).toEqual([
      60_000, 300_000, 1_800_000, 7_200_000, 86_400_000,
    ]);
  });

  it('counts the attempts made before a continuation entry, so its retries keep the schedule', () => {
    const backoff = retryBackoff([60_000, 300_000, 1_800_000, 7_200_000, 86_400_000]);
    const continuation = { name: 'continue', id: 'dlv_01JD0000000000000000000000-c2' };
    expect([1, 2, 3].map((n) => backoff(n, 'custom', undefined, continuation))).toEqual([
      1_800_000, 7_200_000, 86_400_000,
    ]);
    expect(backoff(1, 'custom', undefined, { name: 'deliver', id: 'dlv_01JD0000000000000000000000' })).toBe(
      60_000,
    );
  });

  it('reads WEBHOOK_RETRY_DELAYS_MS as five delays, the documented schedule by default', () => {
    expect(webhookWorkerEnvSchema.parse({}).WEBHOOK_RETRY_DELAYS_MS).toEqual([
      60_000, 300_000, 1_800_000, 7_200_000, 86_400_000,
    ]);
    expect(webhookWorkerEnvSchema.parse({}).WEBHOOK_TIMEOUT_MS).toBe(10_000);
    expect(webhookWorkerEnvSchema.safeParse({ WEBHOOK_RETRY_DELAYS_MS: '1,2,3' }).success).toBe(false);
    expect(webhookWorkerEnvSchema.safeParse({ WEBHOOK_SECRET_KEY: 'short' }).success).toBe(false);
  });
});

describe('firecrawlHeaders', () => {
  const fc =
    '{"success":true,"type":"crawl.started","id":"run_1","webhookId":"evt_1","data":[],"metadata":{}}';

  it('signs the exact body as X-Firecrawl-Signature: sha256=<hex HMAC-SHA256> with the account secret', () => {
    const h = firecrawlHeaders({ secret, body: fc, headers: null });
    expect(h).toEqual({
      'Content-Type': 'application/json',
      'X-Firecrawl-Signature': `sha256=${createHmac('sha256', secret).update(fc).digest('hex')}`,
    });
  });

  it('sends the webhook’s own headers, which cannot replace the content type, the signature or the framing', () => {
    const h = firecrawlHeaders({
      secret,
      body: fc,
      headers: {
        Authorization: 'Bearer receiver-token',
        'content-type': 'text/plain',
        'X-FIRECRAWL-SIGNATURE': 'sha256=forged',
        'Content-Length': '1',
        Host: 'elsewhere.test',
      },
    });
    expect(Object.keys(h).sort()).toEqual(['Authorization', 'Content-Type', 'X-Firecrawl-Signature']);
    expect(h.Authorization).toBe('Bearer receiver-token');
    expect(h['Content-Type']).toBe('application/json');
    expect(h['X-Firecrawl-Signature']).not.toBe('sha256=forged');
  });

  it('goes out unsigned without a secret, as Firecrawl does', () => {
    expect(firecrawlHeaders({ secret: null, body: fc, headers: { 'X-A': '1' } })).toEqual({
      'X-A': '1',
      'Content-Type': 'application/json',
    });
  });
});
