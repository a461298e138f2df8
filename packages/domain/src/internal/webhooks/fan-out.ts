import {
  encodeEnvelope,
  RESEND_COMMAND,
  resendCommandSchema,
  TEST_EVENT,
  WEBHOOK_EVENTS,
} from '@scrapejobs/contracts';
import { newId } from '@scrapejobs/db';
import type { Logger } from '@scrapejobs/logging';
import type pg from 'pg';
import { type DeliveryEntry, entryId } from './entries.ts';
import {
  FIRECRAWL_PAGE_EVENT,
  type FirecrawlSourceKind,
  firecrawlBody,
  firecrawlEventOf,
  isFirecrawlSourceKind,
  wantsFirecrawlEvent,
} from './firecrawl.ts';
import { pageDocuments } from './firecrawl-page.ts';

// Columns are TIMESTAMP(3) holding UTC (as Prisma writes them): convert explicitly, whatever the
// session or process time zone.

/** The part of the BullMQ queue the fan-out uses (adding with a given job id is idempotent). */
export interface DeliveryQueue {
  addBulk(jobs: DeliveryEntry[]): Promise<unknown>;
}

interface EventRow {
  id: string;
  user_id: string;
  mode: string;
  job_id: string | null;
  kind: string;
  data: unknown;
  created_at: Date;
}

const SUBSCRIBABLE = new Set<string>(WEBHOOK_EVENTS);

/** Page events whose documents are read at once (each up to a few MiB unpacked). */
const PAGES_AT_ONCE = 16;

interface JobWebhookRow {
  id: string;
  job_id: string;
  events: string[];
  event_prefix: string;
  metadata: unknown;
}

interface JobScopedRow {
  webhookId: string;
  eventId: string;
  type: string;
  body: string;
}

function jobScopedRow(w: JobWebhookRow, e: EventRow, documents: readonly unknown[]): JobScopedRow {
  const event = { id: e.id, kind: e.kind as FirecrawlSourceKind, data: e.data };
  return { webhookId: w.id, eventId: e.id, ...firecrawlBody(w.event_prefix, event, w.metadata, documents) };
}

/**
 * Turns outbox events into deliveries, exactly once per (webhook, event), and queues them.
 *
 * A batch of undispatched events is locked (FOR UPDATE SKIP LOCKED, so concurrent fan-outs
 * take different events) for the whole pass. The deliveries are inserted outside that
 * transaction, committed before they are queued so a worker always finds its row, and are
 * unique per (webhook_id, event_id). Queue ids are delivery ids, so adding again is a no-op.
 * Only then are the events marked dispatched. A pass that dies anywhere leaves its events
 * undispatched; the next pass inserts nothing new and re-adds the same ids.
 */
export class OutboxFanOut {
  readonly #pool: pg.Pool;
  readonly #queue: DeliveryQueue;
  readonly #batchSize: number;
  readonly #now: () => Date;

  constructor(pool: pg.Pool, queue: DeliveryQueue, batchSize: number, now: () => Date = () => new Date()) {
    this.#pool = pool;
    this.#queue = queue;
    this.#batchSize = batchSize;
    this.#now = now;
  }

  /** One pass; returns the number of events it dispatched. */
  async runOnce(): Promise<number> {
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      const { rows: events } = await client.query<EventRow>(
        `SELECT id, user_id, mode::text AS mode, job_id, kind, data, created_at AT TIME ZONE 'UTC' AS created_at FROM events
         WHERE dispatched_at IS NULL ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.#batchSize],
      );
      if (events.length === 0) {
        await client.query('COMMIT');
        return 0;
      }
      const jobs = [
        ...(await this.#createDeliveries(events.filter((e) => SUBSCRIBABLE.has(e.kind)))),
        ...(await this.#jobScopedDeliveries(
          events.filter((e) => e.job_id !== null && isFirecrawlSourceKind(e.kind)),
        )),
        ...(await this.#testDeliveries(events.filter((e) => e.kind === TEST_EVENT))),
        ...resendJobs(events),
      ];
      if (jobs.length) await this.#queue.addBulk(jobs);
      await client.query(
        `UPDATE events SET dispatched_at = $2::timestamptz AT TIME ZONE 'UTC' WHERE id = ANY($1)`,
        [events.map((e) => e.id), this.#now()],
      );
      await client.query('COMMIT');
      return events.length;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * One autocommitted statement: inserts a delivery per subscribed active endpoint (a webhook of
   * no job) of each event's owner and mode, and returns every never-attempted delivery of these events, new or
   * left by an earlier pass that died (the no-op DO UPDATE makes RETURNING include those).
   */
  async #createDeliveries(events: EventRow[]): Promise<DeliveryEntry[]> {
    if (events.length === 0) return [];
    const now = this.#now();
    const { rows } = await this.#pool.query<{ id: string }>(
      `INSERT INTO deliveries (id, webhook_id, event_id, event_kind, body, status, attempts, created_at, updated_at)
       SELECT $6 || upper(substr(md5(gen_random_uuid()::text), 1, 16)), w.id, e.id, e.kind, e.body,
              'pending', 0, t.at, t.at
       FROM unnest($1::text[], $2::text[], $3::"Mode"[], $4::text[], $5::text[])
              AS e(id, user_id, mode, kind, body)
       JOIN webhooks w ON w.user_id = e.user_id AND w.mode = e.mode AND w.active AND e.kind = ANY(w.events)
                      AND w.job_id IS NULL
       CROSS JOIN (SELECT $7::timestamptz AT TIME ZONE 'UTC' AS at) AS t
       ON CONFLICT (webhook_id, event_id) DO UPDATE SET updated_at = deliveries.updated_at
         WHERE deliveries.status = 'pending' AND deliveries.attempts = 0
       RETURNING id`,
      [
        events.map((e) => e.id),
        events.map((e) => e.user_id),
        events.map((e) => e.mode),
        events.map((e) => e.kind),
        // Built once per event: every delivery and every retry of it sends these bytes.
        events.map((e) => encodeEnvelope({ ...e, createdAt: e.created_at })),
        // Ids shaped as newId('dlv') makes them: creation time first, so they sort by it, then
        // 16 random characters (hex digits are Crockford base32 digits too).
        newId('dlv', now.getTime()).slice(0, 'dlv_'.length + 10),
        now,
      ],
    );
    return rows.map((d) => ({
      name: 'deliver',
      data: { deliveryId: d.id },
      opts: { jobId: entryId.deliver(d.id) },
    }));
  }

  /**
   * The deliveries of job-scoped webhooks (a crawl's or batch's Firecrawl `webhook`, docs/api.md
   * §18): only their own job's events, each with a Firecrawl body built from the event and the
   * webhook's metadata (and a page event's from its page's document). Inserted and returned as
   * #createDeliveries does, so exactly once too.
   */
  async #jobScopedDeliveries(events: EventRow[]): Promise<DeliveryEntry[]> {
    if (events.length === 0) return [];
    const { rows: webhooks } = await this.#pool.query<JobWebhookRow>(
      `SELECT id, job_id, events, event_prefix, metadata FROM webhooks
       WHERE job_id = ANY($1) AND active AND style = 'firecrawl'`,
      [[...new Set(events.map((e) => e.job_id))]],
    );
    // By the Firecrawl event each one is: a failed run with pages stored is `completed`.
    const matches = (e: EventRow) => {
      const wanted = firecrawlEventOf({ kind: e.kind as FirecrawlSourceKind, data: e.data });
      return webhooks.filter((w) => w.job_id === e.job_id && wantsFirecrawlEvent(w.events, wanted));
    };
    const wanted = events.filter((e) => matches(e).length > 0);
    const entries = await this.#insertJobScoped(
      wanted
        .filter((e) => e.kind !== FIRECRAWL_PAGE_EVENT)
        .flatMap((e) => matches(e).map((w) => jobScopedRow(w, e, []))),
    );
    // A page's document can be large: a few pages at a time are read, turned into bodies and stored.
    const pages = wanted.filter((e) => e.kind === FIRECRAWL_PAGE_EVENT);
    for (let i = 0; i < pages.length; i += PAGES_AT_ONCE) {
      const chunk = pages.slice(i, i + PAGES_AT_ONCE);
      const documents = await pageDocuments(this.#pool, chunk);
      entries.push(
        ...(await this.#insertJobScoped(
          chunk.flatMap((e) => matches(e).map((w) => jobScopedRow(w, e, [documents.get(e.id)]))),
        )),
      );
    }
    return entries;
  }

  async #insertJobScoped(rows: JobScopedRow[]): Promise<DeliveryEntry[]> {
    if (rows.length === 0) return [];
    const now = this.#now();
    const { rows: inserted } = await this.#pool.query<{ id: string }>(
      `INSERT INTO deliveries (id, webhook_id, event_id, event_kind, body, status, attempts, created_at, updated_at)
       SELECT $5 || upper(substr(md5(gen_random_uuid()::text), 1, 16)), d.webhook_id, d.event_id, d.kind, d.body,
              'pending', 0, t.at, t.at
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS d(webhook_id, event_id, kind, body)
       CROSS JOIN (SELECT $6::timestamptz AT TIME ZONE 'UTC' AS at) AS t
       ON CONFLICT (webhook_id, event_id) DO UPDATE SET updated_at = deliveries.updated_at
         WHERE deliveries.status = 'pending' AND deliveries.attempts = 0
       RETURNING id`,
      [
        rows.map((r) => r.webhookId),
        rows.map((r) => r.eventId),
        rows.map((r) => r.type),
        rows.map((r) => r.body),
        newId('dlv', now.getTime()).slice(0, 'dlv_'.length + 10),
        now,
      ],
    );
    return inserted.map((d) => ({
      name: 'deliver',
      data: { deliveryId: d.id },
      opts: { jobId: entryId.deliver(d.id) },
    }));
  }

  /** The delivery the API created with a test event, queued for a single attempt. */
  async #testDeliveries(events: EventRow[]): Promise<DeliveryEntry[]> {
    if (events.length === 0) return [];
    const { rows } = await this.#pool.query<{ id: string }>(
      `SELECT d.id FROM deliveries d
       JOIN unnest($1::text[], $2::text[]) AS p(webhook_id, event_id)
         ON d.webhook_id = p.webhook_id AND d.event_id = p.event_id
       WHERE d.status = 'pending' AND d.attempts = 0`,
      [
        events.map((e) => (e.data as { webhook_id?: string } | null)?.webhook_id ?? ''),
        events.map((e) => e.id),
      ],
    );
    // A test event is tried once; the retries of docs/api.md §6 are for job events.
    return rows.map((d) => ({
      name: 'deliver',
      data: { deliveryId: d.id },
      opts: { jobId: d.id, attempts: 1 },
    }));
  }
}

function resendJobs(events: EventRow[]): DeliveryEntry[] {
  // A malformed command is dropped (marked dispatched with its batch), never retried forever.
  return events
    .filter((e) => e.kind === RESEND_COMMAND)
    .flatMap((e) => {
      const parsed = resendCommandSchema.safeParse(e.data);
      return parsed.success ? [parsed.data] : [];
    })
    .map((c) => ({
      name: 'resend',
      data: { deliveryId: c.delivery_id },
      opts: { jobId: entryId.resend(c.delivery_id, c.attempts), attempts: 1 },
    }));
}

/** Runs the fan-out until stopped: again at once after a full batch, else after `pollMs`. */
export function startFanOutLoop(
  fanOut: OutboxFanOut,
  opts: { pollMs: number; batchSize: number; log: Logger },
) {
  let stopped = false;
  let wake: (() => void) | null = null;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const loop = (async () => {
    let failures = 0;
    while (!stopped) {
      try {
        const n = await fanOut.runOnce();
        failures = 0;
        if (n < opts.batchSize) await sleep(opts.pollMs);
      } catch (err) {
        failures++;
        opts.log.error({ err: (err as Error).message, failures }, 'outbox fan-out failed; retrying');
        await sleep(Math.min(30_000, 500 * 2 ** Math.min(failures, 6)));
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
