import { createHash } from 'node:crypto';
import type { CreateJobInput } from '@scrapejobs/contracts';
import { z } from 'zod';
import { FIRECRAWL_FORMATS, type ScrapeOptions } from './types.ts';

/**
 * What a Firecrawl request asked that its job's fields do not hold (docs/api.md §26), stored with
 * the job: the formats its documents show (a job keeps raw HTML for scrape actions, images and
 * attributes without showing it), the actions' results and the attributes' selectors.
 */
const storedSchema = z.object({
  formats: z.array(z.enum(FIRECRAWL_FORMATS)),
  actions: z.object({ screenshots: z.int(), scrapes: z.int(), scripts: z.int() }),
  attributes: z.array(z.object({ selector: z.string(), attribute: z.string() })),
});

export type FirecrawlJobOptions = z.output<typeof storedSchema>;

/** The stored options of a job's Firecrawl request. */
export const jobOptions = (options: ScrapeOptions): FirecrawlJobOptions => ({
  formats: options.formats,
  actions: options.actionOutputs,
  attributes: options.attributes,
});

/** A job's stored options, or null for a job stored without them (or before they were stored). */
export function readJobOptions(stored: unknown): FirecrawlJobOptions | null {
  const parsed = storedSchema.safeParse(stored);
  return parsed.success ? parsed.data : null;
}

/**
 * The key of a scrape's page: its URL and everything that shapes its document (the job it runs,
 * without its name and time limits, and the Firecrawl options above). Two scrapes with the same
 * key would store the same document; header values (secrets among them) only enter it hashed.
 */
export function cacheKeyOf(url: string, job: CreateJobInput, options: ScrapeOptions): string {
  const render = job.render_config && { ...job.render_config, wait_timeout_ms: null };
  const shaped = {
    url,
    job: { ...job, name: null, render_config: render },
    formats: [...options.formats].sort(),
    actions: options.actionOutputs,
    attributes: options.attributes,
  };
  return createHash('sha256').update(JSON.stringify(shaped)).digest('base64url');
}
