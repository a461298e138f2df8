import { counter, Gauge, histogram, type Registry } from '@scrapejobs/observability';

/** The webhook worker's metrics on `registry`; `oldestEventAge` reads the outbox when scraped (seconds). */
export function webhookMetrics(registry: Registry, oldestEventAge: () => Promise<number>) {
  new Gauge({
    name: 'webhook_outbox_oldest_seconds',
    help: 'Age of the oldest event not yet fanned out into deliveries (0 when none waits).',
    registers: [registry],
    async collect() {
      this.set(await oldestEventAge());
    },
  });
  return {
    attempts: counter(
      registry,
      'webhook_attempts_total',
      'Delivery attempts by outcome: succeeded, retrying (failed, retried later) or failed (for good).',
      ['outcome'],
    ),
    attemptSeconds: histogram(
      registry,
      'webhook_attempt_duration_seconds',
      'Time from sending an attempt to its answer or failure.',
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ),
    requeued: counter(
      registry,
      'webhook_deliveries_requeued_total',
      'Pending deliveries the sweep queued again because no queue entry could still attempt them.',
    ),
    pruned: counter(
      registry,
      'webhook_outbox_events_pruned_total',
      'Outbox events deleted after WEBHOOK_OUTBOX_RETENTION_DAYS.',
    ),
  };
}
