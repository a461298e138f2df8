import type { ProxyEntry } from '@scrapejobs/config';
import type { Database } from '@scrapejobs/db';
import type { Scope } from '@scrapejobs/domain';
import { createLogger } from '@scrapejobs/logging';
import { runCancelChannel, runStartChannel } from '@scrapejobs/queues';
import { Redis } from 'ioredis';
import { type ApiConfig, apiEnvSchema } from '../../apps/api/src/config.ts';
import { createApiRuntime } from '../../apps/api/src/runtime.ts';
import { type Client, client } from './client.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { REDIS_URL, testPrefix } from './redis.ts';

export interface TestApiOptions {
  db: Database;
  prefix: string;
  redisUrl?: string;
  rateLimit?: number;
  proxies?: ProxyEntry[];
  adminToken?: string;
  /** PUBLIC_BASE_URL: where the links in answers point (a listening test server's address). */
  publicBaseUrl?: string;
  /** Webhook settings (loopback receivers need private targets allowed). */
  webhooks?: Partial<Pick<ApiConfig, 'WEBHOOK_SECRET_KEY' | 'ALLOW_PRIVATE_NETWORK_TARGETS'>>;
  /** Any other settings, as parsed (a language model, a search engine). */
  env?: Partial<ApiConfig>;
}

/**
 * The API built by the runtime of apps/api/src/main.ts on a test's database, Redis prefix and
 * settings (its defaults otherwise), without listening: tests call `app` through supertest.
 */
export function buildTestApi(opts: TestApiOptions) {
  const config: ApiConfig = {
    ...apiEnvSchema.parse({}),
    REDIS_URL: opts.redisUrl ?? REDIS_URL,
    QUEUE_PREFIX: opts.prefix,
    API_RATE_LIMIT_PER_MINUTE: opts.rateLimit ?? 100_000,
    PROXY_URLS: opts.proxies ?? [],
    ADMIN_TOKEN: opts.adminToken,
    ...(opts.publicBaseUrl && { PUBLIC_BASE_URL: opts.publicBaseUrl }),
    ...opts.webhooks,
    ...opts.env,
  };
  const runtime = createApiRuntime(config, { db: opts.db, log: createLogger('api-test', 'silent') });
  // The runs the API announced to workers as started, and asked them to stop, as the workers hear it.
  const started: string[] = [];
  const cancelled: string[] = [];
  const listener = new Redis(config.REDIS_URL);
  listener.on('error', () => {});
  listener.on('message', (channel, runId: string) =>
    (channel === runStartChannel(opts.prefix) ? started : cancelled).push(runId),
  );
  const listening = listener
    .subscribe(runCancelChannel(opts.prefix), runStartChannel(opts.prefix))
    .catch(() => {});
  return {
    app: runtime.app,
    ticks: runtime.queues.ticks,
    scheduler: runtime.scheduler,
    jobs: runtime.services.jobs,
    keys: runtime.services.keys,
    webhooks: runtime.services.webhooks,
    redis: runtime.redis,
    keyCache: runtime.keyCache,
    started,
    cancelled,
    /** Resolves once `started` and `cancelled` hear every message. */
    listening,
    async close() {
      listener.disconnect();
      await runtime.stop();
    },
  };
}

export interface ApiFixture {
  tdb: TestDatabase;
  api: ReturnType<typeof buildTestApi>;
  /** The API's Redis prefix (QUEUE_PREFIX), for a second API on the same test's data. */
  prefix: string;
  /** A client with a new API key of `email` in `mode` with `scopes` (by default jobs:read and jobs:write). */
  keyClient(email: string, mode?: 'test' | 'live', scopes?: Scope[]): Promise<Client>;
  close(): Promise<void>;
}

/** The test API on a private database and Redis prefix; `close` stops it and removes both. */
export async function apiFixture(options: Partial<TestApiOptions> = {}): Promise<ApiFixture> {
  const tdb = await createTestDatabase();
  const prefix = testPrefix();
  const api = buildTestApi({ db: tdb.db, prefix: prefix.prefix, ...options });
  return {
    tdb,
    api,
    prefix: prefix.prefix,
    keyClient: async (email, mode = 'test', scopes = ['jobs:read', 'jobs:write']) =>
      client(api.app, (await api.keys.create({ email, mode, scopes, name: 'k' })).token),
    async close() {
      await api.close();
      await tdb.drop();
      await prefix.cleanup();
    },
  };
}
