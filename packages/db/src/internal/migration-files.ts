import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MigrationError } from './migration-error.ts';

export interface MigrationFile {
  /** The folder name, as recorded in `_prisma_migrations.migration_name`. */
  name: string;
  script: string;
}

/**
 * The migrations of a Prisma migrations folder in the order Prisma applies them (folder name order),
 * after checking that `migration_lock.toml`, when present, names PostgreSQL.
 */
export async function readMigrationsDirectory(dir: string): Promise<MigrationFile[]> {
  await assertPostgresLockfile(dir);
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return Promise.all(
    names.map(async (name) => {
      try {
        return { name, script: await readFile(join(dir, name, 'migration.sql'), 'utf8') };
      } catch (err) {
        throw new MigrationError(
          'invalid_migrations_dir',
          `Migration folder ${name} has no readable migration.sql`,
          {
            cause: err,
          },
        );
      }
    }),
  );
}

async function assertPostgresLockfile(dir: string): Promise<void> {
  let lockfile: string;
  try {
    lockfile = await readFile(join(dir, 'migration_lock.toml'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // Prisma accepts a folder without one
    throw err;
  }
  const provider = /^\s*provider\s*=\s*"([^"]*)"/m.exec(lockfile)?.[1];
  if (provider !== 'postgresql') {
    throw new MigrationError(
      'provider_mismatch',
      `${join(dir, 'migration_lock.toml')} names provider ${JSON.stringify(provider)}, not "postgresql"`,
    );
  }
}

/** Prisma's checksum of a migration script: the zero-padded lowercase hex SHA-256 of its text. */
export function migrationChecksum(script: string): string {
  return createHash('sha256').update(script, 'utf8').digest('hex');
}

/**
 * Whether a script matches a recorded checksum the way Prisma's engine decides it: line endings
 * may differ (git may have converted them), and old engines wrote hex bytes without zero padding.
 */
export function scriptMatchesChecksum(script: string, checksum: string): boolean {
  const variants = [script, script.replaceAll('\r\n', '\n'), script.replaceAll('\n', '\r\n')];
  return variants.some((variant) => {
    const digest = createHash('sha256').update(variant, 'utf8').digest();
    const rendered = checksum.length === 64 ? digest.toString('hex') : unpaddedHex(digest);
    return rendered === checksum;
  });
}

function unpaddedHex(bytes: Buffer): string {
  return Array.from(bytes, (byte) => byte.toString(16)).join('');
}
