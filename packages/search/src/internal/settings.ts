import { z } from 'zod';

/**
 * The operator's search engine (docs/api.md §25): a SearXNG instance with JSON output enabled.
 * Spread into an app's configuration schema.
 */
export const searchEnv = {
  /** The SearXNG base URL (its `/search` answers `format=json`); unset: search answers 501. */
  SEARXNG_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  /** Comma-separated SearXNG engines to ask (its `engines`); unset: the instance's defaults. */
  SEARXNG_ENGINES: z.string().max(500).optional(),
  /** Comma-separated SearXNG categories (its `categories`); unset: general. */
  SEARXNG_CATEGORIES: z.string().max(500).optional(),
};

const envSchema = z.object(searchEnv);
export type SearchEnv = z.output<typeof envSchema>;

export interface SearchSettings {
  endpoint: string;
  engines: string | null;
  categories: string | null;
}

/** The search engine the operator named, or null when none is (SEARXNG_ENDPOINT unset). */
export function searchSettings(env: SearchEnv): SearchSettings | null {
  if (env.SEARXNG_ENDPOINT === undefined) return null;
  return {
    endpoint: env.SEARXNG_ENDPOINT.replace(/\/+$/, ''),
    engines: env.SEARXNG_ENGINES ?? null,
    categories: env.SEARXNG_CATEGORIES ?? null,
  };
}

/** What a 501 says when search is asked for and no engine is configured. */
export const NO_SEARCH_MESSAGE =
  'search is not configured: the operator must set SEARXNG_ENDPOINT to a SearXNG instance with JSON output enabled';
