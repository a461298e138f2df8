import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TEST_EVENT } from '@scrapejobs/contracts';
import { newId, type Prisma } from '@scrapejobs/db';
import { DeliveryStore, LostDeliverySweep, OutboxFanOut } from '@scrapejobs/domain';
import { createLogger } from '@scrapejobs/logging';
import { SecretBox } from '@scrapejobs/outbound';
import { catalog, createQueue } from '@scrapejobs/queues';
import { UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts';
import { REDIS_URL, testPrefix } from '../../../test/support/redis.ts';
import { DeliveryProcessor, retryBackoff } from './delivery.ts';
import { WebhookPoster } from './http-post.ts';

// Real PostgreSQL and Redis, a BullMQ worker in this process and a receiver on 127.0.0.1.
const DELAYS = [60_000, 300_000, 1_800_000, 7_200_000, 86_400_000];
const GRACE_MS = 60_000;
const box = new SecretBox(randomBytes(32));
const prefix = testPrefix();
let tdb: TestDatabase;
let redis: Redis;
let queue: ReturnType<typeof createQueue<'webhookDeliveries'>>;
let receiver: Server;
let receiverUrl: string;
const hits: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase();
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  queue = createQueue('webhookDeliveries', redis, prefix.prefix);
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push(req.headers);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  receiver.closeAllConnections();
  receiver.close();
  await queue.close();
  redis.disconnect();
  await tdb.drop();
  await prefix.cleanup();
});

beforeEach(async () => {
  hits.length = 0;
  await queue.obliterate({ force: true });
  await tdb.db.event.deleteMany();
  await tdb.db.delivery.deleteMany();
});

const sweep = (opts: { batchSize?: number } = {}) =>
  new LostDeliverySweep(tdb.db.pool, queue, { retryDelays: DELAYS, graceMs: GRACE_MS, ...opts });
/** A moment after every row written by the test has passed its grace period. */
const later = () => Date.now() + 2 * GRACE_MS;

async function webhook() {
  const user = await tdb.db.user.create({ data: { id: newId('usr'), email: `${newId('usr')}@x.test` } });
  const id = newId('wh');
  await tdb.db.webhook.create({
    data: {
      id,
      userId: user.id,
      mode: 'test',
      url: receiverUrl,
      events: ['job.paused'],
      secretEncrypted: box.seal('secret-0123456789', id),
    },
  });
  return { id, userId: user.id };
}

async function delivery(over: { attempts?: number; kind?: string; updatedAt?: Date } = {}) {
  const { id: webhookId } = await webhook();
  const id = newId('dlv');
  await tdb.db.delivery.create({
    data: {
      id,
      webhookId,
      eventId: newId('evt'),
      eventKind: over.kind ?? 'job.paused',
      body: '{"id":"evt"}',
      status: 'pending',
      attempts: over.attempts ?? 0,
      updatedAt: over.updatedAt ?? new Date(),
    },
  });
  return id;
}

/** Runs queue entries through the real processor and poster until `done` holds. */
async function deliverUntil(done: () => Promise<boolean>) {
  const poster = new WebhookPoster({ timeoutMs: 2_000, allowPrivate: true, maxSockets: 4 });
  const processor = new DeliveryProcessor(
    new DeliveryStore(tdb.db.pool),
    poster,
    box,
    createLogger('t', 'silent'),
  );
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const worker = new Worker(catalog.webhookDeliveries.name, (job, token) => processor.process(job, token), {
    connection,
    prefix: prefix.prefix,
    settings: { backoffStrategy: retryBackoff(DELAYS) },
  });
  try {
    const deadline = Date.now() + 10_000;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error('not delivered within 10 s');
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await worker.close();
    connection.disconnect();
    poster.close();
  }
}

const statusOf = async (id: string) => (await tdb.db.delivery.findUniqueOrThrow({ where: { id } })).status;

describe('LostDeliverySweep', () => {
  it('queues again a fanned-out delivery whose queue entry was lost, and the receiver gets it once', async () => {
    const { userId } = await webhook();
    await tdb.db.event.create({
      data: {
        id: newId('evt'),
        userId,
        mode: 'test',
        kind: 'job.paused',
        data: { job_id: 'job_1', job_name: 'N', status: 'paused' } as Prisma.InputJsonObject,
      },
    });
    expect(await new OutboxFanOut(tdb.db.pool, queue, 100).runOnce()).toBe(1);
    const [d] = await tdb.db.delivery.findMany();
    expect(await sweep().runOnce(later())).toEqual([]);

    // Redis loses the entry (a restart without AOF); the event is already marked dispatched.
    await queue.remove(d!.id);
    expect(await queue.getJobState(d!.id)).toBe('unknown');
    // Two workers sweep at once: one entry, under the delivery id, with the delivery's six attempts.
    const [a, b] = await Promise.all([sweep().runOnce(later()), sweep().runOnce(later())]);
    expect([...a, ...b]).toContain(d!.id);
    const waiting = await queue.getJobs(['waiting', 'delayed', 'prioritized']);
    expect(waiting.map((j) => [j.id, j.name, j.opts.attempts])).toEqual([[d!.id, 'deliver', 6]]);

    await deliverUntil(async () => (await statusOf(d!.id)) === 'succeeded');
    expect(await sweep().runOnce(later())).toEqual([]);
    await new Promise((r) => setTimeout(r, 300));
    expect(hits.map((h) => [h['x-service-event-id'], h['x-service-delivery-attempt']])).toEqual([
      [d!.eventId, '1'],
    ]);
  });

  it('leaves a delivery alone while its entry waits, is delayed for a retry or within the grace period', async () => {
    const fresh = await delivery();
    const backoff = await delivery({ attempts: 2, updatedAt: new Date(Date.now() - 10 * GRACE_MS) });
    const waiting = await delivery({ updatedAt: new Date(Date.now() - 10 * GRACE_MS) });
    await queue.add('deliver', { deliveryId: backoff }, { jobId: backoff, delay: 3_600_000 });
    await queue.add('deliver', { deliveryId: waiting }, { jobId: waiting });
    // `fresh` has no entry, but is younger than the grace period.
    expect(await sweep().runOnce(Date.now())).toEqual([]);
    expect(await sweep().runOnce(later())).toEqual([fresh]);
  });

  it('continues the retries of a delivery whose delayed entry was lost, from its recorded attempts', async () => {
    const failedAt = Date.now() - 100_000;
    const id = await delivery({ attempts: 2, updatedAt: new Date(failedAt) });
    const now = Date.now();
    expect(await sweep().runOnce(now)).toEqual([id]);
    const [job] = await queue.getJobs(['delayed']);
    expect([job?.id, job?.name, job?.opts.attempts]).toEqual([`${id}-c2`, 'continue', 4]);
    // The second retry is due DELAYS[1] after the failure, not after the sweep.
    expect(job!.opts.delay).toBe(failedAt + DELAYS[1]! - now);
    expect(await sweep().runOnce(later())).toEqual([]);

    await job!.promote();
    await deliverUntil(async () => (await statusOf(id)) === 'succeeded');
    expect(hits.map((h) => h['x-service-delivery-attempt'])).toEqual(['3']);
    const attempts = await tdb.db.deliveryAttempt.findMany({ where: { deliveryId: id } });
    expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([[3, 200]]);
  });

  it('queues a lost resend, or a lost test event, as the single attempt it was', async () => {
    const resent = await delivery({ attempts: 6 });
    const test = await delivery({ kind: TEST_EVENT });
    const testResent = await delivery({ kind: TEST_EVENT, attempts: 1 });
    expect((await sweep().runOnce(later())).sort()).toEqual([resent, test, testResent].sort());
    const jobs = await queue.getJobs(['waiting', 'prioritized']);
    expect(jobs.map((j) => [j.id, j.name, j.opts.attempts]).sort()).toEqual(
      [
        [`${resent}-r6`, 'resend', 1],
        [test, 'deliver', 1],
        [`${testResent}-r1`, 'resend', 1],
      ].sort(),
    );
  });

  it('replaces an entry that ended while its delivery stayed pending', async () => {
    const id = await delivery({ attempts: 1, updatedAt: new Date(Date.now() - 10 * GRACE_MS) });
    await queue.add('continue', { deliveryId: id }, { jobId: `${id}-c1`, attempts: 5 });
    // An entry failed by BullMQ itself (its worker lost the lock too often): the row is untouched.
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const w = new Worker(catalog.webhookDeliveries.name, null, {
      connection,
      prefix: prefix.prefix,
    });
    const token = 'lost-lock';
    const taken = await w.getNextJob(token);
    await taken!.moveToFailed(new UnrecoverableError('job stalled more than allowable limit'), token, false);
    await w.close();
    connection.disconnect();
    expect(await queue.getJobState(`${id}-c1`)).toBe('failed');

    expect(await sweep().runOnce(later())).toEqual([id]);
    // Its retry was due long ago: the new entry waits for a worker at once.
    expect(await queue.getJobState(`${id}-c1`)).toBe('waiting');
  });

  it('reads the pending deliveries in turns of one batch, starting over at the end', async () => {
    const old = (n: number) => new Date(Date.now() - (10 - n) * GRACE_MS);
    const ids = [await delivery({ updatedAt: old(1) }), await delivery({ updatedAt: old(2) })];
    ids.push(await delivery({ updatedAt: old(3) }));
    const s = sweep({ batchSize: 2 });
    expect(await s.runOnce(later())).toEqual(ids.slice(0, 2));
    expect(await s.runOnce(later())).toEqual(ids.slice(2));
    await queue.obliterate({ force: true });
    expect(await s.runOnce(later())).toEqual(ids.slice(0, 2));
  });
});
