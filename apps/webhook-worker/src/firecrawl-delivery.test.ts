import { createHmac, randomBytes } from 'node:crypto';
import { newId } from '@scrapejobs/db';
import { DeliveryStore, WebhooksService } from '@scrapejobs/domain';
import { createLogger } from '@scrapejobs/logging';
import { SecretBox } from '@scrapejobs/outbound';
import { DelayedError, type Job } from 'bullmq';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts';
import { DeliveryProcessor } from './delivery.ts';

// Attempts of a Firecrawl-style delivery (docs/api.md §18) against a real database, with a
// recording poster instead of HTTP: Firecrawl's headers, signed with the account's secret as it is now.
let tdb: TestDatabase;
const box = new SecretBox(randomBytes(32));
const posts: { url: string; body: string; headers: Record<string, string> }[] = [];
const poster = {
  async post(url: string, body: string, headers: Record<string, string>) {
    posts.push({ url, body, headers });
    return { statusCode: 500, error: null, durationMs: 2 };
  },
};
let processor: DeliveryProcessor;
let service: WebhooksService;

beforeAll(async () => {
  tdb = await createTestDatabase();
  processor = new DeliveryProcessor(new DeliveryStore(tdb.db.pool), poster, box, createLogger('t', 'silent'));
  service = new WebhooksService(tdb.db, { box, allowPrivate: false });
});
afterAll(() => tdb.drop());
beforeEach(() => {
  posts.length = 0;
});

const BODY =
  '{"success":true,"type":"crawl.started","id":"run_1","webhookId":"evt_1","data":[],"metadata":{"a":1}}';

/** A user with a crawl, its Firecrawl webhook (with headers) and a pending delivery of it. */
async function firecrawlDelivery(kind = 'crawl.started', events = ['job.started']) {
  const userId = newId('usr');
  await tdb.db.user.create({ data: { id: userId, email: `${userId}@x.test` } });
  const jobId = newId('job');
  await tdb.db.job.create({
    data: {
      id: jobId,
      userId,
      mode: 'test',
      name: 'crawl',
      source: 'https://s.test/',
      queries: [],
      rateLimit: 1,
    },
  });
  const webhookId = newId('wh');
  await tdb.db.webhook.create({
    data: {
      id: webhookId,
      userId,
      mode: 'test',
      url: 'https://93.184.215.14/hook',
      events,
      secretEncrypted: '',
      jobId,
      style: 'firecrawl',
      eventPrefix: 'crawl',
      headers: { Authorization: 'Bearer receiver', 'Content-Type': 'text/plain' },
      metadata: { a: 1 },
    },
  });
  const id = newId('dlv');
  await tdb.db.delivery.create({
    data: { id, webhookId, eventId: newId('evt'), eventKind: kind, body: BODY },
  });
  return { id, owner: { userId }, jobId, webhookId };
}

/** Times the queue entry of each delivery was moved to delayed (an attempt postponed, not made). */
const delayed = new Map<string, number>();
const job = (deliveryId: string, attemptsMade: number) =>
  ({
    name: 'deliver',
    id: deliveryId,
    data: { deliveryId },
    attemptsMade,
    opts: { attempts: 6 },
    moveToDelayed: async () => {
      delayed.set(deliveryId, (delayed.get(deliveryId) ?? 0) + 1);
    },
  }) as unknown as Job<{ deliveryId: string }>;

const hmac = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('a Firecrawl-style delivery', () => {
  it('sends the stored body with the webhook’s headers, signed with the account secret read at each attempt', async () => {
    const { id, owner } = await firecrawlDelivery();
    const first = await service.rotateFirecrawlSecret(owner);
    await expect(processor.process(job(id, 0), 'token')).rejects.toThrow('attempt 1 failed');
    const second = await service.rotateFirecrawlSecret(owner);
    await expect(processor.process(job(id, 1), 'token')).rejects.toThrow('attempt 2 failed');
    expect(posts.map((p) => p.body)).toEqual([BODY, BODY]);
    expect(posts[0]!.headers).toEqual({
      Authorization: 'Bearer receiver',
      'Content-Type': 'application/json',
      'X-Firecrawl-Signature': hmac(first, BODY),
    });
    // Rotated between attempts: the retry is signed with the new secret.
    expect(posts[1]!.headers['X-Firecrawl-Signature']).toBe(hmac(second, BODY));
    const d = await tdb.db.delivery.findUniqueOrThrow({ where: { id } });
    expect([d.status, d.attempts]).toEqual(['pending', 2]);
  });

  it('makes the account a secret at its first attempt when it has none (a crawl older than secrets), and signs with it', async () => {
    const { id, owner } = await firecrawlDelivery();
    expect(await tdb.db.firecrawlWebhookSecret.findUnique({ where: { userId: owner.userId } })).toBeNull();
    await expect(processor.process(job(id, 0), 'token')).rejects.toThrow('attempt 1 failed');
    const secret = await service.revealFirecrawlSecret(owner);
    expect(posts[0]!.headers).toEqual({
      Authorization: 'Bearer receiver',
      'Content-Type': 'application/json',
      'X-Firecrawl-Signature': hmac(secret, BODY),
    });
  });

  it('records a failed attempt, sending nothing, when the secret cannot be opened (another server key)', async () => {
    const { id, owner } = await firecrawlDelivery();
    await new WebhooksService(tdb.db, {
      box: new SecretBox(randomBytes(32)),
      allowPrivate: false,
    }).rotateFirecrawlSecret(owner);
    await expect(processor.process(job(id, 0), 'token')).rejects.toThrow('cannot be opened');
    expect(posts).toEqual([]);
  });
});

describe('a crawl’s terminal delivery', () => {
  const terminal = () =>
    firecrawlDelivery('crawl.completed', ['job.started', 'firecrawl.page', 'job.completed', 'job.failed']);

  it('waits, without an attempt, while a page event of its job is not yet fanned out or a page delivery is pending', async () => {
    const { id, owner, jobId, webhookId } = await terminal();
    await service.rotateFirecrawlSecret(owner);
    const eventId = newId('evt');
    await tdb.db.event.create({
      data: { id: eventId, userId: owner.userId, mode: 'test', jobId, kind: 'firecrawl.page', data: {} },
    });
    await expect(processor.process(job(id, 0), 'token')).rejects.toThrow(DelayedError);
    // Fanned out: its delivery is pending, through its first attempt and its retries.
    await tdb.db.event.update({ where: { id: eventId }, data: { dispatchedAt: new Date() } });
    const page = newId('dlv');
    await tdb.db.delivery.create({
      data: { id: page, webhookId, eventId, eventKind: 'crawl.page', body: BODY, attempts: 2 },
    });
    await expect(processor.process(job(id, 0), 'token')).rejects.toThrow(DelayedError);
    expect([posts, delayed.get(id)]).toEqual([[], 2]);
    expect((await tdb.db.delivery.findUniqueOrThrow({ where: { id } })).attempts).toBe(0);
    // The page delivered (or given up on): the terminal event goes.
    await tdb.db.delivery.update({ where: { id: page }, data: { status: 'succeeded' } });
    await expect(processor.process(job(id, 0), 'token')).rejects.toThrow('attempt 1 failed');
    expect(posts.map((p) => p.body)).toEqual([BODY]);
  });

  it('does not wait for the page events of a webhook that did not ask for pages', async () => {
    const { id, owner, jobId } = await firecrawlDelivery('crawl.completed', ['job.completed']);
    await tdb.db.event.create({
      data: { id: newId('evt'), userId: owner.userId, mode: 'test', jobId, kind: 'firecrawl.page', data: {} },
    });
    await expect(processor.process(job(id, 0), 'token')).rejects.toThrow('attempt 1 failed');
    expect(posts).toHaveLength(1);
  });
});
