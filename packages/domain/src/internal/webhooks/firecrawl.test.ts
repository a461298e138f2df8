import { isId, type Mode, newId, type Prisma } from '@scrapejobs/db';
import { DEVELOPMENT_SECRET_KEY, SecretBox } from '@scrapejobs/outbound';
import { createTestDatabase, type TestDatabase } from '../../../../../test/support/database.ts';
import type { AppError } from '../errors.ts';
import type { DeliveryEntry } from './entries.ts';
import { OutboxFanOut } from './fan-out.ts';
import { checkJobWebhook, type JobWebhook, jobWebhookRow } from './firecrawl.ts';
import { WebhooksService } from './service.ts';

// Job-scoped Firecrawl webhooks (docs/api.md §18) through the real fan-out on a real database; the
// queue is a recording one (the fan-out's queueing itself is tested in fan-out.test.ts).
let tdb: TestDatabase;
const queued: DeliveryEntry[] = [];
const queue = {
  async addBulk(jobs: DeliveryEntry[]) {
    queued.push(...jobs);
  },
};

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(() => tdb.drop());
beforeEach(async () => {
  queued.length = 0;
  await tdb.db.event.deleteMany();
  await tdb.db.delivery.deleteMany();
});

const user = async () =>
  (await tdb.db.user.create({ data: { id: newId('usr'), email: `${newId('usr')}@x.test` } })).id;

async function job(userId: string, mode: Mode = 'test') {
  const id = newId('job');
  await tdb.db.job.create({
    data: { id, userId, mode, name: 'crawl', source: 'https://site.test/', queries: [], rateLimit: 60 },
  });
  return id;
}

const firecrawl = (over: Partial<JobWebhook['webhook']> = {}): JobWebhook['webhook'] => ({
  url: 'https://93.184.215.14/hook',
  headers: { 'X-Tenant': 't1' },
  metadata: { a: 1, tag: 'x' },
  events: ['started', 'page', 'completed', 'failed'],
  ...over,
});

async function jobWebhook(userId: string, jobId: string, prefix: JobWebhook['prefix'] = 'crawl', over = {}) {
  const data = jobWebhookRow(
    { userId, mode: 'test' },
    jobId,
    { webhook: firecrawl(over), prefix, field: 'webhook.url' },
    new Date(),
  );
  await tdb.db.webhook.create({ data });
  return data.id;
}

/** An outbox row of `jobId` as JobsService and the run store write them. */
async function event(userId: string, jobId: string, kind: string, data: Record<string, unknown>) {
  const createdAt = new Date();
  return tdb.db.event.create({
    data: {
      id: newId('evt', createdAt.getTime()),
      userId,
      mode: 'test',
      jobId,
      kind,
      data: data as Prisma.InputJsonObject,
      createdAt,
    },
  });
}

const started = (jobId: string, runId: string) => ({
  job_id: jobId,
  job_name: 'crawl',
  run_id: runId,
  status: 'running',
  trigger: 'manual',
});
const failed = (jobId: string, runId: string) => ({
  job_id: jobId,
  job_name: 'crawl',
  run_id: runId,
  status: 'failed',
  error: { code: 'HTTP_ERROR', message: 'The start page answered 500.', failed_urls: 1, successful_urls: 0 },
  skipped_urls: 0,
});
const fanOut = () => new OutboxFanOut(tdb.db.pool, queue, 100);
const deliveriesOf = (webhookId: string) =>
  tdb.db.delivery.findMany({ where: { webhookId }, orderBy: { createdAt: 'asc' } });

describe('the fan-out of job-scoped Firecrawl webhooks', () => {
  it('delivers its own job’s started, completed and failed events in Firecrawl’s shape, with the caller’s metadata', async () => {
    const u = await user();
    const j = await job(u);
    const wh = await jobWebhook(u, j);
    const runId = newId('run');
    const e1 = await event(u, j, 'job.started', started(j, runId));
    const e2 = await event(u, j, 'job.completed', { ...started(j, runId), status: 'success' });
    const e3 = await event(u, j, 'job.failed', failed(j, runId));
    expect(await fanOut().runOnce()).toBe(3);
    const rows = await deliveriesOf(wh);
    const byEvent = new Map(rows.map((d) => [d.eventId, d]));
    expect(rows.map((d) => d.eventKind).sort()).toEqual(['crawl.completed', 'crawl.failed', 'crawl.started']);
    expect(byEvent.get(e1.id)!.body).toBe(
      JSON.stringify({
        success: true,
        type: 'crawl.started',
        id: runId,
        webhookId: e1.id,
        data: [],
        metadata: { a: 1, tag: 'x' },
      }),
    );
    expect(JSON.parse(byEvent.get(e2.id)!.body)).toEqual({
      success: true,
      type: 'crawl.completed',
      id: runId,
      webhookId: e2.id,
      data: [],
      metadata: { a: 1, tag: 'x' },
    });
    expect(JSON.parse(byEvent.get(e3.id)!.body)).toEqual({
      success: false,
      type: 'crawl.failed',
      id: runId,
      webhookId: e3.id,
      data: [],
      metadata: { a: 1, tag: 'x' },
      error: 'The start page answered 500.',
    });
    expect(queued.map((q) => q.data.deliveryId).sort()).toEqual(rows.map((d) => d.id).sort());
    expect(rows.every((d) => isId('dlv', d.id) && d.status === 'pending' && d.attempts === 0)).toBe(true);
  });

  it('names a batch’s events batch_scrape.* and sends only the events asked for', async () => {
    const u = await user();
    const j = await job(u);
    const wh = await jobWebhook(u, j, 'batch_scrape', { events: ['completed'] });
    const runId = newId('run');
    await event(u, j, 'job.started', started(j, runId));
    await event(u, j, 'job.completed', { ...started(j, runId), status: 'success' });
    await fanOut().runOnce();
    const rows = await deliveriesOf(wh);
    expect(rows.map((d) => [d.eventKind, JSON.parse(d.body).type])).toEqual([
      ['batch_scrape.completed', 'batch_scrape.completed'],
    ]);
  });

  it('sends a failed run that stored pages as completed, as its crawl status reads, and one with none as failed', async () => {
    const u = await user();
    const [j1, j2] = [await job(u), await job(u)];
    const [partly, none] = [
      await jobWebhook(u, j1, 'crawl', { events: ['completed'] }),
      await jobWebhook(u, j2, 'batch_scrape', { events: ['completed'] }),
    ];
    const [r1, r2] = [newId('run'), newId('run')];
    const base = failed(j1, r1);
    const e1 = await event(u, j1, 'job.failed', {
      ...base,
      error: { ...base.error, message: '1 of 3 URLs failed', successful_urls: 2 },
    });
    await event(u, j2, 'job.failed', failed(j2, r2));
    await fanOut().runOnce();
    const [completed] = await deliveriesOf(partly);
    expect([completed!.eventKind, JSON.parse(completed!.body)]).toEqual([
      'crawl.completed',
      {
        success: true,
        type: 'crawl.completed',
        id: r1,
        webhookId: e1.id,
        data: [],
        metadata: { a: 1, tag: 'x' },
      },
    ]);
    // Nothing stored: failed, which this webhook did not ask for.
    expect(await deliveriesOf(none)).toEqual([]);
  });

  it('never matches another job’s events, nor events without a Firecrawl counterpart', async () => {
    const u = await user();
    const [j, other] = [await job(u), await job(u)];
    const wh = await jobWebhook(u, j);
    await event(u, other, 'job.started', started(other, newId('run')));
    await event(u, j, 'job.paused', { job_id: j, job_name: 'crawl', status: 'paused' });
    await event(u, j, 'job.changed', { job_id: j });
    expect(await fanOut().runOnce()).toBe(3);
    expect(await deliveriesOf(wh)).toEqual([]);
    expect(queued).toEqual([]);
  });

  it('leaves the job-scoped row out of the owner’s endpoints, which still get the job’s events as before', async () => {
    const u = await user();
    const j = await job(u);
    const scoped = await jobWebhook(u, j);
    const endpoint = newId('wh');
    await tdb.db.webhook.create({
      data: {
        id: endpoint,
        userId: u,
        mode: 'test',
        url: 'https://93.184.215.14/',
        events: ['job.started'],
        secretEncrypted: 'sealed',
      },
    });
    // Another job's start: the endpoint gets it, the scoped webhook (subscribed to job.started) does not.
    const other = await job(u);
    await event(u, other, 'job.started', started(other, newId('run')));
    await fanOut().runOnce();
    expect((await deliveriesOf(endpoint)).map((d) => JSON.parse(d.body).event)).toEqual(['job.started']);
    expect(await deliveriesOf(scoped)).toEqual([]);
    const service = new WebhooksService(tdb.db, {
      box: new SecretBox(DEVELOPMENT_SECRET_KEY),
      allowPrivate: false,
    });
    const owner = { userId: u, mode: 'test' as const };
    expect((await service.list(owner, { limit: 10 })).items.map((w) => w.id)).toEqual([endpoint]);
    await expect(service.get(owner, scoped)).rejects.toMatchObject({ status: 404 });
    await expect(service.delete(owner, scoped)).rejects.toMatchObject({ status: 404 });
  });

  it('makes each delivery exactly once: a pass that died before marking its events re-queues the same ids', async () => {
    const u = await user();
    const j = await job(u);
    const wh = await jobWebhook(u, j);
    await event(u, j, 'job.started', started(j, newId('run')));
    await fanOut().runOnce();
    const first = await deliveriesOf(wh);
    // As if the pass had died after inserting and queueing, before the events were marked.
    await tdb.db.event.updateMany({ data: { dispatchedAt: null } });
    await fanOut().runOnce();
    expect(await deliveriesOf(wh)).toEqual(first);
    expect(queued.map((q) => q.opts.jobId)).toEqual([first[0]!.id, first[0]!.id]);
    // Once attempted, a delivery is not queued again by a later pass.
    await tdb.db.delivery.updateMany({ data: { attempts: 1 } });
    await tdb.db.event.updateMany({ data: { dispatchedAt: null } });
    queued.length = 0;
    await fanOut().runOnce();
    expect(queued).toEqual([]);
    expect(await tdb.db.delivery.count({ where: { webhookId: wh } })).toBe(1);
  });

  it('is deleted with its job, deliveries and all', async () => {
    const u = await user();
    const j = await job(u);
    const wh = await jobWebhook(u, j);
    await event(u, j, 'job.started', started(j, newId('run')));
    await fanOut().runOnce();
    await tdb.db.job.delete({ where: { id: j } });
    expect(await tdb.db.webhook.findUnique({ where: { id: wh } })).toBeNull();
    expect(await deliveriesOf(wh)).toEqual([]);
  });
});

describe('checkJobWebhook', () => {
  const owner = { userId: 'usr_x', mode: 'test' as const };
  const resolve = async () => [{ address: '10.0.0.7', family: 4 }];
  const check = (
    webhook: JobWebhook['webhook'],
    allowPrivate = false,
    field = 'webhook.url',
    mode: Mode = 'test',
  ) => checkJobWebhook({ ...owner, mode }, { webhook, prefix: 'crawl', field }, { allowPrivate, resolve });

  it('refuses a private target at the field the URL was given in, unless private targets are allowed', async () => {
    const fieldOf = async (p: Promise<void>) =>
      Object.keys((await p.catch((e: AppError) => e))!.extra.details!);
    expect(await fieldOf(check(firecrawl({ url: 'http://intranet.test/hook' })))).toEqual(['webhook.url']);
    expect(await fieldOf(check(firecrawl({ url: 'http://intranet.test/hook' }), false, 'webhook'))).toEqual([
      'webhook',
    ]);
    await expect(check(firecrawl({ url: 'http://intranet.test/hook' }), true)).resolves.toBeUndefined();
    await expect(check(firecrawl({ url: 'http://169.254.169.254/' }), true)).rejects.toMatchObject({
      status: 400,
    });
  });

  it('wants https for a live key, and headers that can be sent', async () => {
    await expect(
      check(firecrawl({ url: 'http://93.184.215.14/' }), false, 'webhook.url', 'live'),
    ).rejects.toMatchObject({ status: 400 });
    await expect(check(firecrawl({ headers: { 'Bad Name': 'x' } }))).rejects.toMatchObject({ status: 400 });
    await expect(check(firecrawl({ headers: { 'X-Ok': 'a\r\nInjected: 1' } }))).rejects.toMatchObject({
      status: 400,
    });
    await expect(check(firecrawl())).resolves.toBeUndefined();
  });
});

describe('the account’s Firecrawl webhook secret', () => {
  const service = () =>
    new WebhooksService(tdb.db, { box: new SecretBox(DEVELOPMENT_SECRET_KEY), allowPrivate: false });

  it('is made once when first needed, concurrent calls included, and kept by later ones', async () => {
    const owner = { userId: await user() };
    await Promise.all(Array.from({ length: 5 }, () => service().ensureFirecrawlSecret(owner)));
    const first = await service().revealFirecrawlSecret(owner);
    expect(first).toMatch(/^fcwhsec_[\w-]{43}$/);
    await service().ensureFirecrawlSecret(owner);
    expect(await service().revealFirecrawlSecret(owner)).toBe(first);
    const rotated = await service().rotateFirecrawlSecret(owner);
    await service().ensureFirecrawlSecret(owner);
    expect(await service().revealFirecrawlSecret(owner)).toBe(rotated);
  });
});
