import { commonEnv, envInt, parseConfigOrExit } from '@scrapejobs/config';
import { z } from 'zod';

export const apiEnvSchema = z.object({
  ...commonEnv,
  PORT: envInt(0, 65_535).default(3000),
  API_RATE_LIMIT_PER_MINUTE: envInt(1).default(600),
  /** Requests still running after this long at shutdown are cut. */
  SHUTDOWN_TIMEOUT_MS: envInt(0).default(10_000),
  /** Express `trust proxy` setting, for the client address behind a load balancer. */
  TRUST_PROXY: z.string().default('loopback'),
});

export type ApiConfig = z.output<typeof apiEnvSchema>;

export const loadApiConfig = (env: Record<string, string | undefined>): ApiConfig =>
  parseConfigOrExit(apiEnvSchema, env);
