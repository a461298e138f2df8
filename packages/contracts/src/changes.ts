import { z } from 'zod';

/** The kinds of change a run's item can have against its base run (docs/api.md §13); `unchanged` is only counted. */
export const CHANGE_TYPES = ['added', 'removed', 'changed'] as const;
export type ChangeTypeName = (typeof CHANGE_TYPES)[number];

/** Why an ended run's extraction is degraded (docs/api.md §13). */
export const HEALTH_CODES = ['EMPTY_QUERY', 'RECORDS_DROP'] as const;

/** Most names a change-tracking key may have. */
export const MAX_KEY_NAMES = 5;

/**
 * The `change_tracking` job field (docs/api.md §13): the names (`url` or query names; checked
 * against the job's queries by the API) whose values identify an item; none = the whole record.
 */
export const changeTrackingSchema = z.strictObject({
  key: z
    .array(z.string().min(1).max(64))
    .max(MAX_KEY_NAMES)
    .superRefine((names, ctx) => {
      names.forEach((name, i) => {
        if (names.indexOf(name) !== i)
          ctx.addIssue({ code: 'custom', path: [i], message: `duplicate name "${name}"` });
      });
    })
    .default([]),
  /** Each page's markdown is compared with the base run's too (docs/api.md §17); shown only when set. */
  content: z.boolean().optional(),
});

export type ChangeTracking = z.output<typeof changeTrackingSchema>;

/** A run's counts against its base run. */
export const runChangesSchema = z.object({
  added: z.int(),
  removed: z.int(),
  changed: z.int(),
  unchanged: z.int(),
});

export const healthSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  reasons: z.array(
    z.object({ code: z.enum(HEALTH_CODES), query: z.string().nullable(), message: z.string() }),
  ),
});

export type RunHealth = z.infer<typeof healthSchema>;

/** GET /jobs/{id}/runs/{run_id}/changes query string (docs/api.md §13). */
export const listChangesQuerySchema = z.strictObject({
  type: z.enum(CHANGE_TYPES).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(200).optional(),
});

const record = z.record(z.string(), z.unknown()).describe('{url, …fields}');

export const changeSchema = z.object({
  type: z.enum(CHANGE_TYPES),
  key: record.describe('the key names with their values; the whole record when the key is empty'),
  data: record.nullable().describe('the record in this run; null when removed'),
  previous: record.nullable().describe('the record in the base run; null when added'),
  changed_fields: z.array(z.string()).describe('the names whose values differ; empty unless changed'),
});

/** A page whose markdown was added, removed or changed (change_tracking.content, docs/api.md §17). */
export const pageChangeSchema = z.object({
  kind: z.literal('page'),
  type: z.enum(CHANGE_TYPES),
  url: z.string(),
  diff: z.string().describe('a unified diff of the markdown, at most 64 KiB'),
});

export const changeListSchema = z.object({
  job_id: z.string(),
  run_id: z.string(),
  base_run_id: z.string().nullable(),
  summary: runChangesSchema.extend({
    duplicate_keys: z.int(),
    pages: runChangesSchema.optional().describe('with change_tracking.content: the pages compared'),
  }),
  changes: z.array(z.union([changeSchema, pageChangeSchema])),
  count: z.int(),
  next_cursor: z.string().nullable(),
});

export type ChangeView = z.infer<typeof changeSchema>;
export type PageChangeView = z.infer<typeof pageChangeSchema>;
export type ChangeSummary = z.infer<typeof changeListSchema>['summary'];

/** `changes=` of GET /jobs/{id}/download: a comma list of change types, each once. */
export const changesParamSchema = z
  .string()
  .max(100)
  .transform((s, ctx) => {
    const words = s.split(',').map((w) => w.trim());
    for (const word of words)
      if (!(CHANGE_TYPES as readonly string[]).includes(word)) {
        ctx.addIssue({
          code: 'custom',
          message: `"${word}" is not one of ${CHANGE_TYPES.join(', ')}`,
        });
        return z.NEVER;
      }
    return [...new Set(words)] as ChangeTypeName[];
  })
  .describe(
    'only the items of these kinds (a comma list of added, changed, removed), with a first column `change`',
  );

/**
 * The key names that are neither `url` nor a field of the job's records (a query name, or a
 * top-level property of its `extract.schema`), as details at their paths.
 */
export function unknownKeyNames(
  key: readonly unknown[],
  fieldNames: readonly string[],
): Record<string, string> {
  const details: Record<string, string> = {};
  key.forEach((name, i) => {
    if (typeof name === 'string' && name !== 'url' && !fieldNames.includes(name))
      details[`change_tracking.key[${i}]`] =
        `"${name}" is neither url, a query name of the job, nor a top-level property of its extract.schema`;
  });
  return details;
}
