import { newId } from '@scrapejobs/db';
import { DEVELOPMENT_SECRET_KEY, SecretBox } from '@scrapejobs/outbound';
import { createTestDatabase, type TestDatabase } from '../../../../../test/support/database.ts';
import { insertResults, recordCount } from '../../../../../test/support/records.ts';
import { JobsService } from '../jobs/service.ts';
import { ResultsService } from '../results/service.ts';
import { RetentionSweep } from './retention.ts';

let tdb: TestDatabase;
let userId: string;
const DAY = 24 * 3600 * 1000;
const owner = () => ({ userId, mode: 'test' as const });

beforeAll(async () => {
  tdb = await createTestDatabase();
  userId = (await tdb.db.user.create({ data: { id: newId('usr'), email: 'keep@example.com' } })).id;
});
afterAll(() => tdb.drop());

async function newJob(over: { retentionDays?: number | null; changeTracking?: object } = {}) {
  const id = newId('job');
  await tdb.db.job.create({
    data: {
      id,
      userId,
      mode: 'test',
      name: 'kept',
      source: 'https://example.com/',
      queries: [{ name: 'title', type: 'css', query: 'h1', join: false }],
      rateLimit: 10,
      status: 'success',
      retentionDays: over.retentionDays ?? null,
      ...(over.changeTracking && { changeTracking: over.changeTracking }),
    },
  });
  return id;
}

/** A run that ended `daysAgo` days ago, with 12 records, 2 URLs, a change and a screenshot. */
async function endedRun(
  jobId: string,
  daysAgo: number,
  over: { status?: 'success' | 'failed' | 'cancelled'; baseRunId?: string; analysisDue?: boolean } = {},
) {
  const at = Date.now() - daysAgo * DAY;
  const id = newId('run', at);
  await tdb.db.run.create({
    data: {
      id,
      jobId,
      trigger: 'manual',
      status: over.status ?? 'success',
      startedAt: new Date(at - 1000),
      finishedAt: new Date(at),
      analysisDue: over.analysisDue ?? false,
      ...(over.baseRunId && {
        baseRunId: over.baseRunId,
        changes: { added: 0, removed: 0, changed: 0, unchanged: 1, duplicate_keys: 0 },
      }),
    },
  });
  await insertResults(
    tdb.db,
    id,
    Array.from({ length: 12 }, (_, i) => ({
      url: 'https://example.com/',
      data: { title: `t${i}` },
      scrapedAt: new Date(at),
    })),
  );
  await tdb.db.runUrl.createMany({
    data: [0, 1].map((seq) => ({
      runId: id,
      seq,
      url: `https://example.com/${seq}`,
      urlKey: Buffer.from([seq]),
    })),
  });
  await tdb.db.runChange.create({
    data: { runId: id, seq: 0, type: 'added', key: {}, changedFields: [], scrapedAt: new Date(at) },
  });
  await tdb.db.runScreenshot.create({ data: { runId: id, seq: 0, png: Buffer.alloc(64, 1) } });
  return id;
}

const runsOf = async (jobId: string) =>
  (await tdb.db.run.findMany({ where: { jobId }, orderBy: { id: 'asc' } })).map((r) => r.id);

describe('RetentionSweep', () => {
  it("deletes the runs past the job's retention with every row of theirs, keeping the latest ended run", async () => {
    const jobId = await newJob({ retentionDays: 2 });
    const [old1, old2] = [await endedRun(jobId, 5), await endedRun(jobId, 4, { status: 'cancelled' })];
    const latestOld = await endedRun(jobId, 3);
    const other = await newJob();
    const untouched = await endedRun(other, 30);
    await endedRun(other, 20);

    const swept = await new RetentionSweep(tdb.db, { defaultDays: 0, batchSize: 5 }).sweep();
    expect(swept.runs).toBe(2);
    expect(await runsOf(jobId)).toEqual([latestOld]);
    for (const runId of [old1, old2]) {
      expect(await recordCount(tdb.db, runId)).toBe(0);
      expect(await tdb.db.runUrl.count({ where: { runId } })).toBe(0);
      expect(await tdb.db.runChange.count({ where: { runId } })).toBe(0);
      expect(await tdb.db.runScreenshot.count({ where: { runId } })).toBe(0);
    }
    expect(await recordCount(tdb.db, latestOld)).toBe(12);
    expect(await recordCount(tdb.db, untouched)).toBe(12);
    const results = swept.deleted.find((d) => d.table === 'result_pages');
    expect(results).toEqual({ table: 'result_pages', rows: 24, bytes: expect.any(Number) });
    expect(results!.bytes).toBeGreaterThan(24 * 30);
    expect(swept.deleted.find((d) => d.table === 'runs')?.rows).toBe(2);
  });

  it("applies RESULTS_RETENTION_DAYS to jobs without their own, and a job's own before it", async () => {
    const byDefault = await newJob();
    await endedRun(byDefault, 8);
    const recent = await endedRun(byDefault, 6);
    const latest = await endedRun(byDefault, 1);
    const longer = await newJob({ retentionDays: 30 });
    const kept = [await endedRun(longer, 20), await endedRun(longer, 10)];
    await new RetentionSweep(tdb.db, { defaultDays: 7 }).sweep();
    expect(await runsOf(byDefault)).toEqual([recent, latest]);
    expect(await runsOf(longer)).toEqual(kept);
  });

  it("keeps the base of a tracked job's latest comparison, and a job with a run still to analyse", async () => {
    const tracked = await newJob({ retentionDays: 1, changeTracking: { key: [] } });
    const first = await endedRun(tracked, 9);
    const base = await endedRun(tracked, 8, { baseRunId: first });
    const latest = await endedRun(tracked, 7, { baseRunId: base });
    await new RetentionSweep(tdb.db, { defaultDays: 0 }).sweep();
    expect(await runsOf(tracked)).toEqual([base, latest]);

    const busy = await newJob({ retentionDays: 1 });
    const runs = [
      await endedRun(busy, 9),
      await endedRun(busy, 8),
      await endedRun(busy, 0, { analysisDue: true }),
    ];
    await new RetentionSweep(tdb.db, { defaultDays: 0 }).sweep();
    expect(await runsOf(busy)).toEqual(runs);
  });

  it('leaves no half-deleted run visible when a sweep dies half way, and the next one finishes it', async () => {
    const jobId = await newJob({ retentionDays: 1 });
    const gone = await endedRun(jobId, 5);
    const latest = await endedRun(jobId, 4);
    const results = new ResultsService(tdb.db);
    const cursor = (await results.list(owner(), jobId, { runId: gone, limit: 2 })).nextCursor ?? undefined;
    expect(cursor).toBeDefined();
    // What a sweep killed after its first batch leaves: the run marked, part of its rows deleted.
    await tdb.db.run.update({ where: { id: gone }, data: { deleting: true } });
    await tdb.db.$executeRaw`DELETE FROM result_pages WHERE run_id = ${gone} AND url_index < 5`;
    const noop = async () => {};
    const jobs = new JobsService(
      tdb.db,
      { started: noop, cancel: noop },
      { arm: noop, disarm: noop },
      {
        box: new SecretBox(DEVELOPMENT_SECRET_KEY),
        publicBaseUrl: 'https://scrape.example.com',
      },
    );
    await expect(jobs.getRun(owner(), jobId, gone)).rejects.toThrow(/not found/);
    expect((await jobs.listRuns(owner(), jobId, { limit: 10 })).items.map((r) => r.id)).toEqual([latest]);
    await expect(results.list(owner(), jobId, { runId: gone, limit: 10 })).rejects.toThrow(/not found/);
    await expect(results.list(owner(), jobId, { runId: gone, limit: 10, cursor })).rejects.toThrow(
      /not found/,
    );
    expect((await results.list(owner(), jobId, { limit: 10 })).runId).toBe(latest);

    const swept = await new RetentionSweep(tdb.db, { defaultDays: 0 }).sweep();
    expect(swept.runs).toBe(1);
    expect(await runsOf(jobId)).toEqual([latest]);
    expect(await recordCount(tdb.db, gone)).toBe(0);
  });
});
