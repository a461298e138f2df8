import { commonEnv, parseConfig } from '@scrapejobs/config';
import { z } from 'zod';

export const consoleEnvSchema = z.object({
  /** In production the session cookie is always Secure (it is also whenever a request is https). */
  NODE_ENV: z.string().default('development'),
});

export const accountCliEnvSchema = z.object({ DATABASE_URL: commonEnv.DATABASE_URL });

/** Read once when the router is built. */
export const loadConsoleConfig = (env: Record<string, string | undefined> = process.env) =>
  parseConfig(consoleEnvSchema, env);
