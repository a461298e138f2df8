import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

/** The largest schema an extraction takes (docs/api.md §24), in bytes of its JSON. */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** Top-level properties an extracted object keeps at most: each is a field of its record. */
export const MAX_FIELDS = 100;

const OPTIONS = { strict: false, allErrors: true, validateFormats: false } as const;

/** The ajv of the schema's dialect: draft 2019-09, 2020-12 (and none), else draft-07 (and 06). */
function ajvFor(schema: Record<string, unknown>): Ajv {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (dialect.includes('2019-09')) return new Ajv2019(OPTIONS);
  if (dialect === '' || dialect.includes('2020-12')) return new Ajv2020(OPTIONS);
  return new Ajv(OPTIONS);
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A compiled extraction schema: checks a value, and names the record's fields. */
export interface ExtractSchema {
  /** The top-level property names, in the schema's order. */
  fields: string[];
  /** Null when `value` is valid, else what is wrong (for the repair request and the warning). */
  check(value: unknown): string | null;
}

/** Compiles a schema given for an extraction; throws an Error saying what is wrong with it. */
export function compileExtractSchema(schema: unknown): ExtractSchema {
  if (!isObject(schema)) throw new Error('must be a JSON Schema object');
  if (Buffer.byteLength(JSON.stringify(schema)) > MAX_SCHEMA_BYTES)
    throw new Error(`must be at most ${MAX_SCHEMA_BYTES / 1024} KiB of JSON`);
  const type = schema.type;
  if (type !== undefined && type !== 'object' && !(Array.isArray(type) && type.includes('object')))
    throw new Error('must describe an object (type "object"): each of its top-level properties is a field');
  const properties = isObject(schema.properties) ? Object.keys(schema.properties) : [];
  if (properties.length > MAX_FIELDS) throw new Error(`must have at most ${MAX_FIELDS} top-level properties`);
  let validate: ValidateFunction;
  try {
    validate = ajvFor(schema).compile(schema as AnySchema) as ValidateFunction;
  } catch (err) {
    throw new Error(`is not a valid JSON Schema: ${(err as Error).message}`);
  }
  return {
    fields: properties,
    check: (value) => {
      if (!isObject(value)) return 'the answer must be a JSON object';
      return validate(value) ? null : describeErrors(validate.errors ?? []);
    },
  };
}

/** Ajv's errors as one line each, at most ten. */
function describeErrors(errors: readonly ErrorObject[]): string {
  const lines = errors.slice(0, 10).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
  if (errors.length > 10) lines.push(`and ${errors.length - 10} more`);
  return lines.join('; ');
}

/** Why `schema` cannot be an extraction's schema, or null when it can. */
export function extractSchemaProblem(schema: unknown): string | null {
  try {
    compileExtractSchema(schema);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}
