// Test fixtures: the real API on a private database, with runs and results written straight into it.
import { type Database, newId, type RunStatus } from '@scrapejobs/db';
import { buildTestApi } from './api.ts';
import { client, validJob } from './client.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { testPrefix } from './redis.ts';

export type Client = ReturnType<typeof client>;

export interface Fixture {
  tdb: TestDatabase;
  api: ReturnType<typeof buildTestApi>;
  alice: Client;
  aliceLive: Client;
  bob: Client;
  close(): Promise<void>;
}

export async function startFixture(): Promise<Fixture> {
  const tdb = await createTestDatabase();
  const prefix = testPrefix();
  const api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  const key = async (email: string, mode: 'test' | 'live') =>
    client(
      api.app,
      (await api.keys.create({ email, mode, scopes: ['jobs:read', 'jobs:write'], name: 'k' })).token,
    );
  return {
    tdb,
    api,
    alice: await key('alice@example.com', 'test'),
    aliceLive: await key('alice@example.com', 'live'),
    bob: await key('bob@example.com', 'test'),
    async close() {
      await api.close();
      await tdb.drop();
      await prefix.cleanup();
    },
  };
}

/** Creates a job through the API with these query names (css queries). */
export async function createJob(c: Client, queryNames: string[]): Promise<string> {
  const res = await c.post(
    '/jobs',
    validJob({ queries: queryNames.map((name) => ({ name, type: 'css', query: 'h1' })) }),
  );
  if (res.status !== 201) throw new Error(`create job: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.job_id as string;
}

export interface SeedRecord {
  url: string;
  data: Record<string, string | null>;
  scrapedAt?: Date;
}

/** A run of the job with these records, stored as a scraper worker stores them. */
export async function seedRun(
  db: Database,
  jobId: string,
  records: SeedRecord[],
  opts: { status?: RunStatus; startedAt?: Date; finishedAt?: Date | null } = {},
): Promise<string> {
  const startedAt = opts.startedAt ?? new Date();
  const status = opts.status ?? 'success';
  const id = newId('run', startedAt.getTime());
  await db.run.create({
    data: {
      id,
      jobId,
      status,
      trigger: 'manual',
      startedAt,
      finishedAt: opts.finishedAt !== undefined ? opts.finishedAt : status === 'running' ? null : startedAt,
      resultsCount: records.length,
    },
  });
  await insertResults(db, jobId, id, records);
  return id;
}

export async function insertResults(
  db: Database,
  jobId: string,
  runId: string,
  records: SeedRecord[],
  from = 0,
) {
  await db.result.createMany({
    data: records.map((r, i) => ({
      id: newId('res'),
      runId,
      jobId,
      url: r.url,
      urlIndex: from + i,
      rowIndex: 0,
      data: r.data,
      scrapedAt: r.scrapedAt ?? new Date(Date.UTC(2026, 0, 2, 3, 4, 5, i % 1000)),
    })),
  });
}
