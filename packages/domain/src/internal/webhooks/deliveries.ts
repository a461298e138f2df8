import type { DeliveryStatusName } from '@scrapejobs/contracts';
import type { SecretBox } from '@scrapejobs/outbound';
import type pg from 'pg';
import { ensureFirecrawlSecret, FIRECRAWL_PAGE_EVENT } from './firecrawl.ts';
import { microBatch } from './micro-batch.ts';

/** A delivery with what an attempt needs of its webhook. */
export interface DeliveryWithWebhook {
  id: string;
  event_id: string;
  event_kind: string;
  body: string;
  status: DeliveryStatusName;
  attempts: number;
  webhook_id: string;
  url: string;
  secret_encrypted: string;
  active: boolean;
  user_id: string;
  /** `firecrawl`: a crawl's webhook (docs/api.md §18), Firecrawl's headers and signature. */
  style: 'service' | 'firecrawl';
  /** Headers sent with every attempt (a Firecrawl webhook's `headers`). */
  headers: Record<string, string> | null;
  /** The account's Firecrawl webhook secret (sealed) for a Firecrawl-style webhook, as it is now. */
  firecrawl_secret_encrypted: string | null;
  /** The job a Firecrawl-style webhook belongs to (null for an account's endpoint). */
  job_id: string | null;
}

export interface AttemptRecord {
  attemptId: string;
  deliveryId: string;
  /** The attempts the delivery must still have; the record is refused otherwise. */
  expected: number;
  status: DeliveryStatusName;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  at: Date;
}

// Columns are TIMESTAMP(3) holding UTC (as Prisma writes them): converted explicitly in SQL.

/** The webhook worker's reads and writes of deliveries, batched across concurrent attempts. */
export class DeliveryStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** The delivery with its webhook, or undefined when either is gone. */
  readonly load = microBatch(async (ids: string[]): Promise<(DeliveryWithWebhook | undefined)[]> => {
    const { rows } = await this.#pool.query<DeliveryWithWebhook>(
      `SELECT d.id, d.event_id, d.event_kind, d.body, d.status, d.attempts,
              w.id AS webhook_id, w.url, w.secret_encrypted, w.active, w.user_id, w.style::text AS style,
              w.headers, s.secret_encrypted AS firecrawl_secret_encrypted, w.job_id
       FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
       LEFT JOIN firecrawl_webhook_secrets s ON s.user_id = w.user_id AND w.style = 'firecrawl'
       WHERE d.id = ANY($1)`,
      [ids],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id));
  });

  /** The account's Firecrawl webhook secret (sealed), made first when it has none. */
  async firecrawlSecret(userId: string, box: SecretBox, now: Date): Promise<string> {
    await ensureFirecrawlSecret(this.#pool, box, userId, now);
    const { rows } = await this.#pool.query<{ secret_encrypted: string }>(
      'SELECT secret_encrypted FROM firecrawl_webhook_secrets WHERE user_id = $1',
      [userId],
    );
    return rows[0]!.secret_encrypted;
  }

  /**
   * Records an attempt and moves the delivery on (attempts + 1, new status) in one statement,
   * only if it is still pending with the expected attempts; false when it was not.
   */
  readonly record = microBatch(async (records: AttemptRecord[]): Promise<boolean[]> => {
    // Two entries for one delivery in a batch are duplicates of one attempt: the first counts.
    const first = new Map<string, AttemptRecord>();
    for (const r of records) if (!first.has(r.deliveryId)) first.set(r.deliveryId, r);
    const rs = [...first.values()];
    const { rows } = await this.#pool.query<{ delivery_id: string; attempt_id: string }>(
      `WITH i AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::"DeliveryStatus"[], $5::int[],
                              $6::text[], $7::int[], $8::timestamptz[])
           AS i(attempt_id, delivery_id, expected, status, status_code, error, duration_ms, at)),
       d AS (
         UPDATE deliveries SET attempts = deliveries.attempts + 1, status = i.status,
                updated_at = now() AT TIME ZONE 'UTC'
         FROM i WHERE deliveries.id = i.delivery_id AND deliveries.attempts = i.expected
           AND deliveries.status = 'pending'
         RETURNING deliveries.id, deliveries.attempts)
       INSERT INTO delivery_attempts (id, delivery_id, attempt, status_code, error, duration_ms, created_at)
       SELECT i.attempt_id, d.id, d.attempts, i.status_code, i.error, i.duration_ms, i.at AT TIME ZONE 'UTC'
       FROM d JOIN i ON i.delivery_id = d.id
       RETURNING delivery_id, id AS attempt_id`,
      [
        rs.map((r) => r.attemptId),
        rs.map((r) => r.deliveryId),
        rs.map((r) => r.expected),
        rs.map((r) => r.status),
        rs.map((r) => r.statusCode),
        rs.map((r) => r.error),
        rs.map((r) => r.durationMs),
        rs.map((r) => r.at),
      ],
    );
    const recorded = new Set(rows.map((r) => r.attempt_id));
    return records.map((r) => recorded.has(r.attemptId));
  });

  /**
   * Whether a job-scoped webhook still has page events to send: a page event of its job not yet
   * turned into deliveries, or a page delivery of its own still pending (first attempt or retries).
   * The fan-out inserts an event's deliveries before it marks the event dispatched, so one or the
   * other is always seen.
   */
  async pagesOutstanding(webhookId: string, jobId: string): Promise<boolean> {
    const { rows } = await this.#pool.query<{ outstanding: boolean }>({
      name: 'firecrawl-pages-outstanding',
      text: `SELECT EXISTS (SELECT 1 FROM events e JOIN webhooks w ON w.id = $1
                             WHERE e.job_id = $2 AND e.kind = $3 AND e.dispatched_at IS NULL
                               AND $3 = ANY(w.events))
                 OR EXISTS (SELECT 1 FROM deliveries d
                             WHERE d.webhook_id = $1 AND d.status = 'pending' AND d.event_kind LIKE '%.page')
                 AS outstanding`,
      values: [webhookId, jobId, FIRECRAWL_PAGE_EVENT],
    });
    return rows[0]?.outstanding ?? false;
  }

  /** 410 Gone: the receiver asks for no more deliveries. */
  async deactivate(webhookId: string): Promise<void> {
    await this.#pool.query('UPDATE webhooks SET active = false WHERE id = $1', [webhookId]);
  }

  /** A pending delivery of an inactive webhook ends failed, without an attempt. */
  async failWithoutAttempt(deliveryId: string): Promise<void> {
    await this.#pool.query(
      `UPDATE deliveries SET status = 'failed', updated_at = now() AT TIME ZONE 'UTC'
       WHERE id = $1 AND status = 'pending'`,
      [deliveryId],
    );
  }
}
