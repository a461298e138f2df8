import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { ADMIN_URL } from '../../../test/support/database.ts';
import { dropDatabase, throwawayDatabaseUrl, withClient } from '../../../test/support/throwaway-database.ts';
import { applyMigrations, MigrationError } from './internal/migrate.ts';

const MIGRATIONS_DIR = resolve(import.meta.dirname, '../../../prisma/migrations');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const databases: string[] = [];
const folders: string[] = [];

function newDatabaseUrl(): string {
  const url = throwawayDatabaseUrl(ADMIN_URL, 'scrapejobs_migrate_test');
  databases.push(url);
  return url;
}

/** A copy of the repository's migrations that a test may change. */
async function copyOfMigrations(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'scrapejobs-migrations-'));
  folders.push(dir);
  await cp(MIGRATIONS_DIR, dir, { recursive: true });
  return dir;
}

async function addMigration(dir: string, name: string, sql: string): Promise<void> {
  await mkdir(join(dir, name));
  await writeFile(join(dir, name, 'migration.sql'), sql);
}

async function migrationNames(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

function history(url: string) {
  return withClient(url, async (client) => {
    const { rows } = await client.query(
      `SELECT id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count
       FROM _prisma_migrations ORDER BY started_at`,
    );
    return rows;
  });
}

async function rejection(promise: Promise<unknown>): Promise<MigrationError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MigrationError);
  return err as MigrationError;
}

afterAll(async () => {
  await Promise.all(databases.map((url) => dropDatabase(ADMIN_URL, url)));
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('applyMigrations', () => {
  test('creates the database, applies every migration and records each one in Prisma layout', async () => {
    const url = newDatabaseUrl();
    const names = await migrationNames(MIGRATIONS_DIR);

    await expect(applyMigrations(url)).resolves.toEqual(names);

    const rows = await history(url);
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    for (const row of rows) {
      const sql = await readFile(join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
      expect(row.id).toMatch(UUID);
      expect(row.applied_steps_count).toBe(1);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.finished_at.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
      expect(row.rolled_back_at).toBeNull();
      expect(row.logs).toBeNull();
    }
    const layout = await withClient(url, async (client) => {
      const { rows } = await client.query(
        `SELECT column_name, data_type, character_maximum_length AS length, is_nullable, column_default
         FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
      );
      return rows.map((c) => [c.column_name, c.data_type, c.length, c.is_nullable, c.column_default]);
    });
    expect(layout).toEqual([
      ['id', 'character varying', 36, 'NO', null],
      ['checksum', 'character varying', 64, 'NO', null],
      ['finished_at', 'timestamp with time zone', null, 'YES', null],
      ['migration_name', 'character varying', 255, 'NO', null],
      ['logs', 'text', null, 'YES', null],
      ['rolled_back_at', 'timestamp with time zone', null, 'YES', null],
      ['started_at', 'timestamp with time zone', null, 'NO', 'now()'],
      ['applied_steps_count', 'integer', null, 'NO', '0'],
    ]);
  });

  test('a second run applies nothing and records nothing', async () => {
    const url = newDatabaseUrl();
    await applyMigrations(url);
    const before = await history(url);

    await expect(applyMigrations(url)).resolves.toEqual([]);

    expect(await history(url)).toEqual(before);
  });

  test('runs started at once on a new database apply each migration exactly once', async () => {
    const url = newDatabaseUrl();
    const names = await migrationNames(MIGRATIONS_DIR);

    const results = await Promise.all(Array.from({ length: 6 }, () => applyMigrations(url)));

    expect(results.flat().sort()).toEqual(names);
    expect(results.filter((applied) => applied.length > 0)).toHaveLength(1);
    expect((await history(url)).map((r) => r.migration_name)).toEqual(names);
  });

  test('applies only the migrations added since the last run', async () => {
    const url = newDatabaseUrl();
    const dir = await copyOfMigrations();
    await applyMigrations(url, dir);
    await addMigration(dir, '29990101000000_add_note', 'ALTER TABLE "jobs" ADD COLUMN "note" TEXT;\n');

    await expect(applyMigrations(url, dir)).resolves.toEqual(['29990101000000_add_note']);

    const columns = await withClient(url, (c) =>
      c.query(`SELECT 1 FROM information_schema.columns WHERE table_name = 'jobs' AND column_name = 'note'`),
    );
    expect(columns.rowCount).toBe(1);
  });

  test('refuses to run when an applied migration.sql changed, and applies nothing', async () => {
    const url = newDatabaseUrl();
    const dir = await copyOfMigrations();
    const [first] = await applyMigrations(url, dir);
    await writeFile(join(dir, first!, 'migration.sql'), '\n-- edited after it was applied\n', { flag: 'a' });
    await addMigration(dir, '29990101000000_add_note', 'ALTER TABLE "jobs" ADD COLUMN "note" TEXT;\n');

    const err = await rejection(applyMigrations(url, dir));

    expect(err.code).toBe('checksum_mismatch');
    expect(err.message).toContain(first);
    expect((await history(url)).map((r) => r.migration_name)).not.toContain('29990101000000_add_note');
  });

  test('accepts an applied migration.sql whose line endings were converted to CRLF', async () => {
    const url = newDatabaseUrl();
    const dir = await copyOfMigrations();
    const [first] = await applyMigrations(url, dir);
    const file = join(dir, first!, 'migration.sql');
    await writeFile(file, (await readFile(file, 'utf8')).replaceAll('\n', '\r\n'));

    await expect(applyMigrations(url, dir)).resolves.toEqual([]);
  });

  test('rolls back and records a failing migration, then refuses until it is marked rolled back', async () => {
    const url = newDatabaseUrl();
    const dir = await copyOfMigrations();
    await applyMigrations(url, dir);
    const name = '29990101000000_broken';
    await addMigration(dir, name, 'CREATE TABLE "half_done" ("id" TEXT);\nSELECT * FROM "no_such_table";\n');

    const failure = await rejection(applyMigrations(url, dir));

    expect(failure.code).toBe('migration_failed');
    const halfDone = await withClient(url, (c) => c.query(`SELECT to_regclass('half_done') AS t`));
    expect(halfDone.rows[0].t).toBeNull();
    const recorded = (await history(url)).find((r) => r.migration_name === name);
    expect(recorded).toMatchObject({ finished_at: null, rolled_back_at: null, applied_steps_count: 0 });
    expect(recorded.logs).toContain('42P01');
    expect(recorded.logs).toContain('line 2');

    const refusal = await rejection(applyMigrations(url, dir));
    expect(refusal.code).toBe('failed_migration_recorded');
    expect(refusal.message).toContain(name);

    await withClient(url, (c) =>
      c.query('UPDATE _prisma_migrations SET rolled_back_at = now() WHERE migration_name = $1', [name]),
    );
    await writeFile(join(dir, name, 'migration.sql'), 'CREATE TABLE "half_done" ("id" TEXT);\n');
    await expect(applyMigrations(url, dir)).resolves.toEqual([name]);
  });

  test("gives up with lock_timeout while another session holds Prisma Migrate's advisory lock", async () => {
    const url = newDatabaseUrl();
    await applyMigrations(url);

    const err = await withClient(url, async (holder) => {
      await holder.query('SELECT pg_advisory_lock(72707369)');
      return rejection(applyMigrations(url, undefined, { lockTimeoutMs: 200 }));
    });

    expect(err.code).toBe('lock_timeout');
  });

  test('refuses a database that has tables but no _prisma_migrations', async () => {
    const url = newDatabaseUrl();
    const noMigrations = await mkdtemp(join(tmpdir(), 'scrapejobs-no-migrations-'));
    folders.push(noMigrations);
    await applyMigrations(url, noMigrations);
    await withClient(url, async (c) => {
      await c.query('DROP TABLE _prisma_migrations');
      await c.query('CREATE TABLE "something" ("id" TEXT)');
    });

    const err = await rejection(applyMigrations(url));

    expect(err.code).toBe('database_not_empty');
    expect(err.message).toContain('something');
  });
});
