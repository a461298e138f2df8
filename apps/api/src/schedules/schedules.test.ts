import { createLogger } from '@scrapejobs/logging';
import { createRegistry } from '@scrapejobs/observability';
import { Redis } from 'ioredis';
import { buildTestApi } from '../../../../test/support/api.ts';
import { client, validJob } from '../../../../test/support/client.ts';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
import { until } from '../../../../test/support/processes.ts';
import { REDIS_URL, testPrefix } from '../../../../test/support/redis.ts';
import { handleTick, startTickWorker } from './ticks.ts';

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let c: ReturnType<typeof client>;
const prefix = testPrefix();
const log = createLogger('test', 'silent');

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  c = client(
    api.app,
    (
      await api.keys.create({
        email: 's@example.com',
        mode: 'test',
        scopes: ['jobs:read', 'jobs:write'],
        name: 's',
      })
    ).token,
  );
});

afterAll(async () => {
  await api.close();
  await tdb.drop();
  await prefix.cleanup();
});

const schedulerOf = (jobId: string) => api.ticks.getJobScheduler(jobId);
const tick = (jobId: string, now?: Date) => handleTick({ jobs: api.jobs, log }, jobId, now);

async function scheduledJob(
  scheduling: Record<string, unknown> = { hours: [9], minutes: [30], timezone: 'Europe/Paris' },
) {
  const res = await c.post('/jobs', validJob({ scheduling }));
  expect(res.status).toBe(201);
  return res.body as { job_id: string; next_run_at: string | null };
}

describe('schedules in BullMQ', () => {
  it('create arms one scheduler with the cron line and time zone, and sets next_run_at', async () => {
    const before = Date.now();
    const job = await scheduledJob();
    const s = await schedulerOf(job.job_id);
    expect(s).toEqual(
      expect.objectContaining({ key: job.job_id, pattern: '30 9 * * *', tz: 'Europe/Paris' }),
    );
    const next = new Date(job.next_run_at!);
    expect(next.getTime()).toBeGreaterThan(before);
    expect(next.getTime() - before).toBeLessThanOrEqual(24 * 3600_000);
    expect(next.toLocaleTimeString('en-GB', { timeZone: 'Europe/Paris' })).toBe('09:30:00');
    expect(s?.next).toBe(next.getTime());
  });

  it('a job without a schedule has no scheduler and next_run_at null', async () => {
    const job = (await c.post('/jobs', validJob())).body;
    expect(job.next_run_at).toBeNull();
    expect(await schedulerOf(job.job_id)).toBeUndefined();
  });

  it('pause removes it, resume re-arms it, PUT moves it, null clears it, delete removes it', async () => {
    const job = await scheduledJob();
    const paused = (await c.post(`/jobs/${job.job_id}/pause`)).body;
    expect(paused.next_run_at).toBeNull();
    expect(await schedulerOf(job.job_id)).toBeUndefined();

    // A PUT of the schedule while paused is stored but stays disarmed.
    await c.put(`/jobs/${job.job_id}`, { scheduling: { hours: [10], minutes: [0] } });
    expect(await schedulerOf(job.job_id)).toBeUndefined();

    const resumed = (await c.post(`/jobs/${job.job_id}/resume`)).body;
    expect(resumed.next_run_at).not.toBeNull();
    expect((await schedulerOf(job.job_id))?.pattern).toBe('0 10 * * *');

    const moved = (
      await c.patch(`/jobs/${job.job_id}`, { scheduling: { days: [0], hours: [6], minutes: [15] } })
    ).body;
    expect((await schedulerOf(job.job_id))?.pattern).toBe('15 6 * * 0');
    expect(new Date(moved.next_run_at).getUTCDay()).toBe(0);

    const cleared = (await c.patch(`/jobs/${job.job_id}`, { scheduling: null })).body;
    expect(cleared.next_run_at).toBeNull();
    expect(await schedulerOf(job.job_id)).toBeUndefined();

    await c.patch(`/jobs/${job.job_id}`, { scheduling: { hours: [1] } });
    expect(await schedulerOf(job.job_id)).toBeDefined();
    expect((await c.delete(`/jobs/${job.job_id}`)).status).toBe(204);
    expect(await schedulerOf(job.job_id)).toBeUndefined();
  });

  it('a tick starts a run with trigger schedule, then skips (and records) a tick while it is running', async () => {
    const job = await scheduledJob();
    expect(await tick(job.job_id)).toBe('started');
    const runs = (await c.get(`/jobs/${job.job_id}/runs`)).body.runs;
    expect(runs).toHaveLength(1);
    expect(runs[0].trigger).toBe('schedule');
    const started = await tdb.db.event.findFirstOrThrow({
      where: { jobId: job.job_id, kind: 'job.started' },
    });
    expect((started.data as { trigger: string }).trigger).toBe('schedule');
    expect(await tick(job.job_id)).toBe('skipped-running');
    expect(await tdb.db.run.count({ where: { jobId: job.job_id } })).toBe(1);
  });

  it('the tick worker counts each outcome in schedule_ticks_total', async () => {
    const registry = createRegistry('api');
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const worker = startTickWorker({ jobs: api.jobs, log, registry }, connection, prefix.prefix);
    const counts = async () => {
      const metric = await registry.getSingleMetric('schedule_ticks_total')!.get();
      return Object.fromEntries(metric.values.map((v) => [v.labels.outcome, v.value]));
    };
    try {
      const job = await scheduledJob();
      await api.ticks.add('tick', { jobId: job.job_id });
      await until(async () => (await counts()).started === 1);
      await api.ticks.add('tick', { jobId: job.job_id }); // the run it started is still running
      await until(async () => (await counts())['skipped-running'] === 1);
      await c.post(`/jobs/${job.job_id}/pause`);
      await api.ticks.add('tick', { jobId: job.job_id });
      await until(async () => (await counts())['skipped-paused'] === 1);
      expect(await counts()).toEqual({ started: 1, 'skipped-running': 1, 'skipped-paused': 1 });
      expect(await tdb.db.run.count({ where: { jobId: job.job_id } })).toBe(1);
    } finally {
      await worker.close();
      connection.disconnect();
    }
  });

  it('a tick for a paused job does nothing; a tick for a deleted job removes its scheduler', async () => {
    const job = await scheduledJob();
    await c.post(`/jobs/${job.job_id}/pause`);
    expect(await tick(job.job_id)).toBe('skipped-paused');
    expect(await tdb.db.run.count({ where: { jobId: job.job_id } })).toBe(0);

    const gone = await scheduledJob();
    await tdb.db.job.delete({ where: { id: gone.job_id } });
    expect(await schedulerOf(gone.job_id)).toBeDefined();
    expect(await tick(gone.job_id)).toBe('orphan');
    expect(await schedulerOf(gone.job_id)).toBeUndefined();
  });

  it('a tick advances next_run_at to the following planned time', async () => {
    const job = await scheduledJob({ hours: [], minutes: [0] });
    await tick(job.job_id, new Date('2030-01-01T10:00:00.000Z'));
    const stored = await tdb.db.job.findUniqueOrThrow({ where: { id: job.job_id } });
    expect(stored.nextRunAt?.toISOString()).toBe('2030-01-01T11:00:00.000Z');
  });

  it('reconcile restores a scheduler Redis lost and removes an orphan, and does nothing the second time', async () => {
    const kept = await scheduledJob({ hours: [4] });
    const lost = await scheduledJob({ hours: [5] });
    await api.ticks.removeJobScheduler(lost.job_id);
    await api.ticks.upsertJobScheduler(
      'job_01ORPHANZZZZZZZZZZZZZZZZZ',
      { pattern: '0 1 * * *' },
      { name: 'tick', data: { jobId: 'job_01ORPHANZZZZZZZZZZZZZZZZZ' } },
    );
    const first = await api.scheduler.reconcile(tdb.db);
    expect(first.armed).toContain(lost.job_id);
    expect(first.armed).not.toContain(kept.job_id);
    expect(first.removed).toContain('job_01ORPHANZZZZZZZZZZZZZZZZZ');
    expect((await schedulerOf(lost.job_id))?.pattern).toBe('0 5 * * *');
    expect(await api.scheduler.reconcile(tdb.db)).toEqual({ armed: [], removed: [] });
  });

  it('concurrent PUTs of one schedule leave exactly one scheduler', async () => {
    const job = await scheduledJob();
    await Promise.all(
      [1, 2, 3, 4, 5].map((h) => c.patch(`/jobs/${job.job_id}`, { scheduling: { hours: [h] } })),
    );
    const all = (await api.ticks.getJobSchedulers(0, -1)).filter((s) => s.key === job.job_id);
    expect(all).toHaveLength(1);
    const stored = await tdb.db.job.findUniqueOrThrow({ where: { id: job.job_id } });
    expect(all[0]!.pattern).toBe(`0 ${(stored.scheduling as { hours: number[] }).hours[0]} * * *`);
  });
});
