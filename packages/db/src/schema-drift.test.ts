import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ADMIN_URL } from '../../../test/support/database.ts';
import { dropDatabase, throwawayDatabaseUrl, withClient } from '../../../test/support/throwaway-database.ts';
import { applyMigrations } from './internal/migrate.ts';
import { findSchemaDrift, schemaDriftOf } from './internal/schema-drift.ts';

const url = throwawayDatabaseUrl(ADMIN_URL, 'scrapejobs_drift_test');

beforeAll(async () => {
  await applyMigrations(url);
});

afterAll(async () => {
  await dropDatabase(ADMIN_URL, url);
});

/** The drift report after `sql` runs on the migrated database, inside a transaction that is rolled back. */
async function driftAfter(sql: string): Promise<string[]> {
  return withClient(url, async (client) => {
    await client.query('BEGIN');
    try {
      await client.query(sql);
      return await schemaDriftOf(client, 'public');
    } finally {
      await client.query('ROLLBACK');
    }
  });
}

describe('schema drift', () => {
  test('the migrated database agrees with prisma/schema.prisma', async () => {
    expect(await findSchemaDrift(url)).toEqual([]);
  });

  test.each([
    ['a dropped column', 'ALTER TABLE "jobs" DROP COLUMN "next_run_at"', 'missing column jobs.next_run_at'],
    [
      'an extra column',
      'ALTER TABLE "users" ADD COLUMN "nickname" TEXT',
      'unexpected column users.nickname (no field maps to it)',
    ],
    ['an extra table', 'CREATE TABLE "stray" ("id" TEXT)', 'unexpected table stray (no model maps to it)'],
    [
      'a changed type',
      'ALTER TABLE "jobs" ALTER COLUMN "created_at" TYPE TIMESTAMPTZ(3)',
      'jobs.created_at is timestamp(3) with time zone, expected timestamp(3) without time zone',
    ],
    [
      'a changed nullability',
      'ALTER TABLE "users" ALTER COLUMN "password_hash" SET NOT NULL',
      'users.password_hash is NOT NULL, expected the opposite',
    ],
    [
      'a changed default',
      'ALTER TABLE "runs" ALTER COLUMN "results_count" SET DEFAULT 1',
      'runs.results_count has default "1", expected "0"',
    ],
    [
      'a dropped index',
      'DROP INDEX "jobs_user_id_mode_origin_id_idx"',
      'jobs: missing index jobs_user_id_mode_origin_id_idx btree (user_id, mode, origin, id DESC)',
    ],
    [
      'an index that lost its DESC',
      'DROP INDEX "runs_job_id_id_idx"; CREATE INDEX "runs_job_id_id_idx" ON "runs"("job_id", "id")',
      'runs: index runs_job_id_id_idx is btree (job_id, id), expected btree (job_id, id DESC)',
    ],
    [
      'a dropped unique index',
      'DROP INDEX "deliveries_webhook_id_event_id_key"',
      'deliveries: missing index deliveries_webhook_id_event_id_key UNIQUE btree (webhook_id, event_id)',
    ],
    [
      'a dropped primary key',
      'ALTER TABLE "events" DROP CONSTRAINT "events_pkey"',
      'events: primary key is none, expected events_pkey (id)',
    ],
    [
      'a foreign key with another ON DELETE',
      `ALTER TABLE "runs" DROP CONSTRAINT "runs_job_id_fkey";
       ALTER TABLE "runs" ADD CONSTRAINT "runs_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id")
         ON DELETE RESTRICT ON UPDATE CASCADE`,
      'runs: foreign key (job_id) → jobs (id) has ON DELETE Restrict ON UPDATE Cascade, expected ON DELETE Cascade ON UPDATE Cascade',
    ],
    [
      'an extra enum value',
      `ALTER TYPE "RunStatus" ADD VALUE 'queued'`,
      'enum "RunStatus" has unexpected values queued',
    ],
  ])('reports %s', async (_what, sql, report) => {
    expect(await driftAfter(sql)).toEqual([report]);
  });
});
