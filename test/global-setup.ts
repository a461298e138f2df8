import { applyMigrations } from '@scrapejobs/db';
import pg from 'pg';
import { ADMIN_URL, TEMPLATE_DB, urlFor } from './support/database.ts';

/** Migrates a fresh template database once; each test file copies it (CREATE DATABASE … TEMPLATE). */
export default async function globalSetup(): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${TEMPLATE_DB}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${TEMPLATE_DB}"`);
  } finally {
    await client.end();
  }
  await applyMigrations(urlFor(TEMPLATE_DB));
}
