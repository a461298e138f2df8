import { randomBytes } from 'node:crypto';
import pg from 'pg';

// Test helpers: each test file works in databases of its own on the server that `adminUrl` reaches.

/** The URL of a database that does not exist yet, named `<prefix>_<random>`, on the server of `adminUrl`. */
export function throwawayDatabaseUrl(adminUrl: string, prefix: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${prefix}_${randomBytes(6).toString('hex')}`;
  return url.toString();
}

/** Drops a throwaway database, closing whatever sessions are still connected to it. */
export async function dropDatabase(adminUrl: string, databaseUrl: string): Promise<void> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  await withClient(adminUrl, (admin) =>
    admin.query(`DROP DATABASE IF EXISTS "${name.replaceAll('"', '""')}" WITH (FORCE)`),
  );
}

/** Runs `fn` with a connected client and closes it afterwards. */
export async function withClient<T>(databaseUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
