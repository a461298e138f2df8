import { commonEnv, envInt, parseConfigOrExit } from '@scrapejobs/config';
import { llmEnv } from '@scrapejobs/llm';
import { secretKeysEnv } from '@scrapejobs/outbound';
import { searchEnv } from '@scrapejobs/search';
import { z } from 'zod';

export const apiEnvSchema = z.object({
  ...commonEnv,
  /** `production` marks the console's session cookie Secure on every response. */
  NODE_ENV: z.string().default('development'),
  PORT: envInt(0, 65_535).default(3000),
  API_RATE_LIMIT_PER_MINUTE: envInt(1).default(600),
  /** A query PostgreSQL leaves unanswered this long fails (its connection is closed): a 503, not a hang. */
  DATABASE_QUERY_TIMEOUT_MS: envInt(100).default(5_000),
  /** Requests still running after this long at shutdown are cut. */
  SHUTDOWN_TIMEOUT_MS: envInt(0).default(10_000),
  /** Express `trust proxy` setting, for the client address behind a load balancer. */
  TRUST_PROXY: z.string().default('loopback'),
  /** Operator token for the queue dashboard at /admin/queues; unset turns the dashboard off. */
  ADMIN_TOKEN: z.string().min(16, 'must have at least 16 characters').optional(),
  /** Jobs made through the Firecrawl-compatible API expire this long after they are made (docs/api.md §18). */
  FIRECRAWL_RETENTION_HOURS: envInt(1, 24 * 3650).default(24),
  /**
   * Credits (pages scraped) each account may use a UTC month, as the Firecrawl-compatible
   * /team/credit-usage reports them (docs/api.md §18); unset: no quota.
   */
  ACCOUNT_MONTHLY_CREDITS: envInt(1).optional(),
  /** Interact sessions (docs/api.md §18) one account has opening or open at most; beyond, a call is a 429. */
  INTERACT_SESSIONS_PER_USER: envInt(1, 1_000).default(2),
  /** POST /v2/parse (docs/api.md §18): an uploaded file's bytes at most (larger: 413). */
  PARSE_MAX_BYTES: envInt(1024, 100 * 1024 * 1024).default(10 * 1024 * 1024),
  /** POST /v2/parse: a file's conversion at most this long, whatever its `timeout` asks (408 past it). */
  PARSE_TIME_LIMIT_MS: envInt(1_000, 300_000).default(60_000),
  /** POST /v2/parse: the heap of each conversion thread (a file needing more: 413). */
  PARSE_MEMORY_MB: envInt(32, 4_096).default(256),
  /**
   * POST /v2/parse: conversion threads (each up to PARSE_MEMORY_MB beside the API's own heap: the
   * pod's memory limit counts them; infra/README.md).
   */
  PARSE_THREADS: envInt(1, 16).default(1),
  /** The scraper workers' MAX_RUNNING_URLS_PER_USER, reported by /team/queue-status as `maxConcurrency`. */
  MAX_RUNNING_URLS_PER_USER: envInt(1, 100_000).default(64),
  /** For tests of the fleet's schedule ticks only: `second` reads a schedule's minutes as seconds. */
  SCHEDULE_UNIT: z.enum(['minute', 'second']).default('minute'),
  ...secretKeysEnv,
  /** The operator's language model (docs/api.md §24): the API checks that one is named, and reads token usage. */
  ...llmEnv,
  /** The operator's search engine (docs/api.md §25). */
  ...searchEnv,
});

export type ApiConfig = z.output<typeof apiEnvSchema>;

export const loadApiConfig = (env: Record<string, string | undefined>): ApiConfig =>
  parseConfigOrExit(apiEnvSchema, env);

/** The account command reads only the database's address. */
export const accountCliEnvSchema = z.object({ DATABASE_URL: commonEnv.DATABASE_URL });
