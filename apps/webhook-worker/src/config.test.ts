import { webhookWorkerEnvSchema } from './config.ts';

describe('webhook worker settings', () => {
  it('reads WEBHOOK_OUTBOX_RETENTION_DAYS: 30 by default, 0 to keep events, whole days only', () => {
    expect(webhookWorkerEnvSchema.parse({}).WEBHOOK_OUTBOX_RETENTION_DAYS).toBe(30);
    expect(
      webhookWorkerEnvSchema.parse({ WEBHOOK_OUTBOX_RETENTION_DAYS: '0' }).WEBHOOK_OUTBOX_RETENTION_DAYS,
    ).toBe(0);
    expect(webhookWorkerEnvSchema.safeParse({ WEBHOOK_OUTBOX_RETENTION_DAYS: '-1' }).success).toBe(false);
    expect(webhookWorkerEnvSchema.safeParse({ WEBHOOK_OUTBOX_RETENTION_DAYS: '1.5' }).success).toBe(false);
  });
});
