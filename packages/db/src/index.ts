export type { Database, DatabaseOptions } from './client.ts';
export { createDatabase, isDatabaseUnavailable } from './client.ts';
export { Prisma } from './generated/prisma/client.ts';
export type { DeliveryStatus, JobStatus, Mode, RunStatus, RunTrigger } from './generated/prisma/enums.ts';
export type * from './generated/prisma/models.ts';
export type { IdPrefix } from './ids.ts';
export { isId, newId } from './ids.ts';
export { applyMigrations } from './internal/migrate.ts';
export { MigrationError } from './internal/migration-error.ts';
