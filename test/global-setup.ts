import { randomBytes } from 'node:crypto';
import { applyMigrations } from '@scrapejobs/db';
import pg from 'pg';
import { ADMIN_URL, urlFor } from './support/database.ts';

/**
 * Migrates a template database once per test run; each test file copies it
 * (CREATE DATABASE … TEMPLATE). The name is private to this run, so runs can overlap.
 */
export default async function globalSetup(): Promise<void> {
  const name = `scrapejobs_tpl_${randomBytes(5).toString('hex')}`;
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  await applyMigrations(urlFor(name));
  // Test workers are started after this and inherit the environment.
  process.env.TEST_TEMPLATE_DB = name;
  // The API, worker and command-line processes the tests start (hundreds) keep their compiled code
  // between starts: a start costs about half the CPU.
  process.env.NODE_COMPILE_CACHE ??= new URL(
    '../node_modules/.cache/node-compile-cache',
    import.meta.url,
  ).pathname;
}
