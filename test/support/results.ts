// Test fixtures: the real API on a private database, with runs and results written straight into it.
import { type Database, newId, type RunStatus } from '@scrapejobs/db';
import { type ApiFixture, apiFixture } from './api.ts';
import { type Client, validJob } from './client.ts';
import { insertResults, type SeedRecord } from './records.ts';

export * from './records.ts';
export type { Client };

export interface Fixture extends ApiFixture {
  alice: Client;
  aliceLive: Client;
  bob: Client;
}

/** The test API with keys of alice (test and live mode) and bob, each with jobs:read and jobs:write. */
export async function startFixture(): Promise<Fixture> {
  const fixture = await apiFixture();
  return {
    ...fixture,
    alice: await fixture.keyClient('alice@example.com'),
    aliceLive: await fixture.keyClient('alice@example.com', 'live'),
    bob: await fixture.keyClient('bob@example.com'),
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
  await insertResults(db, id, records);
  return id;
}
