import type { RESEND_COMMAND, TEST_EVENT, WebhookEventName } from '@scrapejobs/contracts';
import { newId, type Prisma } from '@scrapejobs/db';
import type { Owner } from './principal.ts';

/** What an outbox event can be: a webhook event, a test event, or the resend command. */
export type OutboxKind = WebhookEventName | typeof TEST_EVENT | typeof RESEND_COMMAND;

/**
 * An outbox event, to be written in the transaction of the change it announces; the webhook
 * worker's fan-out turns it into deliveries. (A run's job.started is the same row written by the
 * one statement that starts the run: jobs/service.ts.)
 */
export function outboxEvent(
  owner: Owner,
  kind: OutboxKind,
  data: Prisma.InputJsonObject,
  opts: { jobId: string | null; at: Date },
): Prisma.EventUncheckedCreateInput {
  return {
    id: newId('evt', opts.at.getTime()),
    userId: owner.userId,
    mode: owner.mode,
    jobId: opts.jobId,
    kind,
    data,
    createdAt: opts.at,
  };
}
