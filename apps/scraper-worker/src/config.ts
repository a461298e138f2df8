import { commonEnv, envInt, parseConfigOrExit } from '@scrapejobs/config';
import { z } from 'zod';

export const workerEnvSchema = z.object({
  ...commonEnv,
  /** Runs one worker process executes at once. */
  SCRAPER_CONCURRENCY: envInt(1, 256).default(4),
  /** URLs of one run fetched at once (the job's rate limit still spaces their starts). */
  RUN_URL_CONCURRENCY: envInt(1, 64).default(8),
  /** A run that takes longer fails with TIMEOUT. */
  RUN_TIMEOUT_MS: envInt(1_000).default(30 * 60_000),
  BROWSER_CONCURRENCY: envInt(1, 64).default(2),
  CHROMIUM_PATH: z.string().default('/usr/bin/chromium'),
  /** A run whose worker stops renewing its lock for this long is taken over by another worker. */
  RUN_LOCK_MS: envInt(1_000).default(30_000),
  /** Port of /metrics, /health and /ready (0 picks a free port). */
  METRICS_PORT: envInt(0, 65_535).default(9100),
  /** How long a worker lets runs hand themselves back on SIGTERM before it exits. */
  SHUTDOWN_TIMEOUT_MS: envInt(0).default(10_000),
});

export type WorkerConfig = z.output<typeof workerEnvSchema>;

export const loadWorkerConfig = (env: Record<string, string | undefined>): WorkerConfig =>
  parseConfigOrExit(workerEnvSchema, env);
