import { buildTestApi } from '../support/api.ts';
import { client, validJob } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type Proc, startApp, until } from '../support/processes.ts';
import { REDIS_URL, testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let site: Awaited<ReturnType<typeof startSite>>;
const prefix = testPrefix();
let procs: Proc[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix, env: { SCHEDULE_UNIT: 'second' } });
  site = await startSite();
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill('SIGKILL')));
  await api.close();
  await site.close();
  await tdb.drop();
  await prefix.cleanup();
});

/**
 * Two API processes (which consume schedule ticks) and three scraper workers. Schedules count in
 * seconds (SCHEDULE_UNIT): the planned times are seconds apart, the ticks' path is the same.
 */
async function startFleet() {
  const common = {
    DATABASE_URL: tdb.url,
    REDIS_URL,
    QUEUE_PREFIX: prefix.prefix,
    ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
    SCHEDULE_UNIT: 'second',
  };
  procs = [
    startApp('api', { ...common, PORT: '0' }),
    startApp('api', { ...common, PORT: '0' }),
    startApp('scraper-worker', common),
    startApp('scraper-worker', common),
    startApp('scraper-worker', common),
  ];
  await Promise.all(
    procs.map((p) => p.waitForLog((l) => l.msg === 'api listening' || l.msg === 'scraper worker started')),
  );
}

const secondStart = (t: number) => Math.ceil(t / 1_000) * 1_000;

describe('schedules across processes', () => {
  it('fires once per planned time with two API and three worker processes, across a restart of every process', async () => {
    await startFleet();
    // Two planned times (seconds of every minute here), far enough apart for a restart of the fleet.
    const first = secondStart(Date.now() + 8_000);
    const second = first + 20_000;
    const minutes = [new Date(first).getUTCSeconds(), new Date(second).getUTCSeconds()];
    const hours = [...new Set([new Date(first).getUTCHours(), new Date(second).getUTCHours()])];
    const c = client(
      api.app,
      (
        await api.keys.create({
          email: 'sch@example.com',
          mode: 'test',
          scopes: ['jobs:read', 'jobs:write'],
          name: 's',
        })
      ).token,
    );
    const job = (
      await c.post('/jobs', validJob({ source: `${site.url}/page/1`, scheduling: { minutes, hours } }))
    ).body;
    expect(new Date(job.next_run_at).getTime()).toBe(first);

    const runs = () => tdb.db.run.findMany({ where: { jobId: job.job_id }, orderBy: { id: 'asc' } });
    await until(async () => (await runs()).length >= 1 || null, first - Date.now() + 15_000, 250);

    // Restart every process before the second planned time.
    await Promise.all(procs.map((p) => p.kill('SIGTERM')));
    await startFleet();
    await until(async () => (await runs()).length >= 2 || null, second - Date.now() + 15_000, 250);
    await new Promise((r) => setTimeout(r, 3_000));

    const all = await runs();
    expect(all).toHaveLength(2);
    expect(all.map((r) => r.trigger)).toEqual(['schedule', 'schedule']);
    expect(all[0]!.startedAt.getTime() - first).toBeLessThan(10_000);
    expect(all[0]!.startedAt.getTime()).toBeGreaterThanOrEqual(first);
    expect(all[1]!.startedAt.getTime() - second).toBeLessThan(10_000);
    await until(
      async () =>
        (await tdb.db.job.findUniqueOrThrow({ where: { id: job.job_id } })).status === 'success' || null,
    );
    expect((await api.ticks.getJobSchedulers(0, -1)).filter((s) => s.key === job.job_id)).toHaveLength(1);
  }, 90_000);
});
