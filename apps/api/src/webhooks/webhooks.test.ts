import { randomBytes } from 'node:crypto';
import { type AppError, WebhooksService } from '@scrapejobs/domain';
import { DEVELOPMENT_SECRET_KEY, type Resolve, SecretBox } from '@scrapejobs/outbound';
import type { Express } from 'express';
import request from 'supertest';
import { buildTestApi } from '../../../../test/support/api.ts';
import { client } from '../../../../test/support/client.ts';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
import { testPrefix } from '../../../../test/support/redis.ts';

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let app: Express;
const prefix = testPrefix();
type Client = ReturnType<typeof client>;
let alice: Client;
let aliceLive: Client;
let bob: Client;

const ALL = ['jobs:read', 'jobs:write', 'webhooks:read', 'webhooks:write'] as const;
const token = async (email: string, mode: 'test' | 'live', scopes: readonly (typeof ALL)[number][] = ALL) =>
  (await api.keys.create({ email, mode, scopes: [...scopes], name: 'k' })).token;

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  app = api.app;
  alice = client(app, await token('alice@example.com', 'test'));
  aliceLive = client(app, await token('alice@example.com', 'live'));
  bob = client(app, await token('bob@example.com', 'test'));
});

afterAll(async () => {
  await api.close();
  await tdb.drop();
  await prefix.cleanup();
});

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
// A literal public address: classified without any DNS query, and never connected to here.
const PUBLIC_URL = 'https://93.184.215.14/hooks/scrape';
const SECRET = 'whsec-0123456789abcdef';
const valid = (over: Record<string, unknown> = {}) => ({
  url: PUBLIC_URL,
  events: ['job.completed', 'job.failed'],
  secret: SECRET,
  ...over,
});

async function createWebhook(c: Client = alice, over: Record<string, unknown> = {}) {
  const res = await c.post('/webhooks', valid(over));
  expect(res.status).toBe(201);
  return res.body as { webhook_id: string } & Record<string, unknown>;
}

describe('POST /webhooks', () => {
  it('creates an active webhook, never returning the secret', async () => {
    const res = await alice.post('/webhooks', valid({ description: 'orders pipeline' }));
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/webhooks/${res.body.webhook_id}`);
    expect(res.body).toEqual({
      webhook_id: expect.stringMatching(/^wh_[0-9A-Z]{26}$/),
      url: PUBLIC_URL,
      events: ['job.completed', 'job.failed'],
      description: 'orders pipeline',
      active: true,
      created_at: expect.stringMatching(ISO_MS),
    });
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
  });

  it('stores the secret sealed (AES-256-GCM bound to the webhook id), not in clear', async () => {
    const { webhook_id } = await createWebhook();
    const row = await tdb.db.webhook.findUniqueOrThrow({ where: { id: webhook_id } });
    expect(row.secretEncrypted).not.toContain(SECRET);
    expect(row.secretEncrypted).toMatch(/^v1\./);
    // No key configured in this app: the development key (a warning is logged at start).
    expect(new SecretBox(DEVELOPMENT_SECRET_KEY).open(row.secretEncrypted, webhook_id)).toBe(SECRET);
    expect(() => new SecretBox(randomBytes(32)).open(row.secretEncrypted, webhook_id)).toThrow();
  });

  it('defaults the description to null and accepts all four events once each', async () => {
    const events = ['job.completed', 'job.failed', 'job.started', 'job.paused'];
    const body = await createWebhook(alice, { events });
    expect(body.description).toBeNull();
    expect(body.events).toEqual(events);
  });

  const invalid: [string, unknown, Record<string, string>][] = [
    ['a missing url', { events: ['job.failed'], secret: SECRET }, { url: 'is required' }],
    ['a relative url', valid({ url: '/hooks' }), { url: 'must be an absolute http or https URL' }],
    ['an ftp url', valid({ url: 'ftp://93.184.215.14/x' }), { url: 'must be an absolute http or https URL' }],
    [
      'a url with spaces',
      valid({ url: 'https://93.184.215.14/a b' }),
      { url: 'must be an absolute http or https URL' },
    ],
    ['a url that is not a string', valid({ url: 42 }), { url: 'must be a string' }],
    [
      'a url over 2048 characters',
      valid({ url: `${PUBLIC_URL}/${'a'.repeat(2048)}` }),
      { url: 'must have at most 2048 characters' },
    ],
    ['no events', valid({ events: [] }), { events: 'must have at least 1 item' }],
    ['events not an array', valid({ events: 'job.failed' }), { events: 'must be an array' }],
    [
      'an unknown event',
      valid({ events: ['job.deleted'] }),
      {
        'events[0]':
          'must be one of job.completed, job.failed, job.started, job.paused, job.changed, job.degraded',
      },
    ],
    [
      'the test event',
      valid({ events: ['webhook.test'] }),
      {
        'events[0]':
          'must be one of job.completed, job.failed, job.started, job.paused, job.changed, job.degraded',
      },
    ],
    [
      'a repeated event',
      valid({ events: ['job.failed', 'job.failed'] }),
      { events: 'values must be unique' },
    ],
    [
      'seven events',
      valid({
        events: [
          'job.failed',
          'job.completed',
          'job.started',
          'job.paused',
          'job.changed',
          'job.degraded',
          'job.failed',
        ],
      }),
      { events: 'must have at most 6 items' },
    ],
    ['a missing secret', { url: PUBLIC_URL, events: ['job.failed'] }, { secret: 'is required' }],
    [
      'a 15-character secret',
      valid({ secret: 'x'.repeat(15) }),
      { secret: 'must have at least 16 characters' },
    ],
    [
      'a 257-character secret',
      valid({ secret: 'x'.repeat(257) }),
      { secret: 'must have at most 256 characters' },
    ],
    [
      'a description over 500 characters',
      valid({ description: 'd'.repeat(501) }),
      { description: 'must have at most 500 characters' },
    ],
    ['an unknown field', valid({ active: false }), { active: 'unknown field' }],
    ['a body that is not an object', ['x'], { body: 'must be an object' }],
  ];

  it.each(invalid)('refuses %s with 400 at the field', async (_name, body, details) => {
    const res = await alice.post('/webhooks', body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'validation_error', message: expect.any(String), details });
  });

  it('reports every schema violation at once', async () => {
    const res = await alice.post('/webhooks', { url: 'nope', events: [], secret: 'short', extra: 1 });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.details).sort()).toEqual(['events', 'extra', 'secret', 'url']);
  });

  it('requires https for live-mode keys, and accepts http for test-mode keys', async () => {
    const http = valid({ url: 'http://93.184.215.14/hook' });
    const live = await aliceLive.post('/webhooks', http);
    expect(live.status).toBe(400);
    expect(live.body.details).toEqual({ url: 'must be an https URL for a live-mode key' });
    expect((await aliceLive.post('/webhooks', valid())).status).toBe(201);
    expect((await alice.post('/webhooks', http)).status).toBe(201);
  });

  it.each([
    ['loopback', 'http://127.0.0.1:8080/hook', 'private'],
    ['localhost', 'http://localhost/hook', 'private'],
    ['IPv6 loopback', 'http://[::1]/hook', 'private'],
    ['an IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/hook', 'private'],
    ['a private range', 'http://10.1.2.3/hook', 'private'],
    ['CGNAT', 'http://100.64.0.1/hook', 'private'],
    ['link-local', 'http://169.254.1.1/hook', 'private'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data', 'metadata'],
    ['IPv6 cloud metadata', 'http://[fd00:ec2::254]/', 'metadata'],
  ])('refuses a %s target with 400 at url', async (_name, url, kind) => {
    const res = await alice.post('/webhooks', valid({ url }));
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({ url: expect.stringContaining(`must not target a ${kind} address`) });
  });

  it('allows loopback targets under ALLOW_PRIVATE_NETWORK_TARGETS, but never metadata', async () => {
    const service = new WebhooksService(tdb.db, { box: new SecretBox(randomBytes(32)), allowPrivate: true });
    const owner = { userId: (await tdb.db.user.findFirstOrThrow()).id, mode: 'test' as const };
    const input = { events: ['job.failed' as const], secret: SECRET, description: null };
    for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://[::1]:9/'])
      expect((await service.create(owner, { ...input, url })).active).toBe(true);
    await expect(service.create(owner, { ...input, url: 'http://169.254.169.254/' })).rejects.toMatchObject({
      status: 400,
      extra: { details: { url: expect.stringMatching(/metadata/) } },
    });
  });
});

describe('webhook host names', () => {
  // A fake resolver: no name is sent to a real DNS server.
  const zone: Record<string, string[]> = {
    'public.test': ['93.184.215.14'],
    'intranet.test': ['10.0.0.5'],
    'mixed.test': ['93.184.215.14', '192.168.1.20'],
    'imds.test': ['fd00:ec2::254'],
  };
  const resolve: Resolve = async (hostname) => {
    const found = zone[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

  it('refuses a name with the same text whether it resolves to a blocked address or to nothing', async () => {
    const service = new WebhooksService(tdb.db, {
      box: new SecretBox(randomBytes(32)),
      allowPrivate: false,
      resolve,
    });
    const owner = { userId: (await tdb.db.user.findFirstOrThrow()).id, mode: 'test' as const };
    const input = { events: ['job.failed' as const], secret: SECRET, description: null };
    for (const url of [
      'https://intranet.test/hook',
      'https://mixed.test/hook',
      'https://imds.test/hook',
      'https://nowhere.test/hook',
    ]) {
      const err = (await service.create(owner, { ...input, url }).catch((e: unknown) => e)) as AppError;
      expect([url, err.toBody()]).toEqual([
        url,
        {
          error: 'validation_error',
          message: expect.any(String),
          details: { url: 'must be a publicly reachable host' },
        },
      ]);
      expect(JSON.stringify(err.toBody())).not.toMatch(/10\.0\.0\.5|192\.168|fd00|ENOTFOUND|resolv|private/);
    }
    expect((await service.create(owner, { ...input, url: 'https://public.test/hook' })).active).toBe(true);
  });
});

describe('authentication and scopes', () => {
  it('answers 401 without a valid bearer token', async () => {
    const res = await request(app).get('/webhooks');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String), status: 401 });
    expect(
      (await request(app).post('/webhooks').set('Authorization', 'Bearer sk_test_nope').send(valid())).status,
    ).toBe(401);
  });

  it('needs webhooks:read to read and webhooks:write to change', async () => {
    const { webhook_id } = await createWebhook();
    const jobsOnly = client(app, await token('alice@example.com', 'test', ['jobs:read', 'jobs:write']));
    const readOnly = client(app, await token('alice@example.com', 'test', ['webhooks:read']));
    for (const res of [
      await jobsOnly.get('/webhooks'),
      await jobsOnly.get(`/webhooks/${webhook_id}`),
      await jobsOnly.get(`/webhooks/${webhook_id}/deliveries`),
      await readOnly.post('/webhooks', valid()),
      await readOnly.delete(`/webhooks/${webhook_id}`),
      await readOnly.post(`/webhooks/${webhook_id}/test`),
      await readOnly.post(`/webhooks/${webhook_id}/deliveries/dlv_00000000000000000000000000/resend`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', message: expect.any(String), status: 403 });
    }
    expect((await readOnly.get(`/webhooks/${webhook_id}`)).status).toBe(200);
    expect((await readOnly.get(`/webhooks/${webhook_id}/deliveries`)).status).toBe(200);
  });
});

describe('reading and deleting', () => {
  it('lists only the caller webhooks in the caller mode, newest first, with cursor paging', async () => {
    const dave = client(app, await token('dave@example.com', 'test'));
    const daveLive = client(app, await token('dave@example.com', 'live'));
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await createWebhook(dave, { description: `n${i}` })).webhook_id);
    await createWebhook(daveLive);
    await createWebhook(bob);
    const first = await dave.get('/webhooks?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.count).toBe(2);
    expect(first.body.webhooks.map((w: { webhook_id: string }) => w.webhook_id)).toEqual([ids[2], ids[1]]);
    const second = await dave.get(`/webhooks?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body).toEqual({
      webhooks: [expect.objectContaining({ webhook_id: ids[0], description: 'n0' })],
      count: 1,
      next_cursor: null,
    });
    expect((await daveLive.get('/webhooks')).body.count).toBe(1);
    expect((await dave.get('/webhooks?limit=0')).body.details).toEqual({ limit: 'must be at least 1' });
    expect((await dave.get('/webhooks?cursor=bogus')).status).toBe(400);
  });

  it('answers 404 for another user, the other mode, an unknown or malformed id', async () => {
    const { webhook_id } = await createWebhook();
    expect((await alice.get(`/webhooks/${webhook_id}`)).body.webhook_id).toBe(webhook_id);
    for (const [c, id] of [
      [bob, webhook_id],
      [aliceLive, webhook_id],
      [alice, 'wh_00000000000000000000000000'],
      [alice, 'not-an-id'],
    ] as const) {
      for (const res of [
        await c.get(`/webhooks/${id}`),
        await c.get(`/webhooks/${id}/deliveries`),
        await c.delete(`/webhooks/${id}`),
        await c.post(`/webhooks/${id}/test`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: 'not_found', message: 'Webhook not found.' });
      }
    }
    expect((await alice.get(`/webhooks/${webhook_id}`)).status).toBe(200);
  });

  it('deletes with 204, after which the webhook is gone', async () => {
    const { webhook_id } = await createWebhook();
    const res = await alice.delete(`/webhooks/${webhook_id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await alice.get(`/webhooks/${webhook_id}`)).status).toBe(404);
    expect((await alice.delete(`/webhooks/${webhook_id}`)).status).toBe(404);
  });

  it('answers 405 with Allow for another method on a webhook path', async () => {
    const { webhook_id } = await createWebhook();
    const res = await alice.put(`/webhooks/${webhook_id}`, valid());
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, DELETE');
  });

  it('describes every webhook endpoint in the OpenAPI document', async () => {
    const doc = (await request(app).get('/openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/webhooks',
        '/webhooks/{id}',
        '/webhooks/{id}/deliveries',
        '/webhooks/{id}/deliveries/{delivery_id}/resend',
        '/webhooks/{id}/test',
      ]),
    );
    expect(doc.paths['/webhooks'].post['x-scope']).toBe('webhooks:write');
  });
});

describe('test events, deliveries and resends', () => {
  it('queues a webhook.test event for this endpoint alone, through the outbox', async () => {
    const { webhook_id } = await createWebhook();
    const res = await alice.post(`/webhooks/${webhook_id}/test`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      delivery_id: expect.stringMatching(/^dlv_[0-9A-Z]{26}$/),
      webhook_id,
      event_id: expect.stringMatching(/^evt_[0-9A-Z]{26}$/),
      event: 'webhook.test',
      status: 'pending',
      attempts: 0,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
      attempt_log: [],
    });
    const event = await tdb.db.event.findUniqueOrThrow({ where: { id: res.body.event_id } });
    expect(event).toEqual(expect.objectContaining({ kind: 'webhook.test', jobId: null, dispatchedAt: null }));
    const delivery = await tdb.db.delivery.findUniqueOrThrow({ where: { id: res.body.delivery_id } });
    expect(JSON.parse(delivery.body)).toEqual({
      id: res.body.event_id,
      event: 'webhook.test',
      timestamp: event.createdAt.toISOString(),
      data: { webhook_id, message: expect.any(String) },
    });
  });

  it('lists deliveries newest first, each with its attempts newest first', async () => {
    const { webhook_id } = await createWebhook();
    const older = (await alice.post(`/webhooks/${webhook_id}/test`)).body;
    const newer = (await alice.post(`/webhooks/${webhook_id}/test`)).body;
    const at = new Date('2026-11-21T10:00:00.000Z');
    await tdb.db.deliveryAttempt.createMany({
      data: [
        {
          id: 'att_1',
          deliveryId: older.delivery_id,
          attempt: 1,
          statusCode: null,
          error: 'connection refused',
          durationMs: 3,
          createdAt: at,
        },
        {
          id: 'att_2',
          deliveryId: older.delivery_id,
          attempt: 2,
          statusCode: 500,
          error: null,
          durationMs: 12,
          createdAt: new Date(at.getTime() + 60_000),
        },
      ],
    });
    await tdb.db.delivery.update({
      where: { id: older.delivery_id },
      data: { attempts: 2, status: 'failed' },
    });
    const res = await alice.get(`/webhooks/${webhook_id}/deliveries`);
    expect(res.status).toBe(200);
    expect(res.body.webhook_id).toBe(webhook_id);
    expect(res.body.deliveries.map((d: { delivery_id: string }) => d.delivery_id)).toEqual([
      newer.delivery_id,
      older.delivery_id,
    ]);
    expect(res.body.deliveries[1]).toEqual(
      expect.objectContaining({
        status: 'failed',
        attempts: 2,
        attempt_log: [
          { attempt: 2, status_code: 500, error: null, duration_ms: 12, at: '2026-11-21T10:01:00.000Z' },
          {
            attempt: 1,
            status_code: null,
            error: 'connection refused',
            duration_ms: 3,
            at: '2026-11-21T10:00:00.000Z',
          },
        ],
      }),
    );
    const failed = await alice.get(`/webhooks/${webhook_id}/deliveries?status=failed&limit=1`);
    expect(failed.body).toEqual(expect.objectContaining({ count: 1, next_cursor: null }));
    expect((await alice.get(`/webhooks/${webhook_id}/deliveries?status=lost`)).status).toBe(400);
  });

  it('resends a failed delivery once (409 while pending or succeeded), through the outbox', async () => {
    const { webhook_id } = await createWebhook();
    const { delivery_id } = (await alice.post(`/webhooks/${webhook_id}/test`)).body;
    const path = `/webhooks/${webhook_id}/deliveries/${delivery_id}/resend`;
    const pending = await alice.post(path);
    expect(pending.status).toBe(409);
    expect(pending.body).toEqual({ error: 'conflict', message: expect.stringMatching(/pending/) });
    await tdb.db.delivery.update({ where: { id: delivery_id }, data: { status: 'succeeded', attempts: 1 } });
    expect((await alice.post(path)).status).toBe(409);

    await tdb.db.delivery.update({ where: { id: delivery_id }, data: { status: 'failed', attempts: 6 } });
    const res = await alice.post(path);
    expect(res.status).toBe(202);
    expect(res.body).toEqual(expect.objectContaining({ delivery_id, status: 'pending', attempts: 6 }));
    const commands = await tdb.db.event.findMany({ where: { kind: 'delivery.resend', userId: { not: '' } } });
    expect(commands.map((c) => c.data)).toContainEqual({ delivery_id, attempts: 6 });
    expect((await alice.post(path)).status).toBe(409);
  });

  it('answers 404 for a delivery of another webhook or an unknown delivery', async () => {
    const a = await createWebhook();
    const b = await createWebhook();
    const { delivery_id } = (await alice.post(`/webhooks/${a.webhook_id}/test`)).body;
    await tdb.db.delivery.update({ where: { id: delivery_id }, data: { status: 'failed' } });
    for (const path of [
      `/webhooks/${b.webhook_id}/deliveries/${delivery_id}/resend`,
      `/webhooks/${a.webhook_id}/deliveries/dlv_00000000000000000000000000/resend`,
      `/webhooks/${a.webhook_id}/deliveries/nope/resend`,
    ]) {
      const res = await alice.post(path);
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not_found');
    }
    expect((await bob.post(`/webhooks/${a.webhook_id}/deliveries/${delivery_id}/resend`)).status).toBe(404);
  });

  it('refuses test events and resends for a webhook deactivated by a 410', async () => {
    const { webhook_id } = await createWebhook();
    const { delivery_id } = (await alice.post(`/webhooks/${webhook_id}/test`)).body;
    await tdb.db.delivery.update({ where: { id: delivery_id }, data: { status: 'failed', attempts: 1 } });
    await tdb.db.webhook.update({ where: { id: webhook_id }, data: { active: false } });
    expect((await alice.get(`/webhooks/${webhook_id}`)).body.active).toBe(false);
    const test = await alice.post(`/webhooks/${webhook_id}/test`);
    expect(test.status).toBe(409);
    expect(test.body.message).toMatch(/inactive/);
    expect((await alice.post(`/webhooks/${webhook_id}/deliveries/${delivery_id}/resend`)).status).toBe(409);
  });
});
