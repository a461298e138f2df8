import pg from 'pg';
import { ADMIN_URL } from './support/database.ts';

export default async function globalTeardown(): Promise<void> {
  const name = process.env.TEST_TEMPLATE_DB;
  if (!name) return;
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
