import type { Payload } from '@scrapejobs/queues';
import type { JobsOptions } from 'bullmq';

/** The kinds of queue entry of a delivery: its first attempts, a resend, or a continuation queued by the sweep. */
export type DeliveryEntryKind = 'deliver' | 'resend' | 'continue';

/** A delivery's queue entry as the fan-out and the sweep add it. */
export interface DeliveryEntry {
  name: DeliveryEntryKind;
  data: Payload<'webhookDeliveries'>;
  opts: JobsOptions;
}

/**
 * Queue ids, fixed per delivery and attempt count so that adding an entry again is a no-op. A
 * resend's and a continuation's carry the attempts the delivery had when they were queued.
 */
export const entryId = {
  deliver: (deliveryId: string): string => deliveryId,
  resend: (deliveryId: string, attempts: number): string => `${deliveryId}-r${attempts}`,
  continue: (deliveryId: string, attempts: number): string => `${deliveryId}-c${attempts}`,
};

const COUNTED = /-[rc](\d+)$/;

/** What an entry taken from the queue stands for: its kind and the attempts the delivery had before it. */
export function readEntry(job: { name: string; id?: string | undefined }): {
  kind: DeliveryEntryKind;
  priorAttempts: number;
} {
  if (job.name !== 'resend' && job.name !== 'continue') return { kind: 'deliver', priorAttempts: 0 };
  return { kind: job.name, priorAttempts: Number(COUNTED.exec(job.id ?? '')?.[1] ?? 0) };
}
