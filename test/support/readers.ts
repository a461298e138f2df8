// Independent readers of the download formats, for the tests: each file is read back by a
// different implementation than the one that wrote it (csv-parse, SheetJS, psql, sqlite3).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import pg from 'pg';
import XLSX from 'xlsx';
import { ADMIN_URL, urlFor } from './database.ts';

export type Table = { columns: string[]; rows: (string | null)[][] };

export function readCsv(text: string): Table {
  const [columns = [], ...rows] = parse(text, { relax_column_count: false }) as string[][];
  return { columns, rows };
}

/** The one sheet's name and cells; an empty cell is null. */
export function readXlsx(file: Buffer): Table & { sheets: string[] } {
  const book = XLSX.read(file, { type: 'buffer' });
  const sheet = book.Sheets[book.SheetNames[0]!]!;
  const [columns = [], ...rows] = XLSX.utils.sheet_to_json<(string | null)[]>(sheet, {
    header: 1,
    defval: null,
    raw: false,
  });
  return { sheets: book.SheetNames, columns: columns as string[], rows };
}

function tempFile(name: string, content: string | Buffer): { path: string; done(): void } {
  const dir = mkdtempSync(join(os.tmpdir(), 'results-test-'));
  const path = join(dir, name);
  writeFileSync(path, content);
  return { path, done: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Loads a dump with the sqlite3 command-line shell into a new database and reads the table back. */
export function loadIntoSqlite(sql: string, table = 'scrape_results'): Table {
  const file = tempFile('dump.sql', sql);
  const db = join(file.path, '..', 'load.db');
  try {
    execFileSync('sqlite3', ['-bail', db, `.read ${file.path}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    const columns = (
      JSON.parse(
        execFileSync('sqlite3', ['-json', db, `SELECT name FROM pragma_table_info('${table}')`]).toString() ||
          '[]',
      ) as { name: string }[]
    ).map((c) => c.name);
    const out = execFileSync('sqlite3', ['-json', db, `SELECT * FROM "${table}" ORDER BY rowid`]).toString();
    const records = (out.trim() ? JSON.parse(out) : []) as Record<string, string | null>[];
    return { columns, rows: records.map((r) => columns.map((c) => r[c] ?? null)) };
  } finally {
    file.done();
  }
}

/** Loads a dump with psql (stopping at the first error) into a scratch database and reads it back. */
export async function loadIntoPostgres(sql: string, table = 'scrape_results'): Promise<Table> {
  const name = `scrapejobs_load_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const file = tempFile('dump.sql', sql);
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
    execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', urlFor(name), '-f', file.path], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const client = new pg.Client({ connectionString: urlFor(name) });
    await client.connect();
    try {
      const res = await client.query<(string | null)[]>({
        text: `SELECT * FROM "${table}" ORDER BY ctid`,
        rowMode: 'array',
      });
      return { columns: res.fields.map((f) => f.name), rows: res.rows };
    } finally {
      await client.end();
    }
  } finally {
    file.done();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}
