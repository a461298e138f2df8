import { randomBytes } from 'node:crypto';
import { createJobSchema, issuesToDetails } from '@scrapejobs/contracts';
import { Accounts, JobsService, ResultsService, validationError, WebhooksService } from '@scrapejobs/domain';
import { createLogger } from '@scrapejobs/logging';
import { DEVELOPMENT_SECRET_KEY, SecretBox } from '@scrapejobs/outbound';
import express from 'express';
import { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts';
import { REDIS_URL, testPrefix } from '../../../test/support/redis.ts';
import type { ConsoleDeps } from './deps.ts';
import { SessionStore } from './http/session.ts';
import { consoleRouter } from './router.ts';

// Set-up for the route tests only (index.ts does not export it): the console over the real domain
// services on a private database and Redis prefix; the queue side (run dispatch, schedules), keys
// and webhooks (but the account's Firecrawl webhook secret) are left out.

export interface SignedIn {
  userId: string;
  /** The Cookie header of the account's session. */
  cookie: string;
  csrf: string;
}

export interface ConsoleFixture {
  tdb: TestDatabase;
  jobs: JobsService;
  /** The console, mounted at /console. */
  app: express.Express;
  /** The signed-in account, as the services name it. */
  owner: { userId: string; mode: 'test' };
  session: SignedIn;
  /** What the API's validation answers next when set (the API's own rules are tested with the API). */
  parseDetails: Record<string, string> | null;
  /** A new account of `email`, signed in with a session of its own. */
  signIn(email: string): Promise<SignedIn>;
  close(): Promise<void>;
}

const noop = async () => {};
const unused = async (): Promise<never> => {
  throw new Error('not under test');
};

/** The console with an account of `email` signed in; `close` removes its database and Redis keys. */
export async function consoleFixture(email: string): Promise<ConsoleFixture> {
  const prefix = testPrefix();
  const redis = new Redis(REDIS_URL);
  const tdb = await createTestDatabase();
  const close = async () => {
    redis.disconnect();
    await tdb.drop();
    await prefix.cleanup();
  };
  try {
    const jobs = new JobsService(
      tdb.db,
      { started: noop, cancel: noop },
      { arm: noop, disarm: noop },
      { box: new SecretBox(DEVELOPMENT_SECRET_KEY), publicBaseUrl: 'https://scrape.example.com' },
    );
    const accounts = new Accounts(tdb.db);
    const webhooks = new WebhooksService(tdb.db, {
      box: new SecretBox(DEVELOPMENT_SECRET_KEY),
      allowPrivate: false,
    });
    const sessions = new SessionStore(redis, prefix.prefix);
    const signIn = async (email: string): Promise<SignedIn> => {
      await accounts.create(email, 'a long enough password');
      const account = (await accounts.authenticate(email, 'a long enough password'))!;
      const s = await sessions.create({
        id: account.userId,
        email: account.email,
        passwordStamp: account.passwordStamp,
      });
      return { userId: account.userId, cookie: `sj_session=${s.id}`, csrf: s.data.csrf };
    };
    const session = await signIn(email);
    const fixture: ConsoleFixture = {
      tdb,
      jobs,
      app: express(),
      owner: { userId: session.userId, mode: 'test' },
      session,
      parseDetails: null,
      signIn,
      close,
    };
    const deps: ConsoleDeps = {
      redis,
      prefix: prefix.prefix,
      log: createLogger('console-test', 'silent'),
      services: {
        jobs,
        accounts,
        keys: { create: unused, list: unused, revoke: unused, regenerate: unused },
        results: new ResultsService(tdb.db),
        webhooks: {
          list: unused,
          get: unused,
          create: unused,
          delete: unused,
          listDeliveries: unused,
          resend: unused,
          test: unused,
          firecrawlSecretCreatedAt: (owner) => webhooks.firecrawlSecretCreatedAt(owner),
          ensureFirecrawlSecret: (owner) => webhooks.ensureFirecrawlSecret(owner),
          revealFirecrawlSecret: (owner) => webhooks.revealFirecrawlSecret(owner),
          rotateFirecrawlSecret: (owner) => webhooks.rotateFirecrawlSecret(owner),
        },
      },
      // The API's schema and its 400 (the checks beyond the schema are the API's, tested there).
      parseJob: async (raw) => {
        if (fixture.parseDetails)
          throw validationError(fixture.parseDetails, 'The job configuration is invalid.');
        const parsed = createJobSchema.safeParse(raw);
        if (!parsed.success)
          throw validationError(issuesToDetails(parsed.error.issues), 'The job configuration is invalid.');
        return parsed.data;
      },
      formKey: randomBytes(32),
      secureCookies: false,
    };
    fixture.app.use('/console', consoleRouter(deps));
    return fixture;
  } catch (err) {
    await close();
    throw err;
  }
}
