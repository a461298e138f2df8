import { commonEnv, envInt, parseConfigOrExit } from '@scrapejobs/config';
import { secretKeysEnv } from '@scrapejobs/outbound';
import { catalog } from '@scrapejobs/queues';
import { z } from 'zod';

const RETRIES = catalog.webhookDeliveries.options.attempts - 1;

/** `WEBHOOK_RETRY_DELAYS_MS`: the wait before each retry, measured from the failed attempt. */
const retryDelays = z
  .string()
  .default('60000,300000,1800000,7200000,86400000')
  .transform((raw, ctx) => {
    const delays = raw.split(',').map((s) => s.trim());
    if (delays.length !== RETRIES || !delays.every((d) => /^\d{1,10}$/.test(d)))
      ctx.addIssue({ code: 'custom', message: `must be ${RETRIES} comma-separated whole milliseconds` });
    return delays.map(Number);
  });

export const webhookWorkerEnvSchema = z.object({
  ...commonEnv,
  WEBHOOK_RETRY_DELAYS_MS: retryDelays,
  /** Same keys as the API's: they open the secrets the API sealed. */
  ...secretKeysEnv,
  /** Deliveries one process sends at once. */
  WEBHOOK_CONCURRENCY: envInt(1, 1_000).default(100),
  /** An answer (status line) later than this is a failed attempt. docs/api.md §6 says 10 s; tests shorten it. */
  WEBHOOK_TIMEOUT_MS: envInt(100, 60_000).default(10_000),
  /** How often the outbox is read when it was empty. */
  WEBHOOK_OUTBOX_POLL_MS: envInt(10, 60_000).default(50),
  /** Outbox events fanned out per transaction. */
  WEBHOOK_OUTBOX_BATCH: envInt(1, 5_000).default(500),
  /** Outbox events are deleted this many days after their fan-out; 0 keeps them forever. */
  WEBHOOK_OUTBOX_RETENTION_DAYS: envInt(0, 36_500).default(30),
  /** Port of /metrics, /health and /ready (0: any free port, logged at start). */
  METRICS_PORT: envInt(0, 65_535).default(9100),
  /** At SIGTERM, attempts in flight get this long to finish before the process exits anyway. */
  SHUTDOWN_TIMEOUT_MS: envInt(0).default(15_000),
});

export type WebhookWorkerConfig = z.output<typeof webhookWorkerEnvSchema>;

export const loadWebhookWorkerConfig = (env: Record<string, string | undefined>): WebhookWorkerConfig =>
  parseConfigOrExit(webhookWorkerEnvSchema, env);
