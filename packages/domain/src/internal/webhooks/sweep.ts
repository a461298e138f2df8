import { TEST_EVENT } from '@scrapejobs/contracts';
import { catalog, type Payload } from '@scrapejobs/queues';
import type { JobState, Queue } from 'bullmq';
import type pg from 'pg';
import { type DeliveryEntry, entryId } from './entries.ts';

const ATTEMPTS = catalog.webhookDeliveries.options.attempts;
const LIVE = new Set<JobState | 'unknown'>([
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
]);

interface PendingRow {
  id: string;
  event_kind: string;
  attempts: number;
  updated_at: Date;
}

/**
 * Pending deliveries whose queue entry is gone (Redis lost data, or an entry ended without moving
 * its delivery on) are queued again, each as the entry it should have had: the first attempt,
 * the rest of its retries after the delay still due, or the one attempt of a resend. A delivery
 * is left alone while any entry that could still attempt it is waiting, delayed or active, and
 * until `graceMs` after its last change, which covers the fan-out's and the resend's own queueing.
 * Queue ids are fixed per delivery and attempt count, so two sweeps (or a sweep and the fan-out)
 * add one entry.
 *
 * Each pass reads `batchSize` deliveries after the previous pass's last, and starts over when it
 * reaches the end, so a long list of deliveries in backoff is checked in turns.
 */
export class LostDeliverySweep {
  readonly #pool: pg.Pool;
  readonly #queue: Queue<Payload<'webhookDeliveries'>, unknown, string>;
  readonly #retryDelays: readonly number[];
  readonly #graceMs: number;
  readonly #batchSize: number;
  #after: { updatedAt: Date; id: string } | null = null;

  constructor(
    pool: pg.Pool,
    queue: Queue<Payload<'webhookDeliveries'>, unknown, string>,
    opts: { retryDelays: readonly number[]; graceMs?: number; batchSize?: number },
  ) {
    this.#pool = pool;
    this.#queue = queue;
    this.#retryDelays = opts.retryDelays;
    this.#graceMs = opts.graceMs ?? 60_000;
    this.#batchSize = opts.batchSize ?? 500;
  }

  /** One pass; returns the ids of the deliveries it queued again. */
  async runOnce(now = Date.now()): Promise<string[]> {
    // Columns are TIMESTAMP(3) holding UTC: converted explicitly, whatever the session time zone.
    const { rows } = await this.#pool.query<PendingRow>(
      `SELECT id, event_kind, attempts, updated_at AT TIME ZONE 'UTC' AS updated_at FROM deliveries
       WHERE status = 'pending' AND updated_at < $1::timestamptz AT TIME ZONE 'UTC'
         AND (updated_at, id) > ($2::timestamptz AT TIME ZONE 'UTC', $3)
       ORDER BY updated_at, id LIMIT $4`,
      [
        new Date(now - this.#graceMs),
        this.#after?.updatedAt ?? new Date(0),
        this.#after?.id ?? '',
        this.#batchSize,
      ],
    );
    const last = rows.at(-1);
    this.#after = rows.length < this.#batchSize || !last ? null : { updatedAt: last.updated_at, id: last.id };
    const requeued: string[] = [];
    for (const row of rows) if (await this.#requeueIfLost(row, now)) requeued.push(row.id);
    return requeued;
  }

  async #requeueIfLost(row: PendingRow, now: number): Promise<boolean> {
    const states = await Promise.all(candidateIds(row).map((id) => this.#queue.getJobState(id)));
    if (states.some((s) => LIVE.has(s))) return false;
    const job = this.#entryFor(row, now);
    const id = job.opts.jobId!;
    // An entry that ended leaves its id taken: adding again would be a silent no-op.
    const state = await this.#queue.getJobState(id);
    if (LIVE.has(state)) return false;
    if (state !== 'unknown') await this.#queue.remove(id);
    await this.#queue.add(job.name, job.data, job.opts);
    return true;
  }

  /** The entry a pending delivery should have, given what it has been through. */
  #entryFor(row: PendingRow, now: number): DeliveryEntry {
    const data = { deliveryId: row.id };
    const single = row.event_kind === TEST_EVENT;
    if (row.attempts === 0)
      return {
        name: 'deliver',
        data,
        opts: { jobId: entryId.deliver(row.id), ...(single && { attempts: 1 }) },
      };
    // Pending after its last attempt, a test event or a job event that used up its retries was resent.
    if (single || row.attempts >= ATTEMPTS)
      return { name: 'resend', data, opts: { jobId: entryId.resend(row.id, row.attempts), attempts: 1 } };
    const due = row.updated_at.getTime() + (this.#retryDelays[row.attempts - 1] ?? 0);
    return {
      name: 'continue',
      data,
      opts: {
        jobId: entryId.continue(row.id, row.attempts),
        attempts: ATTEMPTS - row.attempts,
        delay: Math.max(0, due - now),
      },
    };
  }
}

/** Every queue id under which an entry could still make the delivery's next attempt. */
function candidateIds(row: PendingRow): string[] {
  const ids = [entryId.deliver(row.id)];
  if (row.attempts > 0) ids.push(entryId.resend(row.id, row.attempts));
  for (let k = 1; k <= Math.min(row.attempts, ATTEMPTS - 1); k++) ids.push(entryId.continue(row.id, k));
  return ids;
}
