import type pg from 'pg';
import type { SchemaShape, TableShape } from './schema-shape.ts';
import { normalizeDefault } from './schema-shape.ts';

const REFERENTIAL_ACTIONS: Record<string, string> = {
  a: 'NoAction',
  r: 'Restrict',
  c: 'Cascade',
  n: 'SetNull',
  d: 'SetDefault',
};

/** The tables (except `_prisma_migrations`), columns, keys, indexes and enums of one schema, from pg_catalog. */
export async function schemaFromDatabase(client: pg.Client, schema: string): Promise<SchemaShape> {
  const tables = new Map<string, TableShape>();
  const table = (name: string): TableShape => {
    let shape = tables.get(name);
    if (!shape) {
      shape = { columns: new Map(), primaryKey: null, indexes: new Map(), foreignKeys: [] };
      tables.set(name, shape);
    }
    return shape;
  };

  for (const row of await columns(client, schema)) {
    table(row.table_name).columns.set(row.name, {
      type: columnType(row),
      nullable: !row.not_null,
      default: row.identity ? 'autoincrement()' : normalizeDefault(row.default),
    });
  }
  for (const row of await indexes(client, schema)) {
    const keys = row.columns
      .slice(0, row.key_count)
      .map((column, i) => withOrdering(column, row.options[i] ?? 0));
    const included = row.columns.slice(row.key_count).map((column) => `INCLUDE ${column}`);
    if (row.primary) {
      table(row.table_name).primaryKey = { name: row.name, columns: [...keys, ...included] };
    } else {
      table(row.table_name).indexes.set(row.name, {
        unique: row.unique,
        method: row.method,
        columns: [...keys, ...included],
        predicate: row.predicate,
      });
    }
  }
  for (const row of await foreignKeys(client, schema)) {
    table(row.table_name).foreignKeys.push({
      columns: row.columns,
      referencedTable: row.referenced_table,
      referencedColumns: row.referenced_columns,
      onDelete: REFERENTIAL_ACTIONS[row.on_delete] ?? row.on_delete,
      onUpdate: REFERENTIAL_ACTIONS[row.on_update] ?? row.on_update,
    });
  }
  tables.delete('_prisma_migrations');
  return { tables, enums: await enums(client, schema) };
}

interface ColumnRow {
  table_name: string;
  name: string;
  type: string;
  typtype: string;
  typname: string;
  elem_typtype: string | null;
  elem_typname: string | null;
  not_null: boolean;
  default: string | null;
  identity: boolean;
}

async function columns(client: pg.Client, schema: string): Promise<ColumnRow[]> {
  const { rows } = await client.query<ColumnRow>(
    `SELECT c.relname AS table_name, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
            t.typtype, t.typname, et.typtype AS elem_typtype, et.typname AS elem_typname,
            a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS default, a.attidentity <> '' AS identity
     FROM pg_attribute a
     JOIN pg_class c ON c.oid = a.attrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_type t ON t.oid = a.atttypid
     LEFT JOIN pg_type et ON et.oid = t.typelem AND t.typcategory = 'A'
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY c.relname, a.attnum`,
    [schema],
  );
  return rows;
}

function columnType(row: ColumnRow): string {
  // Spelled without format_type()'s schema qualification or optional quotes, as the Prisma side does.
  if (row.typtype === 'e') return `"${row.typname}"`;
  if (row.elem_typtype === 'e') return `"${row.elem_typname}"[]`;
  return row.type;
}

interface IndexRow {
  table_name: string;
  name: string;
  primary: boolean;
  unique: boolean;
  method: string;
  predicate: string | null;
  columns: string[];
  options: number[];
  key_count: number;
}

async function indexes(client: pg.Client, schema: string): Promise<IndexRow[]> {
  const { rows } = await client.query<IndexRow>(
    `SELECT t.relname AS table_name, i.relname AS name, ix.indisprimary AS primary, ix.indisunique AS unique,
            am.amname AS method, pg_get_expr(ix.indpred, ix.indrelid) AS predicate,
            array(
              SELECT coalesce(a.attname::text, pg_get_indexdef(ix.indexrelid, k.ord::int, true))
              FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
              LEFT JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum AND k.attnum > 0
              ORDER BY k.ord
            ) AS columns,
            ix.indoption::int2[] AS options, ix.indnkeyatts AS key_count
     FROM pg_index ix
     JOIN pg_class i ON i.oid = ix.indexrelid
     JOIN pg_class t ON t.oid = ix.indrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     JOIN pg_am am ON am.oid = i.relam
     WHERE n.nspname = $1 AND t.relkind IN ('r', 'p')`,
    [schema],
  );
  return rows;
}

/** `col`, `col DESC`, plus the NULLS placement when it is not the default for that direction. */
function withOrdering(column: string, option: number): string {
  const descending = (option & 1) !== 0;
  const nullsFirst = (option & 2) !== 0;
  const nulls = nullsFirst === descending ? '' : nullsFirst ? ' NULLS FIRST' : ' NULLS LAST';
  return `${column}${descending ? ' DESC' : ''}${nulls}`;
}

interface ForeignKeyRow {
  table_name: string;
  referenced_table: string;
  columns: string[];
  referenced_columns: string[];
  on_delete: string;
  on_update: string;
}

async function foreignKeys(client: pg.Client, schema: string): Promise<ForeignKeyRow[]> {
  const { rows } = await client.query<ForeignKeyRow>(
    `SELECT t.relname AS table_name, rt.relname AS referenced_table,
            array(
              SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
              JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord
            ) AS columns,
            array(
              SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
              JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.ord
            ) AS referenced_columns,
            con.confdeltype::text AS on_delete, con.confupdtype::text AS on_update
     FROM pg_constraint con
     JOIN pg_class t ON t.oid = con.conrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     JOIN pg_class rt ON rt.oid = con.confrelid
     WHERE con.contype = 'f' AND n.nspname = $1`,
    [schema],
  );
  return rows;
}

async function enums(client: pg.Client, schema: string): Promise<Map<string, string[]>> {
  const { rows } = await client.query<{ name: string; values: string[] }>(
    `SELECT t.typname AS name,
            array(SELECT e.enumlabel::text FROM pg_enum e WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) AS values
     FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE t.typtype = 'e' AND n.nspname = $1`,
    [schema],
  );
  return new Map(rows.map((row) => [row.name, row.values]));
}
