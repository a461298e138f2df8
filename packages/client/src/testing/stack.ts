// The service as the client's tests meet it: the real API process (and, when asked, the real
// workers) on a private database and Redis prefix, with API keys made the way the keys tool makes them.
import { randomBytes } from 'node:crypto';
import { KeysService, SCOPES, type Scope } from '@scrapejobs/domain';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
import { freePort, type Proc, startApp } from '../../../../test/support/processes.ts';
import { REDIS_URL, testPrefix } from '../../../../test/support/redis.ts';

export type Worker = 'scraper-worker' | 'webhook-worker';

const STARTED: Record<Worker | 'api', string> = {
  api: 'api listening',
  'scraper-worker': 'scraper worker started',
  'webhook-worker': 'webhook worker started',
};

export interface Stack {
  baseUrl: string;
  db: TestDatabase;
  api: Proc;
  /** A new user's token (all four scopes unless told). */
  key(scopes?: Scope[]): Promise<string>;
  stop(): Promise<void>;
}

export interface StackOptions {
  workers?: Worker[];
  /** Extra environment of the API process only, given the environment every process shares. */
  apiEnv?: (shared: Record<string, string>) => Record<string, string>;
}

/** Starts the API (and the workers asked for) and resolves once every process is ready. */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const db = await createTestDatabase();
  const prefix = testPrefix();
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL,
    QUEUE_PREFIX: prefix.prefix,
    PUBLIC_BASE_URL: baseUrl,
    // Targets and webhook receivers are local servers of the tests.
    ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
    WEBHOOK_RETRY_DELAYS_MS: '200,200,200,200,200',
    WEBHOOK_TIMEOUT_MS: '2000',
    LOG_LEVEL: 'info',
  };
  const api = startApp('api', {
    ...env,
    PORT: String(port),
    API_RATE_LIMIT_PER_MINUTE: '100000',
    ...options.apiEnv?.(env),
  });
  const workers = (options.workers ?? []).map((w) => [w, startApp(w, env)] as const);
  await Promise.all([
    api.waitForLog((l) => l.msg === STARTED.api, 30_000),
    ...workers.map(([w, p]) => p.waitForLog((l) => l.msg === STARTED[w], 30_000)),
  ]);
  const keys = new KeysService(db.db);
  return {
    baseUrl,
    db,
    api,
    async key(scopes: Scope[] = [...SCOPES]) {
      const email = `${randomBytes(4).toString('hex')}@client.test`;
      return (await keys.create({ email, mode: 'test', scopes, name: 'client tests' })).token;
    },
    async stop() {
      await Promise.all([api, ...workers.map(([, p]) => p)].map((p) => p.kill('SIGKILL')));
      await db.drop();
      await prefix.cleanup();
    },
  };
}
