import { createDatabase, newId } from '@scrapejobs/db';
import { RetentionSweep, RunAnalysis } from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
import { insertResults } from '../../../../test/support/records.ts';
import { startTcpProxy } from '../../../../test/support/tcp-proxy.ts';
import { ANALYSIS_ATTEMPTS, Analyst } from './analyst.ts';

const DAY = 24 * 3600 * 1000;
let tdb: TestDatabase;
let userId: string;

beforeAll(async () => {
  tdb = await createTestDatabase();
  userId = (await tdb.db.user.create({ data: { id: newId('usr'), email: 'analyst@example.com' } })).id;
});
afterAll(() => tdb.drop());
// Each test's Analyst looks at every due run: none is left for the next.
afterEach(() => tdb.db.job.deleteMany());

/** A logger that keeps the lines logged at warn and error. */
function logger() {
  const lines: { level: string; msg: string; run_id?: string; err?: string }[] = [];
  const at = (level: string) => (fields: object, msg: string) => lines.push({ level, msg, ...fields });
  return { lines, log: { info: () => {}, warn: at('warn'), error: at('error') } as unknown as Logger };
}

/** A RunAnalysis that counts the analyses it tries. */
class CountedAnalysis extends RunAnalysis {
  tries = 0;
  override analyze(runId: string) {
    this.tries++;
    return super.analyze(runId);
  }
}

async function newJob(retentionDays: number | null = null) {
  const id = newId('job');
  await tdb.db.job.create({
    data: {
      id,
      userId,
      mode: 'test',
      name: 'analysed',
      source: 'https://example.com/',
      queries: [{ name: 'sku', type: 'css', query: '.sku', join: false }],
      rateLimit: 10,
      status: 'success',
      retentionDays,
      changeTracking: { key: ['sku'] },
    },
  });
  return id;
}

/**
 * A run with two records of its own that ended `daysAgo` days ago, due for analysis unless
 * `analysed`; a `poisoned` one has a change row in the way of its comparison (two items added at
 * least), so its analysis fails every time.
 */
async function endedRun(jobId: string, daysAgo: number, kind: 'analysed' | 'due' | 'poisoned') {
  const at = Date.now() - daysAgo * DAY;
  const runId = newId('run', at);
  await tdb.db.run.create({
    data: {
      id: runId,
      jobId,
      trigger: 'manual',
      status: 'success',
      startedAt: new Date(at - 1_000),
      finishedAt: new Date(at),
      resultsCount: 2,
      successfulUrls: 2,
      analysisDue: kind !== 'analysed',
    },
  });
  await insertResults(tdb.db, runId, [
    { url: 'https://example.com/1', data: { sku: `${runId}.1` } },
    { url: 'https://example.com/2', data: { sku: `${runId}.2` } },
  ]);
  if (kind === 'poisoned')
    await tdb.db.runChange.create({
      data: { runId, seq: 1, type: 'added', key: {}, changedFields: [], scrapedAt: new Date(at) },
    });
  return runId;
}

const runOf = (id: string) => tdb.db.run.findUniqueOrThrow({ where: { id } });

describe('Analyst', () => {
  it("gives up, with backoff, a run whose analysis keeps failing, so retention deletes the job's old runs", async () => {
    const jobId = await newJob(1);
    const old = await endedRun(jobId, 5, 'analysed');
    const poisoned = await endedRun(jobId, 0.01, 'poisoned');
    const { lines, log } = logger();
    const analysis = new CountedAnalysis(tdb.db, 'https://x/');
    let clock = Date.now();
    const analyst = new Analyst(analysis, log, () => clock);

    await analyst.work();
    await analyst.work();
    expect(analysis.tries).toBe(1);
    await new RetentionSweep(tdb.db, { defaultDays: 0 }).sweep();
    expect((await tdb.db.run.findMany({ where: { jobId } })).length).toBe(2);

    for (let i = 0; i < ANALYSIS_ATTEMPTS + 3; i++) {
      clock += 2 * 3600_000;
      await analyst.work();
    }
    expect(await runOf(poisoned)).toEqual(
      expect.objectContaining({ analysisDue: false, health: null, changes: null }),
    );
    expect(analysis.tries).toBe(ANALYSIS_ATTEMPTS);
    expect(lines.map(({ level, run_id }) => `${level} ${run_id}`)).toEqual([
      ...Array(ANALYSIS_ATTEMPTS - 1).fill(`warn ${poisoned}`),
      `error ${poisoned}`,
    ]);
    for (const line of lines) expect(line.err).toMatch(/duplicate key/);

    await new RetentionSweep(tdb.db, { defaultDays: 0 }).sweep();
    expect((await tdb.db.run.findMany({ where: { jobId } })).map((r) => r.id)).toEqual([poisoned]);
    await expect(runOf(old)).rejects.toThrow();
  });

  it('analyses a new run while ten runs whose analysis failed wait for their retry', async () => {
    const stuck = await newJob();
    for (let i = 0; i < 10; i++) await endedRun(stuck, 1 - i / 100, 'poisoned');
    const analysis = new CountedAnalysis(tdb.db, 'https://x/');
    const analyst = new Analyst(analysis, logger().log);
    await analyst.work();
    expect(analysis.tries).toBe(10);

    const fresh = await endedRun(await newJob(), 0, 'due');
    await analyst.work();
    expect(await runOf(fresh)).toEqual(
      expect.objectContaining({ analysisDue: false, health: { status: 'ok', reasons: [] } }),
    );
    expect(analysis.tries).toBe(11);
  });

  it('fails a pass while PostgreSQL refuses connections and analyses the run once it is back', async () => {
    const proxy = await startTcpProxy(Number(new URL(tdb.url).port || 5432));
    const url = new URL(tdb.url);
    url.port = String(proxy.port);
    const db = createDatabase({ url: url.toString(), max: 2 });
    const { lines, log } = logger();
    const analyst = new Analyst(new RunAnalysis(db, 'https://x/'), log);
    try {
      const runId = await endedRun(await newJob(), 0, 'due');
      await proxy.refuse();
      await expect(analyst.work()).rejects.toThrow();
      await expect(analyst.work()).rejects.toThrow();
      expect((await runOf(runId)).analysisDue).toBe(true);

      await proxy.restore();
      await analyst.work();
      expect(await runOf(runId)).toEqual(
        expect.objectContaining({ analysisDue: false, health: { status: 'ok', reasons: [] } }),
      );
      expect(lines).toEqual([]);
    } finally {
      await analyst.stop();
      await db.$disconnect();
      await db.pool.end().catch(() => {});
      await proxy.stop();
    }
  });
});
