import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import wasm from '@prisma/prisma-schema-wasm';
import type { ColumnShape, ForeignKeyShape, IndexShape, SchemaShape, TableShape } from './schema-shape.ts';
import { defaultConstraintName } from './schema-shape.ts';

// The subset of Prisma's DMMF (from its own schema parser) that the drift check reads.
interface Dmmf {
  enums: { name: string; dbName: string | null; values: { name: string; dbName: string | null }[] }[];
  models: DmmfModel[];
  indexes: DmmfIndex[];
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  schema: string | null;
  fields: DmmfField[];
}
interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: 'scalar' | 'enum' | 'object' | 'unsupported';
  type: string;
  isList: boolean;
  isRequired: boolean;
  nativeType?: [string, string[]] | null;
  default?: unknown;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
}
interface DmmfIndex {
  model: string;
  type: 'id' | 'unique' | 'normal' | 'fulltext';
  dbName?: string | null;
  algorithm?: string;
  fields: { name: string; sortOrder?: 'asc' | 'desc' }[];
}

const SCALAR_TYPES: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Float: 'double precision',
  Boolean: 'boolean',
  DateTime: 'timestamp(3) without time zone',
  Json: 'jsonb',
  Decimal: 'numeric(65,30)',
  Bytes: 'bytea',
};

const NATIVE_TYPES: Record<string, string> = {
  Text: 'text',
  VarChar: 'character varying',
  Char: 'character',
  Uuid: 'uuid',
  SmallInt: 'smallint',
  Integer: 'integer',
  BigInt: 'bigint',
  Real: 'real',
  DoublePrecision: 'double precision',
  Decimal: 'numeric',
  Boolean: 'boolean',
  Date: 'date',
  Timestamp: 'timestamp without time zone',
  Timestamptz: 'timestamp with time zone',
  Time: 'time without time zone',
  Timetz: 'time with time zone',
  Json: 'json',
  JsonB: 'jsonb',
  ByteA: 'bytea',
  Inet: 'inet',
  Citext: 'citext',
};

/** What a schema.prisma file implies for a PostgreSQL schema, read with Prisma's own parser. */
export async function schemaFromPrisma(schemaPath: string): Promise<SchemaShape> {
  const source = await readFile(schemaPath, 'utf8');
  const params = { prismaSchema: [[basename(schemaPath), source]], noColor: true };
  let dmmf: Dmmf;
  try {
    dmmf = (JSON.parse(wasm.get_dmmf(JSON.stringify(params))) as { datamodel: Dmmf }).datamodel;
  } catch (err) {
    throw new Error(`${schemaPath} is not a valid Prisma schema: ${(err as Error).message}`, { cause: err });
  }
  return shapeOf(dmmf);
}

function shapeOf(dmmf: Dmmf): SchemaShape {
  const enumDbNames = new Map(dmmf.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const models = new Map(dmmf.models.map((m) => [m.name, m]));
  const tables = new Map<string, TableShape>();
  for (const model of dmmf.models) {
    if (model.schema !== null)
      throw new Error(`model ${model.name}: multiSchema is not supported by the drift check`);
    const columns = new Map<string, ColumnShape>();
    for (const field of model.fields) {
      if (field.kind === 'scalar' || field.kind === 'enum') {
        columns.set(columnName(field), columnOf(model, field, dmmf, enumDbNames));
      }
    }
    tables.set(tableName(model), {
      columns,
      primaryKey: null,
      indexes: new Map(),
      foreignKeys: model.fields.flatMap((f) => foreignKeyOf(model, f, models)),
    });
  }
  for (const index of dmmf.indexes) addIndex(tables, models, index);
  return {
    tables,
    enums: new Map(dmmf.enums.map((e) => [e.dbName ?? e.name, e.values.map((v) => v.dbName ?? v.name)])),
  };
}

function columnOf(
  model: DmmfModel,
  field: DmmfField,
  dmmf: Dmmf,
  enumDbNames: Map<string, string>,
): ColumnShape {
  const base = field.kind === 'enum' ? `"${enumDbNames.get(field.type)}"` : scalarType(model, field);
  return {
    type: field.isList ? `${base}[]` : base,
    nullable: field.isList ? null : !field.isRequired,
    default: defaultOf(field, dmmf),
  };
}

function scalarType(model: DmmfModel, field: DmmfField): string {
  if (!field.nativeType) {
    const type = SCALAR_TYPES[field.type];
    if (type === undefined)
      throw new Error(`${model.name}.${field.name}: type ${field.type} is not supported`);
    return type;
  }
  const [name, args] = field.nativeType;
  const type = NATIVE_TYPES[name];
  if (type === undefined) throw new Error(`${model.name}.${field.name}: @db.${name} is not supported`);
  if (args.length === 0) return type;
  // format_type() puts the precision of time types after their first word: timestamp(6) with time zone.
  if (/^time/.test(type)) return type.replace(' ', `(${args.join(',')}) `);
  return `${type}(${args.join(',')})`;
}

/** The default as normalizeDefault() renders the database's; `undefined` where it is not checked. */
function defaultOf(field: DmmfField, dmmf: Dmmf): string | null | undefined {
  const value = field.default;
  if (value === undefined) return null;
  if (Array.isArray(value)) return value.length === 0 ? '[]' : undefined;
  if (typeof value === 'object' && value !== null) {
    const name = (value as { name: string }).name;
    if (name === 'now') return 'now()';
    if (name === 'autoincrement') return 'autoincrement()';
    if (['uuid', 'cuid', 'nanoid', 'ulid'].includes(name)) return null; // generated by the client
    return undefined; // dbgenerated(), sequence(): the expression is written by hand
  }
  if (field.kind === 'enum') {
    const values = dmmf.enums.find((e) => e.name === field.type)?.values;
    const match = values?.find((v) => v.name === value);
    return match?.dbName ?? String(value);
  }
  if (field.type === 'DateTime' || field.type === 'Decimal' || field.type === 'Bytes') return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function foreignKeyOf(model: DmmfModel, field: DmmfField, models: Map<string, DmmfModel>): ForeignKeyShape[] {
  if (field.kind !== 'object' || !field.relationFromFields?.length) return [];
  const target = models.get(field.type)!;
  const from = field.relationFromFields.map((name) => fieldOf(model, name));
  return [
    {
      columns: from.map(columnName),
      referencedTable: tableName(target),
      referencedColumns: (field.relationToFields ?? []).map((name) => columnName(fieldOf(target, name))),
      // Prisma's defaults when the relation does not say.
      onDelete: field.relationOnDelete ?? (from.every((f) => f.isRequired) ? 'Restrict' : 'SetNull'),
      onUpdate: field.relationOnUpdate ?? 'Cascade',
    },
  ];
}

function addIndex(tables: Map<string, TableShape>, models: Map<string, DmmfModel>, index: DmmfIndex): void {
  const model = models.get(index.model)!;
  const table = tableName(model);
  const shape = tables.get(table)!;
  const columns = index.fields.map((f) => columnName(fieldOf(model, f.name)));
  if (index.type === 'id') {
    shape.primaryKey = { name: index.dbName ?? defaultConstraintName(table, columns, 'pkey'), columns };
    return;
  }
  if (index.type === 'fulltext') throw new Error(`model ${model.name}: fulltext indexes are not supported`);
  const unique = index.type === 'unique';
  const name = index.dbName ?? defaultConstraintName(table, columns, unique ? 'key' : 'idx');
  const indexShape: IndexShape = {
    unique,
    method: (index.algorithm ?? 'BTree').toLowerCase(),
    columns: index.fields.map((f, i) => `${columns[i]}${f.sortOrder === 'desc' ? ' DESC' : ''}`),
    predicate: null,
  };
  shape.indexes.set(name, indexShape);
}

function fieldOf(model: DmmfModel, name: string): DmmfField {
  const field = model.fields.find((f) => f.name === name);
  if (!field) throw new Error(`model ${model.name} has no field ${name}`);
  return field;
}

function tableName(model: DmmfModel): string {
  return model.dbName ?? model.name;
}

function columnName(field: DmmfField): string {
  return field.dbName ?? field.name;
}
