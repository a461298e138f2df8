import { resolve } from 'node:path';
import pg from 'pg';
import { schemaFromDatabase } from './schema-from-database.ts';
import { schemaFromPrisma } from './schema-from-prisma.ts';
import type { ColumnShape, SchemaShape, TableShape } from './schema-shape.ts';
import { describeForeignKey, describeIndex } from './schema-shape.ts';

const DEFAULT_SCHEMA_PATH = resolve(import.meta.dirname, '../../../../prisma/schema.prisma');

/**
 * Where a migrated database disagrees with schema.prisma, one line per difference; empty when they agree.
 * Checks tables, columns (type, nullability, simple defaults), primary keys, indexes, foreign keys, enums.
 */
export async function findSchemaDrift(databaseUrl: string, schemaPath?: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const schema = new URL(databaseUrl).searchParams.get('schema') ?? 'public';
    return await schemaDriftOf(client, schema, schemaPath);
  } finally {
    await client.end();
  }
}

/** findSchemaDrift() over an open session, which sees that session's uncommitted changes too. */
export async function schemaDriftOf(
  client: pg.Client,
  schema: string,
  schemaPath: string = DEFAULT_SCHEMA_PATH,
): Promise<string[]> {
  return compareSchemas(await schemaFromPrisma(schemaPath), await schemaFromDatabase(client, schema));
}

/** The differences between what schema.prisma implies (`expected`) and what the database has (`actual`). */
function compareSchemas(expected: SchemaShape, actual: SchemaShape): string[] {
  const problems: string[] = [];
  for (const [name, table] of expected.tables) {
    const found = actual.tables.get(name);
    if (found) problems.push(...compareTables(name, table, found));
    else problems.push(`missing table ${name}`);
  }
  for (const name of actual.tables.keys()) {
    if (!expected.tables.has(name)) problems.push(`unexpected table ${name} (no model maps to it)`);
  }
  for (const [name, values] of expected.enums) {
    const found = actual.enums.get(name);
    if (!found) {
      problems.push(`missing enum "${name}"`);
      continue;
    }
    // Order is not compared: ALTER TYPE … ADD VALUE appends, which Prisma's own migrations do too.
    const missing = values.filter((v) => !found.includes(v));
    const extra = found.filter((v) => !values.includes(v));
    if (missing.length > 0) problems.push(`enum "${name}" lacks values ${missing.join(', ')}`);
    if (extra.length > 0) problems.push(`enum "${name}" has unexpected values ${extra.join(', ')}`);
  }
  for (const name of actual.enums.keys()) {
    if (!expected.enums.has(name)) problems.push(`unexpected enum "${name}"`);
  }
  return problems;
}

function compareTables(table: string, expected: TableShape, actual: TableShape): string[] {
  const problems: string[] = [];
  for (const [name, column] of expected.columns) {
    const found = actual.columns.get(name);
    if (found) problems.push(...compareColumns(`${table}.${name}`, column, found));
    else problems.push(`missing column ${table}.${name}`);
  }
  for (const name of actual.columns.keys()) {
    if (!expected.columns.has(name))
      problems.push(`unexpected column ${table}.${name} (no field maps to it)`);
  }

  const pk = (key: TableShape['primaryKey']) => (key ? `${key.name} (${key.columns.join(', ')})` : 'none');
  if (pk(expected.primaryKey) !== pk(actual.primaryKey)) {
    problems.push(`${table}: primary key is ${pk(actual.primaryKey)}, expected ${pk(expected.primaryKey)}`);
  }

  for (const [name, index] of expected.indexes) {
    const found = actual.indexes.get(name);
    if (!found) problems.push(`${table}: missing index ${name} ${describeIndex(index)}`);
    else if (describeIndex(found) !== describeIndex(index)) {
      problems.push(`${table}: index ${name} is ${describeIndex(found)}, expected ${describeIndex(index)}`);
    }
  }
  for (const [name, index] of actual.indexes) {
    if (!expected.indexes.has(name))
      problems.push(`${table}: unexpected index ${name} ${describeIndex(index)}`);
  }

  for (const fk of expected.foreignKeys) {
    const found = actual.foreignKeys.find((f) => describeForeignKey(f) === describeForeignKey(fk));
    const actions = (f: typeof fk) => `ON DELETE ${f.onDelete} ON UPDATE ${f.onUpdate}`;
    if (!found) problems.push(`${table}: missing foreign key ${describeForeignKey(fk)} ${actions(fk)}`);
    else if (actions(found) !== actions(fk)) {
      problems.push(
        `${table}: foreign key ${describeForeignKey(fk)} has ${actions(found)}, expected ${actions(fk)}`,
      );
    }
  }
  for (const fk of actual.foreignKeys) {
    if (!expected.foreignKeys.some((f) => describeForeignKey(f) === describeForeignKey(fk))) {
      problems.push(`${table}: unexpected foreign key ${describeForeignKey(fk)}`);
    }
  }
  return problems;
}

function compareColumns(column: string, expected: ColumnShape, actual: ColumnShape): string[] {
  const problems: string[] = [];
  if (expected.type !== actual.type) problems.push(`${column} is ${actual.type}, expected ${expected.type}`);
  if (expected.nullable !== null && expected.nullable !== actual.nullable) {
    problems.push(`${column} is ${actual.nullable ? 'nullable' : 'NOT NULL'}, expected the opposite`);
  }
  if (expected.default !== undefined && !sameDefault(expected.default, actual.default ?? null)) {
    problems.push(`${column} has default ${show(actual.default)}, expected ${show(expected.default)}`);
  }
  return problems;
}

function sameDefault(expected: string | null, actual: string | null): boolean {
  if (expected === actual) return true;
  // Numbers may be spelled differently (1 vs 1.0).
  if (expected === null || actual === null || expected.trim() === '' || actual.trim() === '') return false;
  return Number(expected) === Number(actual);
}

function show(value: string | null | undefined): string {
  return value === null || value === undefined ? 'none' : JSON.stringify(value);
}
