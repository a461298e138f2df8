import type { Request } from 'express';
import { field } from '../http/kit.ts';
import { emptyJobForm, type JobFormValues } from '../views/jobs.ts';

const MAX_ROWS = 50;

/** The job form as submitted (kept as typed, to show it again with errors). */
export function readJobForm(req: Request): JobFormValues {
  const rows = Math.min(MAX_ROWS, Math.max(1, Number.parseInt(field(req, 'q_rows'), 10) || 3));
  return {
    name: field(req, 'name'),
    source: field(req, 'source').trim(),
    rateLimit: field(req, 'rate_limit').trim(),
    queries: Array.from({ length: rows }, (_, i) => ({
      name: field(req, `q_name_${i}`).trim(),
      type: field(req, `q_type_${i}`) || 'css',
      query: field(req, `q_query_${i}`),
      join: field(req, `q_join_${i}`) === '1',
    })),
    schedule: field(req, 'schedule') === '1',
    minutes: field(req, 'minutes'),
    hours: field(req, 'hours'),
    days: field(req, 'days'),
    timezone: field(req, 'timezone').trim(),
    render: field(req, 'render') === '1',
  };
}

export const withExtraRow = (v: JobFormValues): JobFormValues =>
  v.queries.length >= MAX_ROWS ? v : { ...v, queries: [...v.queries, { ...emptyJobForm().queries[0]! }] };

// Numbers stay numbers; anything else is passed on as text, so the API's validation names it.
const list = (s: string): (number | string)[] =>
  s
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : p));

const numberOrText = (s: string): number | string => (s !== '' && Number.isFinite(Number(s)) ? Number(s) : s);

/**
 * The POST /jobs body the form stands for, and for each query in it the form row it came from
 * (empty rows are left out), so errors at `queries[i]` can name the row the person sees.
 */
export function toCreateBody(v: JobFormValues): { body: Record<string, unknown>; rows: number[] } {
  const rows: number[] = [];
  const queries = v.queries.flatMap((q, i) => {
    if (!q.name && !q.query) return [];
    rows.push(i);
    return [{ name: q.name, type: q.type, query: q.query, join: q.join }];
  });
  const scheduling: Record<string, unknown> = {};
  if (v.schedule) {
    if (v.minutes.trim()) scheduling.minutes = list(v.minutes);
    if (v.hours.trim()) scheduling.hours = list(v.hours);
    if (v.days.trim()) scheduling.days = list(v.days);
    if (v.timezone) scheduling.timezone = v.timezone;
  }
  return {
    body: {
      name: v.name,
      source: v.source,
      ...(v.rateLimit !== '' && { rate_limit: numberOrText(v.rateLimit) }),
      queries,
      scheduling: v.schedule ? scheduling : null,
      render_config: v.render ? { enabled: true } : null,
    },
    rows,
  };
}

/** Error paths of the API renamed for the form: `queries[1].query` becomes `query row 3: query`. */
export function formErrors(details: Record<string, string>, rows: number[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [path, message] of Object.entries(details)) {
    const m = /^queries\[(\d+)\]\.?(.*)$/.exec(path);
    if (m) out[`query row ${(rows[Number(m[1])] ?? Number(m[1])) + 1}${m[2] ? `: ${m[2]}` : ''}`] = message;
    else out[path] = message;
  }
  return out;
}
