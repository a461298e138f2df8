import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verify } from '@octokit/webhooks-methods';
import type { WebhooksService } from '@scrapejobs/domain';
import { Webhook } from 'standardwebhooks';
import { buildTestApi } from '../support/api.ts';
import { client, validJob } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type Proc, startApp, until } from '../support/processes.ts';
import { REDIS_URL, testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

// Every receiver, target site and worker here is on 127.0.0.1; nothing leaves the machine.
const DELAYS = [150, 300, 450, 600, 750];
const TIMEOUT_MS = 500; // the 10 s of docs/api.md §6, shortened through WEBHOOK_TIMEOUT_MS
const SECRET = 'e2e-webhook-secret-0123456789';
const KEY = randomBytes(32);

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let webhooks: WebhooksService;
let site: Awaited<ReturnType<typeof startSite>>;
const prefix = testPrefix();
const procs: Proc[] = [];
let worker: Proc;
const receivers: Receiver[] = [];

const workerEnv = (over: Record<string, string> = {}) => ({
  DATABASE_URL: tdb.url,
  REDIS_URL,
  QUEUE_PREFIX: prefix.prefix,
  ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
  PUBLIC_BASE_URL: 'https://scrape.example.com',
  WEBHOOK_SECRET_KEY: KEY.toString('hex'),
  WEBHOOK_RETRY_DELAYS_MS: DELAYS.join(','),
  WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  WEBHOOK_OUTBOX_POLL_MS: '50',
  ...over,
});

async function start(app: 'webhook-worker' | 'scraper-worker', over: Record<string, string> = {}) {
  const p = startApp(app, workerEnv(over));
  procs.push(p);
  await p.waitForLog(
    (l) => l.msg === (app === 'webhook-worker' ? 'webhook worker started' : 'scraper worker started'),
  );
  return p;
}

interface Hit {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}
type Answer = { status: number; delayMs?: number; headers?: Record<string, string> };
interface Receiver {
  url: string;
  hits: Hit[];
  bodies(): Envelope[];
  waitFor(n: number, timeoutMs?: number): Promise<unknown>;
  close(): Promise<void>;
}

/** A local webhook receiver recording every request; `answer` decides each reply. */
async function startReceiver(answer: (n: number) => Answer = () => ({ status: 200 })): Promise<Receiver> {
  const hits: Hit[] = [];
  const server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const a = answer(hits.length);
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(a.status, a.headers).end('ok');
      }, a.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const r: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits,
    bodies: () => hits.map((h) => JSON.parse(h.body) as Envelope),
    waitFor: (n: number, timeoutMs = 10_000) => until(async () => hits.length >= n, timeoutMs, 20),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  receivers.push(r);
  return r;
}

interface Envelope {
  id: string;
  event: string;
  timestamp: string;
  data: Record<string, unknown>;
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  // The API's own wiring, with the worker's key and loopback targets allowed.
  api = buildTestApi({
    db: tdb.db,
    prefix: prefix.prefix,
    webhooks: { WEBHOOK_SECRET_KEY: KEY, ALLOW_PRIVATE_NETWORK_TARGETS: true },
  });
  webhooks = api.webhooks;
  site = await startSite();
  worker = await start('webhook-worker');
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill('SIGKILL')));
  await Promise.all(receivers.map((r) => r.close()));
  await site.close();
  await api.close();
  await tdb.drop();
  await prefix.cleanup();
});

const ALL_EVENTS = ['job.completed', 'job.failed', 'job.started', 'job.paused'] as const;

/** A user with an API client; its webhooks are created through the service (loopback allowed here). */
async function account() {
  const mode = 'test' as const;
  const email = `${randomBytes(4).toString('hex')}@e2e.test`;
  const { token, userId } = await api.keys.create({
    email,
    mode,
    scopes: ['jobs:read', 'jobs:write', 'webhooks:read', 'webhooks:write'],
    name: 'e2e',
  });
  const owner = { userId, mode };
  return {
    owner,
    c: client(api.app, token),
    hook: async (url: string, events: readonly (typeof ALL_EVENTS)[number][] = ALL_EVENTS) =>
      (await webhooks.create(owner, { url, events: [...events], secret: SECRET, description: null })).id,
  };
}

async function pausedJob(c: ReturnType<typeof client>) {
  const job = (await c.post('/jobs', validJob())).body;
  expect((await c.post(`/jobs/${job.job_id}/pause`)).status).toBe(200);
  return job.job_id as string;
}

const deliveriesOf = async (c: ReturnType<typeof client>, webhookId: string) =>
  (await c.get(`/webhooks/${webhookId}/deliveries`)).body.deliveries as {
    delivery_id: string;
    event_id: string;
    status: string;
    attempts: number;
    attempt_log: {
      attempt: number;
      status_code: number | null;
      error: string | null;
      duration_ms: number;
      at: string;
    }[];
  }[];

async function expectSigned(hit: Hit) {
  const body = JSON.parse(hit.body) as Envelope;
  expect(hit.headers['content-type']).toBe('application/json');
  expect(hit.headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
  expect(await verify(SECRET, hit.body, hit.headers['x-service-signature'] as string)).toBe(true);
  expect(await verify(`${SECRET}x`, hit.body, hit.headers['x-service-signature'] as string)).toBe(false);
  // Standard Webhooks: keyed with the secret's UTF-8 bytes, timestamp within its 5-minute tolerance.
  const standard = new Webhook(Buffer.from(SECRET, 'utf8'), { format: 'raw' });
  expect(standard.verify(hit.body, hit.headers as Record<string, string>)).toEqual(body);
  expect(hit.headers['webhook-id']).toBe(body.id);
  expect(Math.abs(Number(hit.headers['webhook-timestamp']) * 1000 - hit.at)).toBeLessThan(1_500);
  expect(hit.headers['x-service-event']).toBe(body.event);
  expect(hit.headers['x-service-event-id']).toBe(body.id);
  return body;
}

describe('webhook deliveries', () => {
  it('delivers every event kind with the documented data, signed (sha256= and Standard Webhooks)', async () => {
    const scraper = await start('scraper-worker');
    const r = await startReceiver();
    const { c, hook } = await account();
    await hook(r.url);
    const runJob = async (source: string) => {
      const job = (await c.post('/jobs', validJob({ source, rate_limit: 6000 }))).body;
      const run = (await c.post(`/jobs/${job.job_id}/run`)).body;
      await until(
        async () => (await tdb.db.job.findUnique({ where: { id: job.job_id } }))?.status !== 'running',
      );
      return { jobId: job.job_id as string, runId: run.run_id as string };
    };
    const ok = await runJob(`${site.url}/page/1`);
    const bad = await runJob(`${site.url}/status/404`);
    expect((await c.post(`/jobs/${ok.jobId}/pause`)).status).toBe(200);
    await r.waitFor(5);
    await scraper.kill('SIGTERM');

    const bodies: Envelope[] = [];
    for (const hit of r.hits) {
      bodies.push(await expectSigned(hit));
      expect(hit.headers['x-service-delivery-attempt']).toBe('1');
      expect(hit.body.startsWith(`{"id":"evt_`)).toBe(true);
    }
    const byKind = (kind: string, jobId: string) =>
      bodies.find((b) => b.event === kind && b.data.job_id === jobId)!;
    const okRun = await tdb.db.run.findUniqueOrThrow({ where: { id: ok.runId } });
    expect(byKind('job.started', ok.jobId).data).toEqual({
      job_id: ok.jobId,
      job_name: 'Example',
      run_id: ok.runId,
      status: 'running',
      trigger: 'manual',
    });
    expect(byKind('job.completed', ok.jobId).data).toEqual({
      job_id: ok.jobId,
      job_name: 'Example',
      run_id: ok.runId,
      status: 'success',
      results_count: okRun.resultsCount,
      duration_ms: okRun.durationMs,
      download_url: `https://scrape.example.com/jobs/${ok.jobId}/download`,
      skipped_urls: 0,
    });
    expect(okRun.resultsCount).toBeGreaterThan(0);
    expect(byKind('job.failed', bad.jobId).data).toEqual({
      job_id: bad.jobId,
      job_name: 'Example',
      run_id: bad.runId,
      status: 'failed',
      error: {
        code: 'HTTP_ERROR',
        message: expect.stringMatching(/404/),
        failed_urls: 1,
        successful_urls: 0,
      },
      skipped_urls: 0,
    });
    expect(byKind('job.paused', ok.jobId).data).toEqual({
      job_id: ok.jobId,
      job_name: 'Example',
      status: 'paused',
    });
    // The envelope's id and timestamp are the outbox event's.
    for (const b of bodies) {
      const event = await tdb.db.event.findUniqueOrThrow({ where: { id: b.id } });
      expect([b.event, b.timestamp]).toEqual([event.kind, event.createdAt.toISOString()]);
    }
    expect(new Set(bodies.map((b) => b.id)).size).toBe(5);
  });

  it('sends only subscribed events, only to the owner webhooks in the event mode, never to inactive ones', async () => {
    const [mine, live, other, inactive] = [
      await startReceiver(),
      await startReceiver(),
      await startReceiver(),
      await startReceiver(),
    ];
    const me = await account();
    await me.hook(mine.url, ['job.paused']);
    const meLive = { userId: me.owner.userId, mode: 'live' as const };
    const liveHook = await webhooks.create(meLive, {
      url: live.url.replace('http:', 'https:'),
      events: [...ALL_EVENTS],
      secret: SECRET,
      description: null,
    });
    await (await account()).hook(other.url);
    const off = await me.hook(inactive.url);
    await tdb.db.webhook.update({ where: { id: off }, data: { active: false } });

    const job = (await me.c.post('/jobs', validJob())).body;
    await me.c.post(`/jobs/${job.job_id}/run`);
    await me.c.post(`/jobs/${job.job_id}/pause`);
    await mine.waitFor(1);
    await until(
      async () => (await tdb.db.event.count({ where: { jobId: job.job_id, dispatchedAt: null } })) === 0,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(mine.bodies().map((b) => b.event)).toEqual(['job.paused']);
    expect([live.hits.length, other.hits.length, inactive.hits.length]).toEqual([0, 0, 0]);
    expect(await tdb.db.delivery.count({ where: { webhookId: { in: [off, liveHook.id] } } })).toBe(0);
  });

  it('retries a failing receiver after the configured delays with the same bytes, then marks it failed; resend makes one more attempt', async () => {
    let status = 500;
    const r = await startReceiver(() => ({ status }));
    const { c, hook } = await account();
    const webhookId = await hook(r.url, ['job.paused']);
    await pausedJob(c);
    await r.waitFor(6, 8_000);
    const [delivery] = await until(async () => {
      const d = await deliveriesOf(c, webhookId);
      return d[0]?.status === 'failed' ? d : null;
    });
    expect(r.hits.map((h) => h.headers['x-service-delivery-attempt'])).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
    ]);
    expect(new Set(r.hits.map((h) => h.body)).size).toBe(1);
    expect(new Set(r.hits.map((h) => h.headers['x-service-event-id'])).size).toBe(1);
    for (const hit of r.hits) await expectSigned(hit);
    r.hits.slice(1).forEach((hit, i) => {
      const gap = hit.at - r.hits[i]!.at;
      expect(gap).toBeGreaterThanOrEqual(DELAYS[i]! - 5);
      expect(gap).toBeLessThan(DELAYS[i]! + 500);
    });
    expect(delivery).toEqual(
      expect.objectContaining({ status: 'failed', attempts: 6, event_id: r.bodies()[0]!.id }),
    );
    // Attempt times are stored in UTC and read back as the moments the requests arrived.
    expect(Math.abs(Date.parse(delivery!.attempt_log.at(-1)!.at) - r.hits[0]!.at)).toBeLessThan(1_000);
    expect(delivery!.attempt_log.map((a) => [a.attempt, a.status_code, a.error])).toEqual(
      [6, 5, 4, 3, 2, 1].map((n) => [n, 500, null]),
    );
    await new Promise((res) => setTimeout(res, DELAYS.at(-1)! + 200));
    expect(r.hits).toHaveLength(6);

    // Resend: one new attempt, same event id and bytes; still failing, it stays failed.
    const resend = `/webhooks/${webhookId}/deliveries/${delivery!.delivery_id}/resend`;
    expect((await c.post(resend)).status).toBe(202);
    await r.waitFor(7);
    expect(r.hits[6]!.body).toBe(r.hits[0]!.body);
    expect(r.hits[6]!.headers['x-service-delivery-attempt']).toBe('1');
    await until(async () => (await deliveriesOf(c, webhookId))[0]?.status === 'failed');
    status = 200;
    expect((await c.post(resend)).status).toBe(202);
    await r.waitFor(8);
    const [done] = await until(async () => {
      const d = await deliveriesOf(c, webhookId);
      return d[0]?.status === 'succeeded' ? d : null;
    });
    expect(done!.attempts).toBe(8);
    expect(done!.attempt_log[0]).toEqual(
      expect.objectContaining({ attempt: 8, status_code: 200, error: null }),
    );
    expect(r.hits[7]!.body).toBe(r.hits[0]!.body);
    expect((await c.post(resend)).status).toBe(409);
  });

  it('records a receiver that is down, answers 500, answers too late or redirects as failed attempts', async () => {
    const target = await startReceiver();
    const down = await startReceiver();
    await down.close();
    const failing = await startReceiver(() => ({ status: 500 }));
    const slow = await startReceiver(() => ({ status: 200, delayMs: TIMEOUT_MS + 1_000 }));
    const redirect = await startReceiver(() => ({ status: 302, headers: { Location: target.url } }));
    const { c, hook } = await account();
    const ids = {
      down: await hook(down.url, ['job.paused']),
      failing: await hook(failing.url, ['job.paused']),
      slow: await hook(slow.url, ['job.paused']),
      redirect: await hook(redirect.url, ['job.paused']),
    };
    await pausedJob(c);
    const first = async (id: string) =>
      until(async () => (await deliveriesOf(c, id))[0]?.attempt_log.at(-1), 5_000, 50);
    expect(await first(ids.down)).toEqual(
      expect.objectContaining({ attempt: 1, status_code: null, error: 'connection refused' }),
    );
    expect(await first(ids.failing)).toEqual(
      expect.objectContaining({ attempt: 1, status_code: 500, error: null }),
    );
    const late = await first(ids.slow);
    expect(late).toEqual(
      expect.objectContaining({ attempt: 1, status_code: null, error: `no answer within ${TIMEOUT_MS} ms` }),
    );
    expect(late.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(late.duration_ms).toBeLessThan(TIMEOUT_MS + 300);
    expect(await first(ids.redirect)).toEqual(
      expect.objectContaining({ attempt: 1, status_code: 302, error: 'redirect not followed' }),
    );
    expect(target.hits).toHaveLength(0);
    // Deleting the webhooks drops their queued retries with their deliveries.
    for (const id of Object.values(ids)) expect((await c.delete(`/webhooks/${id}`)).status).toBe(204);
    expect(await tdb.db.delivery.count({ where: { webhookId: { in: Object.values(ids) } } })).toBe(0);
    expect(target.hits).toHaveLength(0);
  });

  it('stops at 410 Gone: no retry, and the webhook is deactivated for later events', async () => {
    const r = await startReceiver(() => ({ status: 410 }));
    const { c, hook } = await account();
    const webhookId = await hook(r.url, ['job.paused']);
    await pausedJob(c);
    await r.waitFor(1);
    await until(async () => (await c.get(`/webhooks/${webhookId}`)).body.active === false);
    const [delivery] = await deliveriesOf(c, webhookId);
    expect(delivery).toEqual(expect.objectContaining({ status: 'failed', attempts: 1 }));
    const jobId = await pausedJob(c);
    await until(async () => (await tdb.db.event.count({ where: { jobId, dispatchedAt: null } })) === 0);
    await new Promise((res) => setTimeout(res, DELAYS[0]! + 300));
    expect(r.hits).toHaveLength(1);
    expect(await deliveriesOf(c, webhookId)).toHaveLength(1);
  });

  it('sends webhook.test to that endpoint alone', async () => {
    const [a, b] = [await startReceiver(), await startReceiver()];
    const { c, hook } = await account();
    const target = await hook(a.url, ['job.failed']);
    await hook(b.url);
    const res = await c.post(`/webhooks/${target}/test`);
    expect(res.status).toBe(202);
    await a.waitFor(1);
    const body = await expectSigned(a.hits[0]!);
    expect(body).toEqual({
      id: res.body.event_id,
      event: 'webhook.test',
      timestamp: expect.any(String),
      data: { webhook_id: target, message: expect.any(String) },
    });
    await until(async () => (await deliveriesOf(c, target))[0]?.status === 'succeeded');
    await new Promise((res) => setTimeout(res, 200));
    expect(b.hits).toHaveLength(0);
    expect(a.hits).toHaveLength(1);
  });

  it('serves /health, /ready and /metrics with attempt counts and queue depth on its ops port', async () => {
    const port = worker.logs.find((l) => l.msg === 'webhook worker started')!.metrics_port as number;
    const base = `http://127.0.0.1:${port}`;
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${base}/ready`)).json()).toEqual({
      status: 'ready',
      checks: { postgres: 'ok', redis: 'ok' },
    });
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toMatch(/^webhook_attempts_total\{[^}]*outcome="succeeded"[^}]*\} [1-9]\d*$/m);
    expect(text).toMatch(/^webhook_attempts_total\{[^}]*outcome="failed"[^}]*\} [1-9]\d*$/m);
    expect(text).toMatch(/^webhook_attempt_duration_seconds_count\{[^}]*\} [1-9]\d*$/m);
    expect(text).toMatch(/^webhook_outbox_oldest_seconds\{[^}]*\} [\d.e-]+$/m);
    expect(text).toMatch(/^queue_jobs\{[^}]*queue="webhook-deliveries"[^}]*state="delayed"[^}]*\} \d+$/m);
  });

  it('delivers each event once per webhook with two workers sharing the outbox', async () => {
    const second = await start('webhook-worker');
    const [a, b] = [await startReceiver(), await startReceiver()];
    const { c, hook } = await account();
    await hook(a.url, ['job.paused']);
    await hook(b.url, ['job.paused']);
    const job = (await c.post('/jobs', validJob())).body;
    for (let i = 0; i < 25; i++) {
      await c.post(`/jobs/${job.job_id}/pause`);
      await c.post(`/jobs/${job.job_id}/resume`);
    }
    await a.waitFor(25);
    await b.waitFor(25);
    await new Promise((res) => setTimeout(res, 300));
    for (const r of [a, b]) {
      expect(r.hits).toHaveLength(25);
      expect(new Set(r.bodies().map((e) => e.id)).size).toBe(25);
    }
    await second.kill('SIGTERM');
  });

  it('still delivers, once, when the worker is killed (SIGKILL) during a backoff and restarted', async () => {
    await worker.kill('SIGKILL');
    const env = { WEBHOOK_RETRY_DELAYS_MS: '1500,150,150,150,150' };
    const first = await start('webhook-worker', env);
    const r = await startReceiver((n) => ({ status: n === 1 ? 503 : 200 }));
    const { c, hook } = await account();
    const webhookId = await hook(r.url, ['job.paused']);
    await pausedJob(c);
    await r.waitFor(1);
    await until(async () => (await deliveriesOf(c, webhookId))[0]?.attempts === 1, 5_000, 20);
    expect(await first.kill('SIGKILL')).toBeNull();
    worker = await start('webhook-worker', env);
    await r.waitFor(2, 5_000);
    expect(r.hits[1]!.at - r.hits[0]!.at).toBeGreaterThanOrEqual(1_500 - 5);
    expect(r.hits[1]!.body).toBe(r.hits[0]!.body);
    expect(r.hits[1]!.headers['x-service-delivery-attempt']).toBe('2');
    const [delivery] = await until(async () => {
      const d = await deliveriesOf(c, webhookId);
      return d[0]?.status === 'succeeded' ? d : null;
    });
    expect(delivery!.attempts).toBe(2);
    await new Promise((res) => setTimeout(res, 500));
    expect(r.hits).toHaveLength(2);
  });

  it('finishes the attempt in flight on SIGTERM, then exits 0', async () => {
    const r = await startReceiver(() => ({ status: 200, delayMs: 300 }));
    const { c, hook } = await account();
    const webhookId = await hook(r.url, ['job.paused']);
    await pausedJob(c);
    await r.waitFor(1);
    expect(await worker.kill('SIGTERM')).toBe(0);
    expect(worker.logs.map((l) => l.msg)).toContain('stopped');
    expect((await deliveriesOf(c, webhookId))[0]).toEqual(
      expect.objectContaining({ status: 'succeeded', attempts: 1 }),
    );
  });
});
