import type { CreateJobInput } from '@scrapejobs/contracts';
import type { Accounts, JobsService, KeysService, ResultsService, WebhooksService } from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';
import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
// The API passes its own service instances in: the console follows exactly the API's rules.

export interface ConsoleServices {
  keys: Pick<KeysService, 'create' | 'list' | 'revoke' | 'regenerate'>;
  jobs: Pick<
    JobsService,
    | 'list'
    | 'countByStatus'
    | 'get'
    | 'getRun'
    | 'create'
    | 'run'
    | 'pause'
    | 'resume'
    | 'listRuns'
    | 'listRunUrls'
    | 'listRunChanges'
    | 'screenshot'
  >;
  accounts: Pick<Accounts, 'authenticate' | 'current'>;
  results: Pick<ResultsService, 'list' | 'download' | 'listDocuments'>;
  webhooks: Pick<
    WebhooksService,
    | 'list'
    | 'get'
    | 'create'
    | 'delete'
    | 'listDeliveries'
    | 'resend'
    | 'test'
    | 'firecrawlSecretCreatedAt'
    | 'ensureFirecrawlSecret'
    | 'revealFirecrawlSecret'
    | 'rotateFirecrawlSecret'
  >;
}

export interface ConsoleDeps {
  /** Sessions and the sign-in limit live here, shared by every API process. */
  redis: Redis;
  /** QUEUE_PREFIX: every Redis key of the console starts with it. */
  prefix: string;
  log: Logger;
  services: ConsoleServices;
  /** The API's job validation (schema, compiling queries, globs, proxies) for a user: the same 400s. */
  parseJob(raw: unknown, userId: string): Promise<CreateJobInput>;
  /**
   * Key of the sign-in form's CSRF token (at least 32 bytes): the same in every API process, so
   * a form shown by one is accepted by another.
   */
  formKey: Buffer;
  /** Runs first on every console request: the API's per-address rate limit (its 429 is a page). */
  rateLimit?: RequestHandler;
  /** Marks the cookie Secure on every response (in production); otherwise only on https requests. */
  secureCookies: boolean;
}

export type { DeliveryRow, KeyView, Owner, StoredResult, WebhookRow } from '@scrapejobs/domain';
