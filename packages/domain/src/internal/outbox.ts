import type { OutboxData } from '@scrapejobs/contracts';
import { newId, type Prisma } from '@scrapejobs/db';
import type { Owner } from './principal.ts';

/** What an outbox event can be: a webhook event, a test event, or the resend command. */
export type OutboxKind = keyof OutboxData;

/**
 * An outbox event, to be written in the transaction of the change it announces, its `data` of the
 * contract's shape for its kind; the webhook worker's fan-out turns it into deliveries. (A run's
 * job.started is written by the statement that starts the run, its data built by `outboxDataSql`.)
 */
export function outboxEvent<K extends OutboxKind>(
  owner: Owner,
  kind: K,
  data: OutboxData[K],
  opts: { jobId: string | null; at: Date },
): Prisma.EventUncheckedCreateInput {
  return {
    id: newId('evt', opts.at.getTime()),
    userId: owner.userId,
    mode: owner.mode,
    jobId: opts.jobId,
    kind,
    data: data as Prisma.InputJsonObject,
    createdAt: opts.at,
  };
}

/**
 * The `data` of an outbox event built inside a SQL statement: a `jsonb_build_object` of one SQL
 * expression for each field of the contract's shape for `kind`, every field and no other.
 */
export function outboxDataSql<K extends OutboxKind>(
  _kind: K,
  fields: { [F in keyof OutboxData[K]]-?: string },
): string {
  const pairs = Object.entries(fields as Record<string, string>).map(([name, sql]) => `'${name}', ${sql}`);
  return `jsonb_build_object(${pairs.join(', ')})`;
}
