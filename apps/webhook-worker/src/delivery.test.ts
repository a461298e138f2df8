import { randomBytes } from 'node:crypto';
import { newId } from '@scrapejobs/db';
import { DeliveryStore } from '@scrapejobs/domain';
import { createLogger } from '@scrapejobs/logging';
import { SecretBox } from '@scrapejobs/outbound';
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts';
import { DeliveryAttemptError, DeliveryProcessor } from './delivery.ts';
import type { PostResult } from './http-post.ts';

// The processor against a real database, with a recording poster instead of HTTP.
let tdb: TestDatabase;
const box = new SecretBox(randomBytes(32));
const posts: { url: string; headers: Record<string, string> }[] = [];
let answer: PostResult = { statusCode: 200, error: null, durationMs: 3 };
const poster = {
  async post(url: string, _body: string, headers: Record<string, string>) {
    posts.push({ url, headers });
    return answer;
  },
};
let processor: DeliveryProcessor;

beforeAll(async () => {
  tdb = await createTestDatabase();
  processor = new DeliveryProcessor(new DeliveryStore(tdb.db.pool), poster, box, createLogger('t', 'silent'));
});
afterAll(() => tdb.drop());
beforeEach(() => {
  posts.length = 0;
  answer = { statusCode: 200, error: null, durationMs: 3 };
});

async function delivery(over: { attempts?: number; status?: 'pending' | 'failed'; active?: boolean } = {}) {
  const user = await tdb.db.user.create({ data: { id: newId('usr'), email: `${newId('usr')}@x.test` } });
  const webhookId = newId('wh');
  await tdb.db.webhook.create({
    data: {
      id: webhookId,
      userId: user.id,
      mode: 'test',
      url: 'http://127.0.0.1:9/hook',
      events: ['job.paused'],
      secretEncrypted: box.seal('secret-0123456789', webhookId),
      active: over.active ?? true,
    },
  });
  const id = newId('dlv');
  await tdb.db.delivery.create({
    data: {
      id,
      webhookId,
      eventId: newId('evt'),
      eventKind: 'job.paused',
      body: '{"id":"evt"}',
      status: over.status ?? 'pending',
      attempts: over.attempts ?? 0,
    },
  });
  return { id, webhookId };
}

const job = (
  deliveryId: string,
  attemptsMade: number,
  moved: number[] = [],
  entry: { name: string; id: string; attempts: number } = { name: 'deliver', id: deliveryId, attempts: 6 },
) =>
  ({
    name: entry.name,
    id: entry.id,
    data: { deliveryId },
    attemptsMade,
    opts: { attempts: entry.attempts },
    moveToDelayed: async (at: number) => {
      moved.push(at);
    },
  }) as unknown as Job<{ deliveryId: string }>;

const row = (id: string) =>
  tdb.db.delivery.findUniqueOrThrow({ where: { id }, include: { attemptLog: true } });

describe('DeliveryProcessor', () => {
  it('sends attempt n+1 signed, records it and completes the delivery', async () => {
    const { id } = await delivery({ attempts: 2 });
    expect(await processor.process(job(id, 2), 'token')).toBe('succeeded');
    expect(posts[0]!.headers['X-Service-Delivery-Attempt']).toBe('3');
    const d = await row(id);
    expect([d.status, d.attempts, d.attemptLog.map((a) => [a.attempt, a.statusCode])]).toEqual([
      'succeeded',
      3,
      [[3, 200]],
    ]);
  });

  it('numbers the attempts of a continuation entry after those recorded before it', async () => {
    const { id } = await delivery({ attempts: 2 });
    const entry = { name: 'continue', id: `${id}-c2`, attempts: 4 };
    answer = { statusCode: 500, error: null, durationMs: 1 };
    await expect(processor.process(job(id, 0, [], entry), 'token')).rejects.toBeInstanceOf(
      DeliveryAttemptError,
    );
    answer = { statusCode: 200, error: null, durationMs: 1 };
    expect(await processor.process(job(id, 1, [], entry), 'token')).toBe('succeeded');
    expect(posts.map((p) => p.headers['X-Service-Delivery-Attempt'])).toEqual(['3', '4']);
    const d = await row(id);
    expect([d.status, d.attempts]).toEqual(['succeeded', 4]);
  });

  it('fails a continuation for good at the sixth attempt', async () => {
    const { id } = await delivery({ attempts: 4 });
    answer = { statusCode: 500, error: null, durationMs: 1 };
    const entry = { name: 'continue', id: `${id}-c4`, attempts: 2 };
    await expect(processor.process(job(id, 0, [], entry), 'token')).rejects.toBeInstanceOf(
      DeliveryAttemptError,
    );
    await expect(processor.process(job(id, 1, [], entry), 'token')).rejects.toBeInstanceOf(
      UnrecoverableError,
    );
    expect(posts.map((p) => p.headers['X-Service-Delivery-Attempt'])).toEqual(['5', '6']);
    const d = await row(id);
    expect([d.status, d.attempts]).toEqual(['failed', 6]);
  });

  it('makes no attempt for a queue entry that does not match the delivery state', async () => {
    const done = await delivery({ status: 'failed', attempts: 6 });
    const ahead = await delivery({ attempts: 3 });
    expect(await processor.process(job(done.id, 0), 'token')).toBe('skipped');
    expect(await processor.process(job(ahead.id, 1), 'token')).toBe('skipped');
    expect(await processor.process(job(newId('dlv'), 0), 'token')).toBe('skipped');
    expect(posts).toHaveLength(0);
  });

  it('lets the queue schedule the retry of an attempt recorded just before a crash, without sending again', async () => {
    const { id } = await delivery({ attempts: 1 });
    await expect(processor.process(job(id, 0), 'token')).rejects.toBeInstanceOf(DeliveryAttemptError);
    expect(posts).toHaveLength(0);
    expect((await row(id)).attempts).toBe(1);
  });

  it('fails the last attempt for good, and a 410 at once, deactivating the webhook', async () => {
    answer = { statusCode: 500, error: null, durationMs: 1 };
    const last = await delivery({ attempts: 5 });
    await expect(processor.process(job(last.id, 5), 'token')).rejects.toBeInstanceOf(UnrecoverableError);
    expect((await row(last.id)).status).toBe('failed');
    answer = { statusCode: 410, error: null, durationMs: 1 };
    const gone = await delivery();
    await expect(processor.process(job(gone.id, 0), 'token')).rejects.toBeInstanceOf(UnrecoverableError);
    expect((await row(gone.id)).status).toBe('failed');
    expect((await tdb.db.webhook.findUniqueOrThrow({ where: { id: gone.webhookId } })).active).toBe(false);
  });

  it('ends a delivery of an inactive webhook without an attempt', async () => {
    const { id } = await delivery({ active: false });
    expect(await processor.process(job(id, 0), 'token')).toBe('skipped');
    expect(posts).toHaveLength(0);
    const d = await row(id);
    expect([d.status, d.attempts]).toEqual(['failed', 0]);
  });

  it('records an attempt without sending when the secret cannot be opened (wrong key)', async () => {
    const other = new DeliveryProcessor(
      new DeliveryStore(tdb.db.pool),
      poster,
      new SecretBox(randomBytes(32)),
      createLogger('t', 'silent'),
    );
    const { id } = await delivery();
    await expect(other.process(job(id, 0), 'token')).rejects.toBeInstanceOf(DeliveryAttemptError);
    expect(posts).toHaveLength(0);
    expect((await row(id)).attemptLog[0]?.error).toMatch(/secret cannot be opened/);
  });

  it('postpones without using an attempt when the database fails', async () => {
    const broken = new DeliveryProcessor(
      { load: () => Promise.reject(new Error('Connection terminated')) } as unknown as DeliveryStore,
      poster,
      box,
      createLogger('t', 'silent'),
    );
    const moved: number[] = [];
    const before = Date.now();
    await expect(broken.process(job('dlv_x', 0, moved), 'token')).rejects.toBeInstanceOf(DelayedError);
    expect(moved[0]).toBeGreaterThanOrEqual(before + 5_000);
    expect(posts).toHaveLength(0);
  });
});
