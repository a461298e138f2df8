import { newId } from '@scrapejobs/db';
import { createTestDatabase, type TestDatabase } from '../../../../../test/support/database.ts';
import { pruneEvents } from './prune.ts';

let tdb: TestDatabase;
let userId: string;
const DAY = 24 * 3600 * 1000;
const now = Date.now();

beforeAll(async () => {
  tdb = await createTestDatabase();
  userId = (await tdb.db.user.create({ data: { id: newId('usr'), email: 'prune@x.test' } })).id;
});
afterAll(() => tdb.drop());
beforeEach(async () => {
  await tdb.db.event.deleteMany();
  await tdb.db.delivery.deleteMany();
});

/** An outbox event created `ageDays` ago and fanned out `dispatchedDaysAgo` ago (null: not yet). */
async function event(ageDays: number, dispatchedDaysAgo: number | null) {
  const createdAt = new Date(now - ageDays * DAY);
  const row = await tdb.db.event.create({
    data: {
      id: newId('evt', createdAt.getTime()),
      userId,
      mode: 'test',
      kind: 'job.paused',
      data: {},
      createdAt,
      dispatchedAt: dispatchedDaysAgo === null ? null : new Date(now - dispatchedDaysAgo * DAY),
    },
  });
  return row.id;
}

const remaining = async () => (await tdb.db.event.findMany({ orderBy: { id: 'asc' } })).map((e) => e.id);

describe('pruneEvents', () => {
  it('deletes events fanned out before the retention and keeps recent or undispatched ones', async () => {
    const old = await event(40, 40);
    const recent = await event(10, 10);
    const waiting = await event(40, null);
    // Created long ago, fanned out late (a backlog): kept until the retention after its fan-out.
    const late = await event(40, 5);
    expect(await pruneEvents(tdb.db.pool, { retentionDays: 30 }, now)).toBe(1);
    expect(await remaining()).toEqual([old, recent, waiting, late].filter((id) => id !== old).sort());
  });

  it('leaves the deliveries of a pruned event, their history and their body, as they were', async () => {
    const eventId = await event(60, 60);
    const webhookId = newId('wh');
    await tdb.db.webhook.create({
      data: {
        id: webhookId,
        userId,
        mode: 'test',
        url: 'https://example.com/',
        events: ['job.paused'],
        secretEncrypted: 's',
      },
    });
    const deliveryId = newId('dlv');
    await tdb.db.delivery.create({
      data: {
        id: deliveryId,
        webhookId,
        eventId,
        eventKind: 'job.paused',
        body: `{"id":"${eventId}"}`,
        status: 'failed',
        attempts: 6,
      },
    });
    expect(await pruneEvents(tdb.db.pool, { retentionDays: 30 }, now)).toBe(1);
    const d = await tdb.db.delivery.findUniqueOrThrow({ where: { id: deliveryId } });
    expect([d.eventId, d.body, d.status]).toEqual([eventId, `{"id":"${eventId}"}`, 'failed']);
  });

  it('deletes in batches, and no more batches per pass than allowed', async () => {
    for (let i = 0; i < 5; i++) await event(40, 35);
    expect(await pruneEvents(tdb.db.pool, { retentionDays: 30, batchSize: 2, maxBatches: 2 }, now)).toBe(4);
    expect(await remaining()).toHaveLength(1);
    expect(await pruneEvents(tdb.db.pool, { retentionDays: 30, batchSize: 2 }, now)).toBe(1);
    expect(await remaining()).toEqual([]);
  });
});
