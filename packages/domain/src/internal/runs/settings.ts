import { createHash } from 'node:crypto';
import {
  type Content,
  type Crawl,
  contentSchema,
  crawlSchema,
  FORMATS,
  type FormatName,
  type ProxyConfig,
  proxyConfigSchema,
  type Query,
  querySchema,
  REFETCH_MODES,
  type RefetchModeName,
  type RenderConfig,
  renderConfigSchema,
} from '@scrapejobs/contracts';
import { z } from 'zod';
import { type StoredRequest, storedRequestSchema } from '../jobs/request.ts';
import { type StoredExtract, storedExtractSchema } from '../model.ts';
import { type PageTracking, pageTrackingSchema } from './tracked-pages.ts';

/** What a run does, as its job said when the run started (docs/api.md §3.6: changes apply from the next run). */
export interface RunSettings {
  source: string;
  /** A batch's URLs (docs/api.md §18), seeded instead of the expanded source; null for other jobs. */
  urls: string[] | null;
  queries: Query[];
  rateLimit: number;
  renderConfig: RenderConfig | null;
  proxyConfig: ProxyConfig | null;
  crawl: Crawl | null;
  /** What each page's document keeps (docs/api.md §17); empty: records only. */
  formats: FormatName[];
  content: Content | null;
  /** change_tracking.content: each page's markdown is compared with the base run's. */
  trackContent: boolean;
  /** Secrets sealed: a worker opens them with the key of webhook secrets (jobs/request.ts). */
  request: StoredRequest | null;
  /** Whether a page unchanged since its last successful fetch is copied instead (docs/api.md §20). */
  refetch: RefetchModeName;
  /** The language model's extraction of each page (docs/api.md §24); null for none. */
  extract: StoredExtract | null;
  /** Firecrawl's changeTracking: each page compared with the account's previous scrape (docs/api.md §24). */
  pageTracking: PageTracking | null;
}

const settingsSchema = z
  .object({
    source: z.string(),
    queries: z.array(querySchema),
    rate_limit: z.number(),
    render_config: renderConfigSchema.nullable(),
    proxy_config: proxyConfigSchema.nullable(),
    crawl: crawlSchema.nullable().default(null),
    request: storedRequestSchema.nullable().default(null),
    formats: z.array(z.enum(FORMATS)).default([]),
    content: contentSchema.nullable().default(null),
    track_content: z.boolean().default(false),
    urls: z.array(z.string()).nullable().default(null),
    refetch: z.enum(REFETCH_MODES).default('conditional'),
    extract: storedExtractSchema.nullable().default(null),
    page_tracking: pageTrackingSchema.nullable().default(null),
  })
  .transform(
    (s): RunSettings => ({
      source: s.source,
      urls: s.urls,
      queries: s.queries,
      rateLimit: s.rate_limit,
      renderConfig: s.render_config,
      proxyConfig: s.proxy_config,
      crawl: s.crawl,
      request: s.request,
      formats: s.formats,
      content: s.content,
      trackContent: s.track_content,
      refetch: s.refetch,
      extract: s.extract,
      pageTracking: s.page_tracking,
    }),
  );

/** A run's settings, as its `settings` column holds them (RUN_SETTINGS reads it). */
export const runSettings = (settings: unknown): RunSettings => settingsSchema.parse(settings);

/**
 * A job's settings as its runs keep them (a run's `settings` column), built in SQL from the
 * job's columns under `job` (a table alias or a CTE's name).
 */
export const jobSettingsSql = (job: string): string => `jsonb_build_object(
  'source', ${job}.source, 'queries', ${job}.queries, 'rate_limit', ${job}.rate_limit,
  'render_config', ${job}.render_config, 'proxy_config', ${job}.proxy_config, 'crawl', ${job}.crawl,
  'request', ${job}.request, 'formats', ${job}.formats, 'content', ${job}.content,
  'track_content', coalesce((${job}.change_tracking->>'content')::boolean, false),
  'urls', ${job}.urls, 'refetch', ${job}.refetch, 'extract', ${job}.extract,
  'page_tracking', ${job}.page_tracking)`;

/**
 * A run's settings in SQL, over its row `r` and its job's `j`: its `settings` column, or, for a
 * run started before they were kept, its job's as they are now.
 */
export const RUN_SETTINGS = `coalesce(r.settings, ${jobSettingsSql('j')})`;

/** JSON with every object's keys sorted, so that equal settings give equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The hex SHA-256 of what shapes a URL's records, document and links (docs/api.md §20): queries,
 * formats, content, request (as stored), render_config, extract and the crawl's link rules. A page whose
 * stored hash differs was shaped by other settings: it is fetched and extracted again.
 */
export function fetchSettingsHash(settings: RunSettings): string {
  const { crawl } = settings;
  const shaping = {
    queries: settings.queries,
    formats: settings.formats,
    content: settings.content,
    request: settings.request,
    render_config: settings.renderConfig,
    extract: settings.extract && { schema: settings.extract.schema, prompt: settings.extract.prompt },
    crawl: crawl && {
      follow: crawl.follow,
      include: crawl.include,
      exclude: crawl.exclude,
      same_origin: crawl.same_origin,
    },
  };
  return createHash('sha256').update(canonicalJson(shaping)).digest('hex');
}
