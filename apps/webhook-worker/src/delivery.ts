import { newId } from '@scrapejobs/db';
import {
  type DeliveryStore,
  type DeliveryWithWebhook,
  isFirecrawlTerminal,
  openFirecrawlSecret,
  readEntry,
} from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';
import type { SecretBox } from '@scrapejobs/outbound';
import type { Payload } from '@scrapejobs/queues';
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import type { PostResult } from './http-post.ts';
import { deliveryHeaders, firecrawlHeaders } from './signing.ts';

export interface Poster {
  post(url: string, body: string, headers: Record<string, string>): Promise<PostResult>;
}

/** An attempt failed and is retried after the configured delay. */
export class DeliveryAttemptError extends Error {
  override readonly name = 'DeliveryAttemptError';
  readonly code = 'DELIVERY_ATTEMPT_FAILED';
}

export type Outcome = 'succeeded' | 'skipped';

/** Told of every attempt made: its outcome (retrying: failed, with a retry to come) and duration. */
export type AttemptObserver = (outcome: 'succeeded' | 'retrying' | 'failed', durationMs: number) => void;

/** How long a job waits when PostgreSQL failed it, without using up one of its attempts. */
const INFRA_RETRY_MS = 5_000;

/**
 * How long a crawl's terminal delivery waits, without using up an attempt, while its pages are
 * still being sent: a tenth of its wait so far, from 250 ms to a minute, so that one whose pages
 * are retried for hours does not ask PostgreSQL four times a second meanwhile.
 */
const pagesFirstMs = (waitedMs: number) => Math.min(Math.max(250, waitedMs / 10), 60_000);

/**
 * Sends one attempt of a delivery and records it. Idempotent against the queue's
 * at-least-once delivery: an attempt is made only while the delivery is pending with exactly
 * the attempts this queue entry expects, and recording it moves that count on atomically.
 */
export class DeliveryProcessor {
  readonly #store: DeliveryStore;
  readonly #poster: Poster;
  readonly #box: SecretBox;
  readonly #log: Logger;
  readonly #now: () => Date;

  readonly #observe: AttemptObserver;

  constructor(
    store: DeliveryStore,
    poster: Poster,
    box: SecretBox,
    log: Logger,
    opts: { now?: () => Date; observe?: AttemptObserver } = {},
  ) {
    this.#store = store;
    this.#poster = poster;
    this.#box = box;
    this.#log = log;
    this.#now = opts.now ?? (() => new Date());
    this.#observe = opts.observe ?? (() => {});
  }

  async process(job: Job<Payload<'webhookDeliveries'>>, token?: string): Promise<Outcome> {
    // A resend is one attempt made from the state it was requested in; a continuation, queued
    // again by the sweep, carries on after the attempts the delivery had then.
    const { kind, priorAttempts: prior } = readEntry(job);
    const resend = kind === 'resend';
    const expected = prior + (resend ? 0 : job.attemptsMade);
    const attempt = resend ? 1 : expected + 1;
    const lastAttempt = resend ? 1 : prior + (job.opts.attempts ?? 1);
    let outcome: { result: PostResult; final: boolean } | 'skipped' | 'retry' | 'wait';
    try {
      outcome = await this.#attempt(job.data.deliveryId, expected, attempt, attempt >= lastAttempt, !resend);
    } catch (err) {
      // PostgreSQL unreachable or similar: wait, without counting an attempt (BullMQ would).
      if (token === undefined) throw err;
      this.#log.warn({ delivery_id: job.data.deliveryId, err: (err as Error).message }, 'delivery postponed');
      await job.moveToDelayed(Date.now() + INFRA_RETRY_MS, token);
      throw new DelayedError();
    }
    if (outcome === 'wait') {
      if (token === undefined)
        throw new Error('a terminal delivery waits for its pages, which needs the job token');
      await job.moveToDelayed(Date.now() + pagesFirstMs(Date.now() - job.timestamp), token);
      throw new DelayedError();
    }
    if (outcome === 'skipped') return 'skipped';
    if (outcome === 'retry') throw new DeliveryAttemptError(`attempt ${attempt} failed before a restart`);
    const { result, final } = outcome;
    if (isSuccess(result)) return 'succeeded';
    const reason = result.statusCode === null ? result.error! : `answered ${result.statusCode}`;
    if (final) throw new UnrecoverableError(`delivery failed: ${reason}`);
    throw new DeliveryAttemptError(`attempt ${attempt} failed: ${reason}`);
  }

  /** One attempt; with `inOrder`, a crawl's terminal delivery waits ('wait') until its pages are sent. */
  async #attempt(
    deliveryId: string,
    expected: number,
    attempt: number,
    lastAttempt: boolean,
    inOrder: boolean,
  ) {
    const d = await this.#store.load(deliveryId);
    const skip = (why: string) => {
      this.#log.info({ delivery_id: deliveryId, why }, 'delivery skipped');
      return 'skipped' as const;
    };
    if (!d) return skip('the delivery or its webhook was deleted');
    // This attempt failed and was recorded, but the process stopped before the queue scheduled
    // the retry (the entry ran again as stalled): let the queue count it now and wait as usual.
    if (d.status === 'pending' && d.attempts === expected + 1 && !lastAttempt) {
      this.#log.info(
        { delivery_id: deliveryId, attempt },
        'attempt already recorded as failed; retrying later',
      );
      return 'retry' as const;
    }
    if (d.status !== 'pending' || d.attempts !== expected)
      return skip(
        `already handled (status ${d.status}, attempts ${d.attempts}, this entry expects ${expected})`,
      );
    if (!d.active) {
      await this.#store.failWithoutAttempt(d.id);
      return skip('the webhook is inactive');
    }
    // Firecrawl's consumers stop at crawl.completed: it goes after every crawl.page (docs/api.md §26).
    if (
      inOrder &&
      d.style === 'firecrawl' &&
      d.job_id !== null &&
      isFirecrawlTerminal(d.event_kind) &&
      (await this.#store.pagesOutstanding(d.webhook_id, d.job_id))
    )
      return 'wait' as const;

    const at = this.#now();
    // An account without a secret (its crawl started before accounts had one) gets one now:
    // every Firecrawl webhook is signed (docs/api.md §26).
    if (d.style === 'firecrawl' && d.firecrawl_secret_encrypted === null)
      d.firecrawl_secret_encrypted = await this.#store.firecrawlSecret(d.user_id, this.#box, at);
    const headers = this.#headers(d, attempt, at);
    const result: PostResult = headers
      ? await this.#poster.post(d.url, d.body, headers)
      : {
          statusCode: null,
          error: 'the webhook secret cannot be opened (server key configuration)',
          durationMs: 0,
        };

    const gone = result.statusCode === 410;
    const final = isSuccess(result) || gone || lastAttempt;
    const status = isSuccess(result) ? 'succeeded' : final ? 'failed' : 'pending';
    const recorded = await this.#store.record({
      attemptId: newId('att', at.getTime()),
      deliveryId: d.id,
      expected,
      status,
      statusCode: result.statusCode,
      error: result.error,
      durationMs: result.durationMs,
      at,
    });
    if (gone) await this.#store.deactivate(d.webhook_id);
    this.#log.info(
      {
        delivery_id: d.id,
        webhook_id: d.webhook_id,
        event_id: d.event_id,
        attempt,
        status_code: result.statusCode,
        error: result.error,
        duration_ms: result.durationMs,
        outcome: status,
        recorded,
      },
      'webhook attempt',
    );
    this.#observe(status === 'pending' ? 'retrying' : status, result.durationMs);
    if (!recorded) return 'skipped' as const;
    return { result, final };
  }

  /**
   * The attempt's headers in the webhook's style, or null when its secret cannot be opened. A
   * Firecrawl-style webhook is signed with the account's secret as it is now.
   */
  #headers(d: DeliveryWithWebhook, attempt: number, now: Date): Record<string, string> | null {
    const firecrawl = d.style === 'firecrawl';
    const sealed = firecrawl ? d.firecrawl_secret_encrypted : d.secret_encrypted;
    let secret: string | null = null;
    try {
      if (sealed !== null)
        secret = firecrawl
          ? openFirecrawlSecret(this.#box, sealed, d.user_id)
          : this.#box.open(sealed, d.webhook_id);
    } catch (err) {
      this.#log.error({ webhook_id: d.webhook_id, err: (err as Error).message }, 'webhook secret unreadable');
      return null;
    }
    if (firecrawl) return firecrawlHeaders({ secret, body: d.body, headers: d.headers });
    if (secret === null) return null;
    return deliveryHeaders({ secret, eventId: d.event_id, event: d.event_kind, body: d.body, attempt, now });
  }
}

const isSuccess = (r: PostResult) => r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300;

/** Attempts made before a continuation started (a resend is a single attempt; it never backs off). */
function continued(job: { name: string; id?: string } | undefined): number {
  const entry = job && readEntry(job);
  return entry?.kind === 'continue' ? entry.priorAttempts : 0;
}

/**
 * BullMQ backoffStrategy: `attemptsMade` counts the failed attempt, so the first retry reads
 * delays[0]; a continuation's attempts follow those made before it.
 */
export const retryBackoff =
  (delays: readonly number[]) =>
  (attemptsMade: number, _type?: string, _err?: Error, job?: { name: string; id?: string }): number =>
    delays[Math.min(attemptsMade + continued(job), delays.length) - 1] ?? 0;
