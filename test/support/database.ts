import { randomBytes } from 'node:crypto';
import { createDatabase, type Database } from '@scrapejobs/db';
import pg from 'pg';

export const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgresql://root@127.0.0.1:5432/postgres';

export const urlFor = (database: string) => {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
};

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  db: Database;
  drop(): Promise<void>;
}

/** A private database for one test file, copied from the migrated template (see global-setup). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = process.env.TEST_TEMPLATE_DB;
  if (!template)
    throw new Error('TEST_TEMPLATE_DB is unset: run the tests through jest (see test/global-setup.ts)');
  const name = `scrapejobs_t_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  const url = urlFor(name);
  const db = createDatabase({ url, max: 5 });
  return {
    name,
    url,
    db,
    async drop() {
      await db.$disconnect();
      await db.pool.end().catch(() => {});
      await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}
