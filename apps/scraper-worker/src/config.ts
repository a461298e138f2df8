import { availableParallelism } from 'node:os';
import { commonEnv, envInt, parseConfigOrExit, SERVICE_VERSION } from '@scrapejobs/config';
import { llmEnv } from '@scrapejobs/llm';
import { secretKeysEnv } from '@scrapejobs/outbound';
import { z } from 'zod';

/** Debian's Chromium headless shell (its /usr/bin wrapper would stand between puppeteer and the browser). */
export const DEFAULT_CHROMIUM_PATH = '/usr/lib/chromium/chromium-headless-shell';

export const workerEnvSchema = z.object({
  ...commonEnv,
  /** Runs of jobs without `retention_days` that ended longer ago are deleted (docs/api.md §15); 0 keeps them. */
  RESULTS_RETENTION_DAYS: envInt(0, 36_500).default(0),
  /** Same keys as the API's: they open the secrets of jobs' `request` the API sealed. */
  ...secretKeysEnv,
  /** Sent on every fetch and render; its product token (before `/`) picks the robots.txt group. */
  SCRAPER_USER_AGENT: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .regex(/^[\x20-\x7e]+$/, 'printable ASCII only')
    .default(`scrapejobs/${SERVICE_VERSION}`),
  /** Runs one worker process works on at once at full pace: it holds up to this × RUN_URL_CONCURRENCY URLs. */
  SCRAPER_CONCURRENCY: envInt(1, 256).default(4),
  /** URLs of one run fetched at once (the job's rate limit still spaces their starts). */
  RUN_URL_CONCURRENCY: envInt(1, 64).default(8),
  /** A run that takes longer fails with TIMEOUT. */
  RUN_TIMEOUT_MS: envInt(1_000).default(30 * 60_000),
  BROWSER_CONCURRENCY: envInt(1, 64).default(2),
  /**
   * The Chromium the renderer launches: Debian's headless shell (package chromium-headless-shell),
   * Chromium built for automation without the desktop browser around it, renders these pages about
   * 1.4× as fast as the full browser's headless mode (bench/README.md); the full `chromium` works too.
   */
  CHROMIUM_PATH: z.string().default(DEFAULT_CHROMIUM_PATH),
  /**
   * First delay before a run's execution that failed for the worker's own reasons (storage
   * unreachable) is tried again; it doubles each time.
   */
  RUN_RETRY_DELAY_MS: envInt(0).default(5_000),
  /** Failures in a row for the workers' own reasons after which a run ends failed. */
  RUN_MAX_ATTEMPTS: envInt(1, 100).default(5),
  /** A URL whose worker stops renewing its lease for this long is taken over by another worker. */
  RUN_LOCK_MS: envInt(1_000).default(30_000),
  /** Port of /metrics, /health and /ready (0 picks a free port). */
  METRICS_PORT: envInt(0, 65_535).default(9100),
  /** Wall time of one page's extraction (every query of the job on that page). */
  EXTRACTION_TIME_LIMIT_MS: envInt(100, 600_000).default(5_000),
  /** Heap of one extraction thread; a page past it fails and its thread is replaced. */
  EXTRACTION_MEMORY_MB: envInt(16, 16_384).default(256),
  /** Threads that extract pages, off the event loop; one user's pages never hold them all. */
  EXTRACTION_THREADS: envInt(1, 64).default(Math.max(2, Math.min(8, availableParallelism()))),
  /** URLs of one user in flight across the whole fleet. */
  MAX_RUNNING_URLS_PER_USER: envInt(1, 100_000).default(64),
  /** Requests in flight to one target host (host and port), across the fleet, every job and user. */
  HOST_MAX_CONCURRENCY: envInt(1, 1_000).default(8),
  /** Request starts per second to one target host across the fleet; 0 sets no such bound. */
  HOST_MAX_REQUESTS_PER_SECOND: envInt(0, 10_000).default(0),
  /** The longest pause a 429 or 503 answer's Retry-After imposes on its host. */
  HOST_RETRY_AFTER_CAP_S: envInt(1, 86_400).default(600),
  /** The operator's language model (docs/api.md §24): extract and summary. */
  ...llmEnv,
  /** Interact sessions (docs/api.md §18) this worker serves at once, each a page of its own; 0 serves none. */
  INTERACT_SESSIONS_PER_WORKER: envInt(0, 64).default(2),
  /** An interact session without a command for this long ends. */
  INTERACT_IDLE_TIMEOUT_S: envInt(10, 86_400).default(600),
  /** An interact session ends this long after it opened, whatever it does. */
  INTERACT_MAX_LIFE_S: envInt(60, 86_400).default(3_600),
  /** How long a worker takes on SIGTERM to give its URLs in flight back before it exits. */
  SHUTDOWN_TIMEOUT_MS: envInt(0).default(10_000),
});

export type WorkerConfig = z.output<typeof workerEnvSchema>;

export const loadWorkerConfig = (env: Record<string, string | undefined>): WorkerConfig =>
  parseConfigOrExit(workerEnvSchema, env);
