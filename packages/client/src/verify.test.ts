// verifyWebhook against signatures made by independent implementations of both schemes of
// docs/api.md §6: the Standard Webhooks library and GitHub's (Octokit's) sha256= signer.
// client.test.ts verifies a real delivery of the webhook worker as well.
import { sign } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, type WebhookHeaders, WebhookVerificationError } from './index.ts';

const SECRET = 'verify-test-secret-0123456789';
const BODY = JSON.stringify({
  id: 'evt_01',
  event: 'job.completed',
  timestamp: '2026-11-21T10:00:05.123Z',
  data: { job_id: 'job_01', job_name: 'Prices — €', results_count: 3 },
});
const NOW = new Date('2026-11-21T10:00:06.000Z');

/** The headers the service sends with BODY, signed at `at`. */
async function signedHeaders(at = NOW, body = BODY, secret = SECRET): Promise<Record<string, string>> {
  return {
    'content-type': 'application/json',
    'x-service-signature': await sign(secret, body),
    'webhook-id': 'evt_01',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).sign('evt_01', at, body),
  };
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    return err.code;
  }
  throw new Error('the delivery was accepted');
}

describe('verifyWebhook', () => {
  it('accepts a Standard Webhooks signature, from a string or bytes, with headers in any form', async () => {
    const headers = await signedHeaders();
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    const forms: [string | Uint8Array, WebhookHeaders][] = [
      [BODY, headers],
      [Buffer.from(BODY, 'utf8'), upper],
      [new Uint8Array(Buffer.from(BODY, 'utf8')), new Headers(headers)],
    ];
    for (const [body, h] of forms)
      expect(verifyWebhook(body, h, SECRET, { now: NOW })).toEqual(JSON.parse(BODY));
  });

  it('accepts any one of several signatures, as sent while a secret is rotated', async () => {
    const headers = await signedHeaders();
    const old = (await signedHeaders(NOW, BODY, 'an-older-secret-0123456789'))['webhook-signature'];
    const both = { ...headers, 'webhook-signature': `${old} ${headers['webhook-signature']}` };
    expect(verifyWebhook(BODY, both, SECRET, { now: NOW }).id).toBe('evt_01');
  });

  it('refuses a timestamp outside the tolerance either way, 5 minutes unless told', async () => {
    const at = (seconds: number) => signedHeaders(new Date(NOW.getTime() + seconds * 1000));
    for (const seconds of [-299, 299])
      expect(verifyWebhook(BODY, await at(seconds), SECRET, { now: NOW }).id).toBe('evt_01');
    for (const seconds of [-301, 301]) {
      const headers = await at(seconds);
      expect(refusal(() => verifyWebhook(BODY, headers, SECRET, { now: NOW }))).toBe(
        'timestamp_out_of_tolerance',
      );
    }
    const old = await at(-3600);
    expect(refusal(() => verifyWebhook(BODY, old, SECRET, { now: NOW, toleranceSeconds: 3599 }))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(verifyWebhook(BODY, old, SECRET, { now: NOW, toleranceSeconds: 3600 }).id).toBe('evt_01');
  });

  it('checks X-Service-Signature with scheme service, or with any when the Standard Webhooks headers are absent', async () => {
    const { 'x-service-signature': signature } = await signedHeaders();
    const only = { 'x-service-signature': signature! };
    expect(verifyWebhook(BODY, only, SECRET, { scheme: 'service' }).event).toBe('job.completed');
    expect(verifyWebhook(BODY, only, SECRET, { scheme: 'any' }).event).toBe('job.completed');
    // The default needs the replay-proof scheme.
    expect(refusal(() => verifyWebhook(BODY, only, SECRET))).toBe('missing_signature');
    expect(refusal(() => verifyWebhook(`${BODY} `, only, SECRET, { scheme: 'service' }))).toBe(
      'invalid_signature',
    );
  });

  it('refuses missing, malformed and wrongly keyed signatures, and a body that is not JSON', async () => {
    const headers = await signedHeaders();
    const without = (name: string) => Object.fromEntries(Object.entries(headers).filter(([k]) => k !== name));
    const opts = { now: NOW };
    expect(refusal(() => verifyWebhook(BODY, without('webhook-id'), SECRET, opts))).toBe('missing_signature');
    expect(refusal(() => verifyWebhook(BODY, without('webhook-timestamp'), SECRET, opts))).toBe(
      'missing_signature',
    );
    for (const signature of ['v1,', 'v1,AAAA', 'v2,abc', 'garbage'])
      expect(
        refusal(() => verifyWebhook(BODY, { ...headers, 'webhook-signature': signature }, SECRET, opts)),
      ).toBe('invalid_signature');
    for (const signature of ['sha256=', 'sha256=zz', `sha1=${'0'.repeat(40)}`, `sha256=${'0'.repeat(64)}`])
      expect(
        refusal(() =>
          verifyWebhook(BODY, { 'x-service-signature': signature }, SECRET, { scheme: 'service' }),
        ),
      ).toBe('invalid_signature');
    expect(refusal(() => verifyWebhook(BODY, headers, 'another-secret-0123456789', opts))).toBe(
      'invalid_signature',
    );
    expect(
      refusal(() => verifyWebhook(BODY, { ...headers, 'webhook-timestamp': 'soon' }, SECRET, opts)),
    ).toBe('timestamp_out_of_tolerance');

    const notJson = 'not json';
    const signedNotJson = await signedHeaders(NOW, notJson);
    expect(refusal(() => verifyWebhook(notJson, signedNotJson, SECRET, opts))).toBe('invalid_body');
    expect(() => verifyWebhook(JSON.parse(BODY), headers, SECRET, opts)).toThrow(TypeError);
  });
});
