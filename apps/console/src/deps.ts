import type { CreateJobInput } from '@scrapejobs/contracts';
import type { Database } from '@scrapejobs/db';
import type { Logger } from '@scrapejobs/logging';
import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
// Types only: the API passes its own service instances in, so the console has no runtime
// dependency on the API's modules and follows exactly the API's rules.
import type { JobsService } from '../../api/src/jobs/service.ts';
import type { KeysService } from '../../api/src/keys/service.ts';
import type { ResultsService } from '../../api/src/results/service.ts';
import type { WebhooksService } from '../../api/src/webhooks/service.ts';

export interface ConsoleServices {
  keys: Pick<KeysService, 'create' | 'list' | 'revoke' | 'regenerate'>;
  jobs: Pick<JobsService, 'list' | 'get' | 'create' | 'run' | 'pause' | 'resume' | 'listRuns'>;
  results: Pick<ResultsService, 'list' | 'download'>;
  webhooks: Pick<
    WebhooksService,
    'list' | 'get' | 'create' | 'delete' | 'listDeliveries' | 'resend' | 'test'
  >;
}

export interface ConsoleDeps {
  db: Database;
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
  /** Marks the cookie Secure on every response (default: when NODE_ENV is production). */
  secureCookies?: boolean;
}

export type Owner = { userId: string; mode: 'test' | 'live' };

export type { KeyView } from '../../api/src/keys/service.ts';
export type { StoredResult } from '../../api/src/results/service.ts';
export type { DeliveryRow, WebhookRow } from '../../api/src/webhooks/presenter.ts';
