import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, test } from '@jest/globals';
import { ADMIN_URL } from '../../../test/support/database.ts';
import { dropDatabase, throwawayDatabaseUrl, withClient } from '../../../test/support/throwaway-database.ts';
import { newId } from './ids.ts';
import { applyMigrations } from './internal/migrate.ts';

const MIGRATIONS_DIR = resolve(import.meta.dirname, '../../../prisma/migrations');
const MIGRATION = '20261201120000_result_pages';
const url = throwawayDatabaseUrl(ADMIN_URL, 'scrapejobs_result_pages_test');
let dir = '';

afterAll(async () => {
  await dropDatabase(ADMIN_URL, url);
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('moves the records of the results table into pages, keeping their ids, order and values', async () => {
  dir = await mkdtemp(join(tmpdir(), 'scrapejobs-migrations-'));
  await cp(MIGRATIONS_DIR, join(dir, 'all'), { recursive: true });
  // Only the migrations before this one, as a database that has not had it yet.
  for (const name of await readdir(join(dir, 'all')))
    if (/^\d{14}_/.test(name) && name >= MIGRATION) await rm(join(dir, 'all', name), { recursive: true });
  await applyMigrations(url, join(dir, 'all'));

  // Ids of two times, so that ordering by run_id gives run 0 first.
  const runs = [newId('run', 1_000), newId('run', 2_000)];
  // Run 0: page 0 with three records, page 1 with one; run 1: page 0 with two. Inserted out of
  // row order, as nothing guaranteed the physical order.
  const old = [
    { run: 0, page: 0, row: 2, title: 'c' },
    { run: 0, page: 0, row: 0, title: 'a' },
    { run: 0, page: 0, row: 1, title: null },
    { run: 1, page: 0, row: 1, title: 'y' },
    { run: 0, page: 1, row: 0, title: 'd' },
    { run: 1, page: 0, row: 0, title: 'x' },
  ].map((r) => ({ ...r, id: newId('res') }));
  await withClient(url, async (c) => {
    await c.query(`INSERT INTO users (id, email) VALUES ('usr_1', 'a@example.com')`);
    await c.query(`INSERT INTO jobs (id, user_id, mode, name, source, queries, rate_limit, updated_at)
                   VALUES ('job_1', 'usr_1', 'test', 'j', 'https://example.com/', '[]', 60, now())`);
    for (const run of runs)
      await c.query(`INSERT INTO runs (id, job_id, trigger) VALUES ($1, 'job_1', 'manual')`, [run]);
    for (const r of old)
      await c.query(
        `INSERT INTO results (id, run_id, job_id, url, url_index, row_index, data, scraped_at)
         VALUES ($1, $2, 'job_1', $3, $4, $5, $6, '2026-01-02 03:04:05.678')`,
        [
          r.id,
          runs[r.run],
          `https://example.com/${r.page}`,
          r.page,
          r.row,
          JSON.stringify({ title: r.title }),
        ],
      );
  });

  await cp(join(MIGRATIONS_DIR, MIGRATION), join(dir, 'all', MIGRATION), { recursive: true });
  expect(await applyMigrations(url, join(dir, 'all'))).toEqual([MIGRATION]);

  const { pages, records } = await withClient(url, async (c) => ({
    pages: (
      await c.query('SELECT run_id, url_index, records, ids, data FROM result_pages ORDER BY run_id, seq')
    ).rows,
    records: (
      await c.query(
        `SELECT run_id, id, url, url_index, row_index, data, scraped_at FROM results ORDER BY run_id, seq`,
      )
    ).rows,
  }));
  const byRow = (run: number) =>
    old.filter((r) => r.run === run).sort((a, b) => a.page - b.page || a.row - b.row);
  expect(pages).toEqual([
    {
      run_id: runs[0],
      url_index: 0,
      records: 3,
      ids: byRow(0)
        .slice(0, 3)
        .map((r) => r.id),
      data: [{ title: 'a' }, { title: null }, { title: 'c' }],
    },
    { run_id: runs[0], url_index: 1, records: 1, ids: [byRow(0)[3]!.id], data: [{ title: 'd' }] },
    {
      run_id: runs[1],
      url_index: 0,
      records: 2,
      ids: byRow(1).map((r) => r.id),
      data: [{ title: 'x' }, { title: 'y' }],
    },
  ]);
  // The view lists them as the table did.
  expect(records.map((r) => [r.run_id, r.id, r.url, r.url_index, r.row_index, r.data.title])).toEqual(
    [...byRow(0), ...byRow(1)].map((r) => [
      runs[r.run],
      r.id,
      `https://example.com/${r.page}`,
      r.page,
      r.row,
      r.title,
    ]),
  );
  expect(records.every((r) => r.scraped_at.getTime() === new Date('2026-01-02T03:04:05.678').getTime())).toBe(
    true,
  );
  // New pages take sequence numbers after the migrated ones.
  const next = await withClient(url, (c) =>
    c.query<{ seq: string }>(
      `INSERT INTO result_pages (run_id, url_index, url, scraped_at, records, id_base, data)
       VALUES ($1, 2, 'https://example.com/2', now(), 1, 'X', '[{}]') RETURNING seq`,
      [runs[0]],
    ),
  );
  const maxOld = await withClient(url, (c) =>
    c.query<{ max: string }>('SELECT max(seq) FROM result_pages WHERE url_index < 2'),
  );
  expect(BigInt(next.rows[0]!.seq)).toBeGreaterThan(BigInt(maxOld.rows[0]!.max));
});
