import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import pg from 'pg';
import { MigrationError } from './migration-error.ts';
import type { MigrationFile } from './migration-files.ts';
import { migrationChecksum, readMigrationsDirectory, scriptMatchesChecksum } from './migration-files.ts';

export type { MigrationErrorCode } from './migration-error.ts';
export { MigrationError } from './migration-error.ts';

const DEFAULT_MIGRATIONS_DIR = resolve(import.meta.dirname, '../../../../prisma/migrations');

/** The advisory lock key of Prisma Migrate, so this applier and `prisma migrate deploy` exclude each other. */
const PRISMA_MIGRATE_LOCK_KEY = 72707369;

export interface ApplyMigrationsOptions {
  /** Give up when another process holds the migration lock for longer than this. */
  lockTimeoutMs?: number;
}

interface MigrationRecord {
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  logs: string | null;
  rolled_back_at: Date | null;
  started_at: Date;
}

/**
 * Applies the pending migrations of a Prisma migrations folder like `prisma migrate deploy`, recording
 * them in `_prisma_migrations`; creates the database if missing; returns the names it applied.
 */
// Unlike Prisma, each migration runs in an explicit transaction together with its record, so a script
// may not contain statements that refuse to run in one (CREATE INDEX CONCURRENTLY) or its own COMMIT.
export async function applyMigrations(
  databaseUrl: string,
  migrationsDir: string = DEFAULT_MIGRATIONS_DIR,
  { lockTimeoutMs = 300_000 }: ApplyMigrationsOptions = {},
): Promise<string[]> {
  const migrations = await readMigrationsDirectory(migrationsDir);
  const client = await connectCreatingDatabase(databaseUrl);
  try {
    await acquireLock(client, lockTimeoutMs);
    await useSchema(client, new URL(databaseUrl).searchParams.get('schema') ?? 'public');
    await ensureMigrationsTable(client);
    const records = await listRecords(client);
    assertHistoryIsSound(records, migrations);
    const live = records.filter((record) => record.rolled_back_at === null).map((r) => r.migration_name);
    const applied: string[] = [];
    for (const migration of migrations.filter((m) => !live.includes(m.name))) {
      await applyOne(client, migration);
      applied.push(migration.name);
    }
    return applied;
  } finally {
    // Ending the session also releases the advisory lock.
    await client.end();
  }
}

async function connect(connectionString: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 10_000 });
  // A dropped connection also rejects the query in flight, which is where it is reported.
  client.on('error', () => {});
  await client.connect();
  return client;
}

async function connectCreatingDatabase(databaseUrl: string): Promise<pg.Client> {
  try {
    return await connect(databaseUrl);
  } catch (err) {
    if (pgCode(err) !== '3D000') throw err; // invalid_catalog_name: the database does not exist
  }
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const admin = await connect(url.toString());
  try {
    await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
  } catch (err) {
    // Another process starting at the same moment created it first.
    if (pgCode(err) !== '42P04' && pgCode(err) !== '23505') throw err;
  } finally {
    await admin.end();
  }
  return connect(databaseUrl);
}

async function acquireLock(client: pg.Client, timeoutMs: number): Promise<void> {
  await client.query(`SELECT set_config('lock_timeout', $1, false)`, [`${timeoutMs}ms`]);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK_KEY]);
  } catch (err) {
    if (pgCode(err) !== '55P03') throw err;
    throw new MigrationError(
      'lock_timeout',
      `Another process held the migration lock (pg_advisory_lock(${PRISMA_MIGRATE_LOCK_KEY})) for more than ${timeoutMs} ms`,
      { cause: err },
    );
  }
  await client.query('RESET lock_timeout');
}

async function useSchema(client: pg.Client, schema: string): Promise<void> {
  const { rowCount } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  if (rowCount === 0) await client.query(`CREATE SCHEMA ${quoteIdent(schema)}`);
  await client.query(`SET search_path TO ${quoteIdent(schema)}`);
}

async function ensureMigrationsTable(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ relname: string }>(
    `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`,
  );
  if (rows.some((row) => row.relname === '_prisma_migrations')) return;
  if (rows.length > 0) {
    throw new MigrationError(
      'database_not_empty',
      `The database schema is not empty (tables ${rows.map((r) => r.relname).join(', ')}) but has no ` +
        '_prisma_migrations table: baseline it first (https://pris.ly/d/migrate-baseline)',
    );
  }
  // Prisma's own definition, column for column, so its CLI can read and extend this history.
  await client.query(`CREATE TABLE _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
  )`);
}

async function listRecords(client: pg.Client): Promise<MigrationRecord[]> {
  const { rows } = await client.query<MigrationRecord>(
    `SELECT checksum, finished_at, migration_name, logs, rolled_back_at, started_at
     FROM _prisma_migrations ORDER BY started_at`,
  );
  return rows;
}

function assertHistoryIsSound(records: MigrationRecord[], migrations: MigrationFile[]): void {
  const failed = records.filter((r) => r.finished_at === null && r.rolled_back_at === null);
  if (failed.length > 0) {
    const details = failed.map(
      (r) =>
        `  ${r.migration_name} (started ${r.started_at.toISOString()})${r.logs ? `:\n${indent(r.logs)}` : ''}`,
    );
    throw new MigrationError(
      'failed_migration_recorded',
      `Refusing to migrate: _prisma_migrations records failed migrations:\n${details.join('\n')}\n` +
        'Check the database, then mark them rolled back (`prisma migrate resolve --rolled-back <name>`, or ' +
        'set rolled_back_at on their rows) to retry them, or `--applied` if you applied them by hand.',
    );
  }
  const changed = records
    .filter((r) => r.finished_at !== null && r.rolled_back_at === null)
    .filter((r) => {
      const file = migrations.find((m) => m.name === r.migration_name);
      return file !== undefined && !scriptMatchesChecksum(file.script, r.checksum);
    })
    .map((r) => r.migration_name);
  if (changed.length > 0) {
    throw new MigrationError(
      'checksum_mismatch',
      `Refusing to migrate: migration.sql of applied migrations changed since they were applied: ` +
        `${changed.join(', ')}. Restore the applied files and put the change in a new migration.`,
    );
  }
}

/** Runs one migration and its bookkeeping in one transaction; a failure rolls back and is recorded. */
async function applyOne(client: pg.Client, { name, script }: MigrationFile): Promise<void> {
  const id = randomUUID();
  const checksum = migrationChecksum(script);
  const startedAt = new Date();
  await client.query('BEGIN');
  try {
    await client.query(
      'INSERT INTO _prisma_migrations (id, checksum, started_at, migration_name) VALUES ($1, $2, $3, $4)',
      [id, checksum, startedAt, name],
    );
    await client.query(script);
    await client.query(
      `UPDATE _prisma_migrations SET applied_steps_count = applied_steps_count + 1, finished_at = $2
       WHERE id = $1`,
      [id, new Date()],
    );
    await client.query('COMMIT');
  } catch (err) {
    const logs = describeFailure(err, script);
    let recorded = 'the failure is recorded in _prisma_migrations';
    try {
      await client.query('ROLLBACK');
      // Recorded like Prisma does, so neither tool applies later migrations before someone looks.
      await client.query(
        'INSERT INTO _prisma_migrations (id, checksum, started_at, migration_name, logs) VALUES ($1, $2, $3, $4, $5)',
        [id, checksum, startedAt, name, logs],
      );
    } catch (recordErr) {
      recorded = `recording the failure failed too (${String(recordErr)})`;
    }
    const message = `Migration ${name} failed and was rolled back; ${recorded}.\n${logs}`;
    throw new MigrationError('migration_failed', message, { cause: err });
  }
}

function describeFailure(err: unknown, script: string): string {
  if (!(err instanceof pg.DatabaseError)) return String(err);
  const lines = [`Database error code: ${err.code}`, '', 'Database error:', `ERROR: ${err.message}`];
  if (err.detail) lines.push(`DETAIL: ${err.detail}`);
  if (err.hint) lines.push(`HINT: ${err.hint}`);
  if (err.position) {
    const line = script.slice(0, Number(err.position) - 1).split('\n').length;
    lines.push('', `Position: line ${line} of migration.sql`);
  }
  return lines.join('\n');
}

function pgCode(err: unknown): string | undefined {
  return (err as { code?: string } | null)?.code;
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function indent(text: string): string {
  return text.replace(/^/gm, '    ');
}
