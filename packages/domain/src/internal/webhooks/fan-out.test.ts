import { RESEND_COMMAND, TEST_EVENT } from '@scrapejobs/contracts';
import { isId, type Mode, newId, type Prisma } from '@scrapejobs/db';
import { createQueue } from '@scrapejobs/queues';
import { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '../../../../../test/support/database.ts';
import { REDIS_URL, testPrefix } from '../../../../../test/support/redis.ts';
import { type DeliveryQueue, OutboxFanOut } from './fan-out.ts';

let tdb: TestDatabase;
const prefix = testPrefix();
let redis: Redis;
let queue: ReturnType<typeof createQueue<'webhookDeliveries'>>;

beforeAll(async () => {
  tdb = await createTestDatabase();
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  queue = createQueue('webhookDeliveries', redis, prefix.prefix);
});

afterAll(async () => {
  await queue.close();
  redis.disconnect();
  await tdb.drop();
  await prefix.cleanup();
});

beforeEach(async () => {
  await queue.obliterate({ force: true });
  await tdb.db.event.deleteMany();
  await tdb.db.delivery.deleteMany();
});

const user = async () =>
  (await tdb.db.user.create({ data: { id: newId('usr'), email: `${newId('usr')}@x.test` } })).id;

async function webhook(userId: string, mode: Mode, events: string[], active = true) {
  const id = newId('wh');
  await tdb.db.webhook.create({
    data: { id, userId, mode, url: 'https://93.184.215.14/', events, secretEncrypted: 'sealed', active },
  });
  return id;
}

/** An outbox row as JobsService writes it. */
async function event(userId: string, mode: Mode, kind: string, data: Record<string, unknown>) {
  const createdAt = new Date();
  const row = await tdb.db.event.create({
    data: {
      id: newId('evt', createdAt.getTime()),
      userId,
      mode,
      jobId: 'job_x',
      kind,
      data: data as Prisma.InputJsonObject,
      createdAt,
    },
  });
  return row;
}

const paused = (n = 0) => ({ job_id: `job_${n}`, job_name: 'Example', status: 'paused' });
const queuedIds = async () =>
  (await queue.getJobs(['waiting', 'delayed', 'prioritized'])).map((j) => j.id).sort();
const deliveries = () => tdb.db.delivery.findMany({ orderBy: { id: 'asc' } });

describe('OutboxFanOut', () => {
  it('makes one delivery per subscribed active webhook of the event owner and mode, queued under its id', async () => {
    const [u, other] = [await user(), await user()];
    const all = await webhook(u, 'test', ['job.paused', 'job.started']);
    const pausedOnly = await webhook(u, 'test', ['job.paused']);
    await webhook(u, 'test', ['job.completed']);
    await webhook(u, 'live', ['job.paused']);
    await webhook(u, 'test', ['job.paused'], false);
    await webhook(other, 'test', ['job.paused']);
    const e = await event(u, 'test', 'job.paused', paused());
    const fanOut = new OutboxFanOut(tdb.db.pool, queue, 100);
    expect(await fanOut.runOnce()).toBe(1);
    const rows = await deliveries();
    expect(rows.map((d) => d.webhookId).sort()).toEqual([all, pausedOnly].sort());
    expect(rows.every((d) => d.eventId === e.id && d.status === 'pending' && d.attempts === 0)).toBe(true);
    expect(rows.every((d) => isId('dlv', d.id))).toBe(true);
    expect(await queuedIds()).toEqual(rows.map((d) => d.id).sort());
    const job = await queue.getJob(rows[0]!.id);
    expect(job?.opts.attempts).toBe(6);
    expect((await tdb.db.event.findUniqueOrThrow({ where: { id: e.id } })).dispatchedAt).not.toBeNull();
    expect(await fanOut.runOnce()).toBe(0);
  });

  it('stores the envelope once, data keys in the documented order, whatever order jsonb keeps', async () => {
    const u = await user();
    await webhook(u, 'test', ['job.started']);
    await webhook(u, 'test', ['job.started']);
    const data = { trigger: 'manual', status: 'running', run_id: 'run_1', job_name: 'N', job_id: 'job_1' };
    const e = await event(u, 'test', 'job.started', data);
    await new OutboxFanOut(tdb.db.pool, queue, 100).runOnce();
    const bodies = (await deliveries()).map((d) => d.body);
    expect(bodies[0]).toBe(
      `{"id":"${e.id}","event":"job.started","timestamp":"${e.createdAt.toISOString()}",` +
        '"data":{"job_id":"job_1","job_name":"N","run_id":"run_1","status":"running","trigger":"manual"}}',
    );
    expect(bodies[1]).toBe(bodies[0]);
  });

  it('leaves the events of a pass that failed to queue for the next pass, which queues each delivery once', async () => {
    const u = await user();
    for (let i = 0; i < 3; i++) await webhook(u, 'test', ['job.paused']);
    for (let i = 0; i < 4; i++) await event(u, 'test', 'job.paused', paused(i));
    // Redis goes away half-way through adding: some entries exist, the pass fails.
    const flaky: DeliveryQueue = {
      async addBulk(jobs) {
        await queue.addBulk(jobs.slice(0, 5));
        throw new Error('Connection is closed.');
      },
    };
    await expect(new OutboxFanOut(tdb.db.pool, flaky, 100).runOnce()).rejects.toThrow(
      'Connection is closed.',
    );
    expect(await tdb.db.event.count({ where: { dispatchedAt: null } })).toBe(4);
    const first = await deliveries();
    expect(first).toHaveLength(12);

    expect(await new OutboxFanOut(tdb.db.pool, queue, 100).runOnce()).toBe(4);
    expect((await deliveries()).map((d) => d.id)).toEqual(first.map((d) => d.id));
    expect(await queuedIds()).toEqual(first.map((d) => d.id).sort());
    expect(await tdb.db.event.count({ where: { dispatchedAt: null } })).toBe(0);
  });

  it('does not queue a delivery again once its first attempt was made', async () => {
    const u = await user();
    await webhook(u, 'test', ['job.paused']);
    await event(u, 'test', 'job.paused', paused());
    // The pass queues, then dies before marking the event dispatched.
    const dies: DeliveryQueue = {
      async addBulk(jobs) {
        await queue.addBulk(jobs);
        throw new Error('killed');
      },
    };
    await expect(new OutboxFanOut(tdb.db.pool, dies, 100).runOnce()).rejects.toThrow('killed');
    const [d] = await deliveries();
    // Meanwhile the entry ran and was removed from Redis; the delivery has moved on.
    await queue.obliterate({ force: true });
    await tdb.db.delivery.update({ where: { id: d!.id }, data: { attempts: 1 } });
    expect(await new OutboxFanOut(tdb.db.pool, queue, 100).runOnce()).toBe(1);
    expect(await queuedIds()).toEqual([]);
    expect(await deliveries()).toHaveLength(1);
  });

  it('lets concurrent passes split the outbox without duplicates (SKIP LOCKED)', async () => {
    const u = await user();
    for (let i = 0; i < 2; i++) await webhook(u, 'test', ['job.paused']);
    for (let i = 0; i < 60; i++) await event(u, 'test', 'job.paused', paused(i));
    const passes = Array.from({ length: 4 }, () => new OutboxFanOut(tdb.db.pool, queue, 10));
    let total = 0;
    for (;;) {
      const counts = await Promise.all(passes.map((p) => p.runOnce()));
      total += counts.reduce((a, b) => a + b, 0);
      if (counts.every((c) => c === 0)) break;
    }
    expect(total).toBe(60);
    const rows = await deliveries();
    expect(rows).toHaveLength(120);
    expect(await queuedIds()).toEqual(rows.map((d) => d.id).sort());
  });

  it('queues a test delivery once, and a resend under its own id, each for one attempt', async () => {
    const u = await user();
    const wh = await webhook(u, 'test', ['job.paused']);
    const test = await event(u, 'test', TEST_EVENT, { webhook_id: wh, message: 'hi' });
    const dlv = newId('dlv');
    await tdb.db.delivery.create({
      data: {
        id: dlv,
        webhookId: wh,
        eventId: test.id,
        eventKind: TEST_EVENT,
        body: '{}',
        status: 'pending',
      },
    });
    const failed = newId('dlv');
    await tdb.db.delivery.create({
      data: {
        id: failed,
        webhookId: wh,
        eventId: 'evt_old',
        eventKind: 'job.paused',
        body: '{}',
        status: 'pending',
        attempts: 6,
      },
    });
    await event(u, 'test', RESEND_COMMAND, { delivery_id: failed, attempts: 6 });
    expect(await new OutboxFanOut(tdb.db.pool, queue, 100).runOnce()).toBe(2);
    expect(await queuedIds()).toEqual([dlv, `${failed}-r6`].sort());
    expect((await queue.getJob(dlv))?.opts.attempts).toBe(1);
    const resend = await queue.getJob(`${failed}-r6`);
    expect(resend?.name).toBe('resend');
    expect(resend?.opts.attempts).toBe(1);
    expect(await deliveries()).toHaveLength(2);
  });
});
