// The parts of a PostgreSQL schema that the drift check compares, in one form for both sides:
// what schema.prisma implies and what the migrated database has.

export interface SchemaShape {
  tables: Map<string, TableShape>;
  /** Enum type name → its values. */
  enums: Map<string, string[]>;
}

export interface TableShape {
  columns: Map<string, ColumnShape>;
  primaryKey: { name: string; columns: string[] } | null;
  /** Unique and plain indexes (not the primary key's), by name. */
  indexes: Map<string, IndexShape>;
  foreignKeys: ForeignKeyShape[];
}

export interface ColumnShape {
  /** As PostgreSQL's format_type() writes it (`timestamp(3) without time zone`); enums as `"Name"`. */
  type: string;
  /** `null` when either is right (Prisma writes list columns without NOT NULL but never stores NULL). */
  nullable: boolean | null;
  /** Normalized (see normalizeDefault); `undefined` when schema.prisma's default is not checked. */
  default: string | null | undefined;
}

export interface IndexShape {
  unique: boolean;
  /** Access method: btree, hash, gin… */
  method: string;
  /** Column names, `name DESC` when descending. */
  columns: string[];
  predicate: string | null;
}

export interface ForeignKeyShape {
  columns: string[];
  referencedTable: string;
  referencedColumns: string[];
  /** Prisma's spelling of referential actions: Cascade, Restrict, NoAction, SetNull, SetDefault. */
  onDelete: string;
  onUpdate: string;
}

/** PostgreSQL's limit on identifier length, which Prisma's default constraint names respect. */
const MAX_IDENTIFIER_BYTES = 63;

/** The name Prisma gives a constraint or index that schema.prisma does not name with `map:`. */
export function defaultConstraintName(
  table: string,
  columns: string[],
  kind: 'pkey' | 'key' | 'idx',
): string {
  const suffix = `_${kind}`;
  const base = kind === 'pkey' ? table : `${table}_${columns.join('_')}`;
  return truncateBytes(base, MAX_IDENTIFIER_BYTES - suffix.length) + suffix;
}

function truncateBytes(text: string, maxBytes: number): string {
  let out = '';
  let bytes = 0;
  for (const char of text) {
    bytes += Buffer.byteLength(char);
    if (bytes > maxBytes) break;
    out += char;
  }
  return out;
}

/**
 * A column default as the drift check compares it: sequences as `autoincrement()`, the current time as
 * `now()`, quoted literals without their cast (`'x'::text` → `x`), empty arrays as `[]`.
 */
export function normalizeDefault(expression: string | null): string | null {
  if (expression === null) return null;
  if (/^nextval\('.*'::regclass\)$/.test(expression)) return 'autoincrement()';
  if (expression === 'CURRENT_TIMESTAMP' || expression === 'now()') return 'now()';
  if (/^ARRAY\[\]::.+\[\]$/.test(expression)) return '[]';
  const literal = /^'((?:[^']|'')*)'::[^']+$/.exec(expression);
  return literal ? literal[1]!.replaceAll("''", "'") : expression;
}

export function describeIndex(index: IndexShape): string {
  const where = index.predicate === null ? '' : ` WHERE ${index.predicate}`;
  return `${index.unique ? 'UNIQUE ' : ''}${index.method} (${index.columns.join(', ')})${where}`;
}

export function describeForeignKey(fk: ForeignKeyShape): string {
  return `(${fk.columns.join(', ')}) → ${fk.referencedTable} (${fk.referencedColumns.join(', ')})`;
}
