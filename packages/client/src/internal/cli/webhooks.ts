import type { CreateWebhookRequest, Delivery, Webhook } from '../types.ts';
import { type Command, type Context, limitOf, pageSize, readJsonFile, str, UsageError } from './command.ts';
import { type Column, take } from './output.ts';

const WEBHOOK_COLUMNS: Column<Webhook>[] = [
  { header: 'webhook_id', value: (w) => w.webhook_id },
  { header: 'active', value: (w) => w.active },
  { header: 'events', value: (w) => w.events.join(',') },
  { header: 'created_at', value: (w) => w.created_at },
  { header: 'url', value: (w) => w.url },
];

const DELIVERY_COLUMNS: Column<Delivery>[] = [
  { header: 'delivery_id', value: (d) => d.delivery_id },
  { header: 'event', value: (d) => d.event },
  { header: 'status', value: (d) => d.status },
  { header: 'attempts', value: (d) => d.attempts },
  { header: 'last_answer', value: (d) => d.attempt_log[0]?.status_code ?? d.attempt_log[0]?.error },
  { header: 'updated_at', value: (d) => d.updated_at },
];

/** The body from `-f`, else from the flags; the secret may come from SCRAPEJOBS_WEBHOOK_SECRET. */
async function webhookBody(ctx: Context): Promise<CreateWebhookRequest> {
  const file = str(ctx.values, 'file');
  if (file) return (await readJsonFile(file, ctx.streams.stdin)) as CreateWebhookRequest;
  const url = str(ctx.values, 'url');
  const events = str(ctx.values, 'events');
  const secret = str(ctx.values, 'secret') ?? ctx.env.SCRAPEJOBS_WEBHOOK_SECRET;
  if (!url || !events || !secret)
    throw new UsageError(
      'webhooks create needs --url, --events and --secret (or SCRAPEJOBS_WEBHOOK_SECRET), or -f <webhook.json>',
    );
  const description = str(ctx.values, 'description');
  return {
    url,
    events: events.split(',').map((e) => e.trim()) as CreateWebhookRequest['events'],
    secret,
    ...(description !== undefined && { description }),
  };
}

function printDelivery(ctx: Context, delivery: Delivery, what: string): undefined {
  if (ctx.out.json) ctx.out.value(delivery);
  else ctx.out.line(`${delivery.delivery_id} ${what} (${delivery.event}, event ${delivery.event_id})`);
  return undefined;
}

export const webhookCommands: Record<string, Command> = {
  'webhooks create': {
    usage:
      'webhooks create --url <url> --events <a,b> --secret <secret> [--description <text>] | -f <webhook.json>',
    summary: 'create a webhook (the secret signs every delivery; it is never shown again)',
    options: {
      file: { type: 'string', short: 'f' },
      url: { type: 'string' },
      events: { type: 'string' },
      secret: { type: 'string' },
      description: { type: 'string' },
    },
    async run(ctx) {
      const webhook = await ctx.client.webhooks.create(await webhookBody(ctx));
      if (ctx.out.json) ctx.out.value(webhook);
      else ctx.out.line(`${webhook.webhook_id} created for ${webhook.url} (${webhook.events.join(', ')})`);
      return undefined;
    },
  },
  'webhooks list': {
    usage: 'webhooks list [--limit <n>]',
    summary: 'list webhooks, newest first',
    options: { limit: { type: 'string' } },
    async run(ctx) {
      const limit = limitOf(ctx.values);
      await ctx.out.list(
        take(ctx.client.webhooks.iterate({ limit: pageSize(limit) }), limit),
        () => WEBHOOK_COLUMNS,
      );
      return undefined;
    },
  },
  'webhooks get': {
    usage: 'webhooks get <webhook_id>',
    summary: 'show a webhook',
    args: ['webhook_id'],
    async run(ctx) {
      ctx.out.record(await ctx.client.webhooks.get(ctx.args[0]!));
      return undefined;
    },
  },
  'webhooks delete': {
    usage: 'webhooks delete <webhook_id>',
    summary: 'delete a webhook and its delivery history',
    args: ['webhook_id'],
    async run(ctx) {
      const id = ctx.args[0]!;
      await ctx.client.webhooks.delete(id);
      if (ctx.out.json) ctx.out.value({ webhook_id: id, deleted: true });
      else ctx.out.line(`${id} deleted`);
      return undefined;
    },
  },
  'webhooks deliveries': {
    usage: 'webhooks deliveries <webhook_id> [--status pending|succeeded|failed] [--limit <n>]',
    summary: "list a webhook's deliveries with their attempts, newest first",
    args: ['webhook_id'],
    options: { status: { type: 'string' }, limit: { type: 'string' } },
    async run(ctx) {
      const limit = limitOf(ctx.values);
      const status = str(ctx.values, 'status') as Delivery['status'] | undefined;
      const deliveries = ctx.client.webhooks.iterateDeliveries(ctx.args[0]!, {
        status,
        limit: pageSize(limit),
      });
      await ctx.out.list(take(deliveries, limit), () => DELIVERY_COLUMNS);
      return undefined;
    },
  },
  'webhooks test': {
    usage: 'webhooks test <webhook_id>',
    summary: 'send a webhook.test event to this endpoint alone',
    args: ['webhook_id'],
    run: async (ctx) => printDelivery(ctx, await ctx.client.webhooks.test(ctx.args[0]!), 'queued'),
  },
  'webhooks resend': {
    usage: 'webhooks resend <webhook_id> <delivery_id>',
    summary: 'make one new attempt of a failed delivery',
    args: ['webhook_id', 'delivery_id'],
    run: async (ctx) =>
      printDelivery(ctx, await ctx.client.webhooks.resend(ctx.args[0]!, ctx.args[1]!), 'queued again'),
  },
};
