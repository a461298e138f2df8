import type { Request } from 'express';
import { field, fields } from '../http/kit.ts';
import type { TrackingFormValues } from '../views/changes.ts';
import type { ContentFormValues } from '../views/content.ts';
import { type CrawlFormValues, FOLLOW_ROWS } from '../views/crawl.ts';
import type { ExtractFormValues } from '../views/extract.ts';
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
    renderMode: field(req, 'render_mode') || 'auto',
    content: {
      formats: fields(req, 'formats'),
      onlyMainContent: field(req, 'content_main') === '1',
      includeTags: field(req, 'content_include'),
      excludeTags: field(req, 'content_exclude'),
    },
    extract: { schema: field(req, 'extract_schema').trim(), prompt: field(req, 'extract_prompt').trim() },
    crawl: readCrawlForm(req),
    tracking: {
      enabled: field(req, 'change_tracking') === '1',
      key: field(req, 'change_tracking_key').trim(),
      content: field(req, 'change_tracking_content') === '1',
    },
  };
}

function readCrawlForm(req: Request): CrawlFormValues {
  const on = (name: string) => field(req, name) === '1';
  return {
    enabled: on('crawl'),
    follow: Array.from({ length: FOLLOW_ROWS }, (_, i) => ({
      type: field(req, `crawl_f_type_${i}`) || 'css',
      query: field(req, `crawl_f_query_${i}`),
    })),
    maxDepth: field(req, 'crawl_max_depth').trim(),
    maxPages: field(req, 'crawl_max_pages').trim(),
    sameOrigin: on('crawl_same_origin'),
    robots: on('crawl_robots'),
    sitemap: on('crawl_sitemap'),
    include: field(req, 'crawl_include'),
    exclude: field(req, 'crawl_exclude'),
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

/** Where each item of a list in the body came from in the form: its row, or its line. */
export interface FormPlaces {
  queries: number[];
  follow: number[];
  include: number[];
  exclude: number[];
  /** The line of each content selector. */
  includeTags: number[];
  excludeTags: number[];
  /** The place of each change-tracking key name in the comma list. */
  key: number[];
}

/** The non-empty lines of a textarea, trimmed, and the line number each came from. */
function lines(text: string, places: number[]): string[] {
  return text.split(/\r?\n/).flatMap((line, i) => {
    const trimmed = line.trim();
    if (!trimmed) return [];
    places.push(i);
    return [trimmed];
  });
}

function toCrawl(c: CrawlFormValues, places: FormPlaces): Record<string, unknown> | null {
  if (!c.enabled) return null;
  const follow = c.follow.flatMap((q, i) => {
    if (!q.query) return [];
    places.follow.push(i);
    return [{ type: q.type, query: q.query }];
  });
  return {
    follow,
    ...(c.maxDepth !== '' && { max_depth: numberOrText(c.maxDepth) }),
    ...(c.maxPages !== '' && { max_pages: numberOrText(c.maxPages) }),
    same_origin: c.sameOrigin,
    respect_robots_txt: c.robots,
    sitemap: c.sitemap,
    include: lines(c.include, places.include),
    exclude: lines(c.exclude, places.exclude),
  };
}

function toTracking(t: TrackingFormValues, places: FormPlaces): Record<string, unknown> | null {
  if (!t.enabled) return null;
  const key = t.key.split(',').flatMap((name, i) => {
    const trimmed = name.trim();
    if (!trimmed) return [];
    places.key.push(i);
    return [trimmed];
  });
  return { key, ...(t.content && { content: true }) };
}

/**
 * `extract` as typed: null when both are empty; a schema that is not JSON is passed on as its text
 * (the API refuses it at `extract.schema`) and named in `problems` with the parser's reason.
 */
function toExtract(e: ExtractFormValues, problems: Record<string, string>): Record<string, unknown> | null {
  if (!e.schema && !e.prompt) return null;
  let schema: unknown = null;
  if (e.schema) {
    try {
      schema = JSON.parse(e.schema);
    } catch (err) {
      schema = e.schema;
      problems['extract.schema'] = `is not valid JSON: ${(err as Error).message}`;
    }
  }
  return { schema, prompt: e.prompt || null };
}

/**
 * `formats` as ticked, and `content`: null while it says what the defaults say (the main content,
 * no selectors), so that a job without page documents keeps no content setting.
 */
function toContent(c: ContentFormValues, places: FormPlaces): Record<string, unknown> {
  const include = lines(c.includeTags, places.includeTags);
  const exclude = lines(c.excludeTags, places.excludeTags);
  const defaults = c.onlyMainContent && include.length === 0 && exclude.length === 0;
  return {
    formats: [...new Set(c.formats)],
    content: defaults
      ? null
      : { only_main_content: c.onlyMainContent, include_tags: include, exclude_tags: exclude },
  };
}

/**
 * The POST /jobs body the form stands for, and where each query, link query and pattern in it
 * came from (empty rows and lines are left out), so errors at `queries[i]` or
 * `crawl.include[i]` can name the row or line the person sees.
 */
export function toCreateBody(v: JobFormValues): {
  body: Record<string, unknown>;
  rows: FormPlaces;
  /** What the form itself finds wrong (a schema that is not JSON), by the API's path. */
  problems: Record<string, string>;
} {
  const problems: Record<string, string> = {};
  const rows: FormPlaces = {
    queries: [],
    follow: [],
    include: [],
    exclude: [],
    includeTags: [],
    excludeTags: [],
    key: [],
  };
  const queries = v.queries.flatMap((q, i) => {
    if (!q.name && !q.query) return [];
    rows.queries.push(i);
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
      ...toContent(v.content, rows),
      extract: toExtract(v.extract, problems),
      scheduling: v.schedule ? scheduling : null,
      render_config: v.render ? { enabled: true, mode: v.renderMode } : null,
      crawl: toCrawl(v.crawl, rows),
      change_tracking: toTracking(v.tracking, rows),
    },
    rows,
    problems,
  };
}

// An API error path of a list item, and the name the form gives it: `query row 3: query`.
const PLACES = [
  [/^queries\[(\d+)\]\.?(.*)$/, 'queries', 'query row'],
  [/^crawl\.follow\[(\d+)\]\.?(.*)$/, 'follow', 'link row'],
  [/^crawl\.include\[(\d+)\]()$/, 'include', 'include line'],
  [/^crawl\.exclude\[(\d+)\]()$/, 'exclude', 'exclude line'],
  [/^content\.include_tags\[(\d+)\]()$/, 'includeTags', 'include selector line'],
  [/^content\.exclude_tags\[(\d+)\]()$/, 'excludeTags', 'exclude selector line'],
  [/^change_tracking\.key\[(\d+)\]()$/, 'key', 'key name'],
] as const;

/**
 * Error paths of the API renamed for the form: `queries[1].query` becomes `query row 3: query`,
 * `crawl.follow[0].query` `link row 1: query`, `crawl.include[0]` `include line 2`,
 * `content.exclude_tags[0]` `exclude selector line 2`, `change_tracking.key[1]` `key name 3`.
 */
export function formErrors(details: Record<string, string>, rows: FormPlaces): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [path, message] of Object.entries(details)) {
    const place = PLACES.map(([re, list, name]) => [re.exec(path), list, name] as const).find(([m]) => m);
    if (!place) {
      out[path] = message;
      continue;
    }
    const [m, list, name] = place;
    const index = Number(m![1]);
    out[`${name} ${(rows[list][index] ?? index) + 1}${m![2] ? `: ${m![2]}` : ''}`] = message;
  }
  return out;
}
