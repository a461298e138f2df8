export type MigrationErrorCode =
  /** An applied migration's migration.sql no longer matches the checksum recorded for it. */
  | 'checksum_mismatch'
  /** `_prisma_migrations` records a migration that failed and was not marked rolled back. */
  | 'failed_migration_recorded'
  /** A migration failed now; its changes were rolled back and the failure recorded. */
  | 'migration_failed'
  /** The database already has tables but no `_prisma_migrations` (needs a baseline first). */
  | 'database_not_empty'
  /** Another process held the migration lock for longer than the lock timeout. */
  | 'lock_timeout'
  | 'provider_mismatch'
  | 'invalid_migrations_dir';

/** Why applying migrations refused or failed. Only `lock_timeout` can pass on a later retry. */
export class MigrationError extends Error {
  override readonly name = 'MigrationError';
  readonly code: MigrationErrorCode;

  constructor(code: MigrationErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}
