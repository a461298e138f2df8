// The client against the real API process and workers (real PostgreSQL and Redis): every
// endpoint of docs/api.md parts one and two, each answer checked against its contract schema.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import {
  changeListSchema,
  deliveryListSchema,
  deliverySchema,
  documentListSchema,
  jobDetailSchema,
  jobListSchema,
  resultListSchema,
  runAcceptedSchema,
  runListSchema,
  runSchema,
  runUrlListSchema,
  webhookListSchema,
  webhookSchema,
} from '@scrapejobs/contracts';
import { freePort, until } from '../../../test/support/processes.ts';
import { startSite } from '../../../test/support/site.ts';
import {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  type CreateJobRequest,
  NotFoundError,
  PermissionError,
  ScrapeJobs,
  ValidationError,
  verifyWebhook,
  WebhookVerificationError,
} from './index.ts';
import { startReceiver } from './testing/receiver.ts';
import { type Stack, startStack } from './testing/stack.ts';

let stack: Stack;
let site: Awaited<ReturnType<typeof startSite>>;
let dir: string;
/** What `/news/a` says (`/news/b` never changes): page changes between runs. */
let news = 'Version 1';

beforeAll(async () => {
  [stack, site, dir] = await Promise.all([
    startStack({ workers: ['scraper-worker', 'webhook-worker'] }),
    startSite((req, res) => {
      const page = /^\/news\/([ab])$/.exec(req.url ?? '')?.[1];
      if (!page) return false;
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(
        `<!doctype html><html><head><title>News ${page}</title></head><body><main><h1>News ${page}</h1><p>${page === 'a' ? news : 'Always the same'}</p></main></body></html>`,
      );
      return true;
    }),
    mkdtemp(join(tmpdir(), 'scrapejobs-client-')),
  ]);
});

afterAll(async () => {
  await stack?.stop();
  await site?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A client of a new user, so that each test sees only its own jobs and webhooks. */
const newClient = async () => new ScrapeJobs({ apiKey: await stack.key(), baseUrl: stack.baseUrl });

const QUERIES = [
  { name: 'title', type: 'css', query: 'li.item a' },
  { name: 'price', type: 'css', query: 'li.item .price' },
] as const;

const jobBody = (over: Partial<CreateJobRequest> = {}): CreateJobRequest => ({
  name: 'Catalogue',
  source: `${site.url}/page/1`,
  queries: [...QUERIES],
  rate_limit: 6000,
  ...over,
});

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Runs a job and waits for the run's end. */
async function runToEnd(client: ScrapeJobs, jobId: string) {
  const accepted = await client.jobs.run(jobId);
  runAcceptedSchema.parse(accepted);
  return client.runs.wait(jobId, accepted.run_id, { intervalMs: 100, timeoutMs: 30_000 });
}

describe('jobs', () => {
  it('creates, reads, updates (PATCH and PUT), lists page by page, pauses, resumes and deletes', async () => {
    const client = await newClient();
    const created = [];
    for (const n of [1, 2, 3, 4, 5]) created.push(await client.jobs.create(jobBody({ name: `Job ${n}` })));
    const [first] = created;
    jobDetailSchema.parse(first);
    expect(first).toMatchObject({ name: 'Job 1', status: 'scheduled', rate_limit: 6000, last_run_id: null });
    expect(await client.jobs.get(first!.job_id)).toEqual(first);

    const page = await client.jobs.list({ limit: 2 });
    jobListSchema.parse(page);
    expect(page).toMatchObject({ count: 2, next_cursor: expect.any(String) });
    const all = await collect(client.jobs.iterate({ limit: 2 }));
    expect(all.map((j) => j.job_id)).toEqual(created.map((j) => j.job_id).reverse());

    const renamed = await client.jobs.update(first!.job_id, { name: 'Renamed' });
    expect(renamed).toMatchObject({ name: 'Renamed', source: first!.source, rate_limit: 6000 });
    const put = await client.jobs.update(first!.job_id, { rate_limit: 5 }, { method: 'PUT' });
    expect(put).toMatchObject({ name: 'Renamed', rate_limit: 5 });

    expect((await client.jobs.pause(first!.job_id)).status).toBe('paused');
    const paused = await collect(client.jobs.iterate({ status: 'paused' }));
    expect(paused.map((j) => j.job_id)).toEqual([first!.job_id]);
    const conflict = await client.jobs.run(first!.job_id).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(conflict).toMatchObject({ code: 'conflict', status: 409 });
    expect((await client.jobs.resume(first!.job_id)).status).toBe('scheduled');

    await client.jobs.delete(first!.job_id);
    await expect(client.jobs.get(first!.job_id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("throws typed errors that carry the contract's code, details, status and request id", async () => {
    const client = await newClient();
    const invalid = await client.jobs
      .create({ name: ' ', source: 'ftp://example.com', queries: [] })
      .catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(invalid).toMatchObject({
      name: 'ValidationError',
      code: 'validation_error',
      status: 400,
      retryable: false,
      details: { name: expect.any(String), source: expect.any(String), queries: expect.any(String) },
      requestId: expect.any(String),
    });

    const missing = await client.jobs.get('job_unknown').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ code: 'not_found', status: 404 });

    const stranger = new ScrapeJobs({ apiKey: `sk_test_${'x'.repeat(32)}`, baseUrl: stack.baseUrl });
    const unauthorized = await stranger.jobs.list().catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(AuthenticationError);
    expect(unauthorized).toMatchObject({ code: 'unauthorized', status: 401, body: { status: 401 } });

    const reader = new ScrapeJobs({ apiKey: await stack.key(['jobs:read']), baseUrl: stack.baseUrl });
    const forbidden = await reader.jobs.create(jobBody()).catch((e: unknown) => e);
    expect(forbidden).toBeInstanceOf(PermissionError);
    expect(forbidden).toMatchObject({ code: 'forbidden', status: 403 });

    const nowhere = new ScrapeJobs({ apiKey: 'sk_test_x', baseUrl: `http://127.0.0.1:${await freePort()}` });
    const refused = await nowhere.jobs.list().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConnectionError);
    expect(refused).toMatchObject({
      code: 'connection_error',
      message: expect.stringContaining('ECONNREFUSED'),
    });
  });
});

describe('a job that ran twice', () => {
  let client: ScrapeJobs;
  let jobId: string;
  let runs: Awaited<ReturnType<typeof runToEnd>>[];

  beforeAll(async () => {
    client = await newClient();
    jobId = (await client.jobs.create(jobBody({ source: `${site.url}/page/[1-5]` }))).job_id;
    runs = [await runToEnd(client, jobId), await runToEnd(client, jobId)];
  });

  it('has its runs listed page by page, newest first, and each run readable', async () => {
    for (const run of runs)
      expect(run).toMatchObject({ status: 'success', successful_urls: 5, failed_urls: 0, results_count: 15 });
    const page = await client.runs.list(jobId, { limit: 1 });
    runListSchema.parse(page);
    expect(page).toMatchObject({ job_id: jobId, count: 1, next_cursor: expect.any(String) });
    const all = await collect(client.runs.iterate(jobId, { limit: 1 }));
    expect(all.map((r) => r.run_id)).toEqual([runs[1]!.run_id, runs[0]!.run_id]);
    const one = await client.runs.get(jobId, runs[0]!.run_id);
    runSchema.parse(one);
    expect(one).toMatchObject({ run_id: runs[0]!.run_id, status: 'success', trigger: 'manual' });
  });

  it("has each run's URLs listed page by page in the order accepted, and by status", async () => {
    const runId = runs[1]!.run_id;
    const page = await client.runs.urls(jobId, runId, { limit: 2 });
    runUrlListSchema.parse(page);
    expect(page).toMatchObject({ job_id: jobId, run_id: runId, count: 2, next_cursor: expect.any(String) });
    const urls = await collect(client.runs.iterateUrls(jobId, runId, { limit: 2 }));
    expect(urls.map((u) => u.url)).toEqual([1, 2, 3, 4, 5].map((n) => `${site.url}/page/${n}`));
    expect(urls.every((u) => u.status === 'success' && u.http_status === 200 && u.records === 3)).toBe(true);
    expect(await collect(client.runs.iterateUrls(jobId, runId, { status: 'failed' }))).toEqual([]);
  });

  it("has a run's records listed page by page: the latest ended run by default, another by run_id", async () => {
    const page = await client.results.list(jobId, { limit: 4 });
    resultListSchema.parse(page);
    expect(page).toMatchObject({ job_id: jobId, run_id: runs[1]!.run_id, count: 4 });
    const latest = await collect(client.results.iterate(jobId, { limit: 4 }));
    expect(latest).toHaveLength(15);
    expect(new Set(latest.map((r) => r.result_id)).size).toBe(15);
    expect(latest[0]!.data).toEqual({ title: expect.stringMatching(/^Item \d$/), price: expect.any(String) });
    const older = await collect(client.results.iterate(jobId, { run_id: runs[0]!.run_id, limit: 7 }));
    expect(older).toHaveLength(15);
    expect(older.every((r) => r.run_id === runs[0]!.run_id)).toBe(true);
  });

  it('downloads to a file and to a stream exactly the bytes the API serves', async () => {
    const key = await stack.key();
    const owner = new ScrapeJobs({ apiKey: key, baseUrl: stack.baseUrl });
    const mine = (await owner.jobs.create(jobBody({ source: `${site.url}/page/[1-3]` }))).job_id;
    const run = await runToEnd(owner, mine);
    const direct = async (query: string) => {
      const res = await fetch(`${stack.baseUrl}/jobs/${mine}/download?${query}`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      return Buffer.from(await res.arrayBuffer());
    };

    const path = join(dir, 'out.csv');
    const seen: number[] = [];
    const done = await owner.results.download(mine, {
      format: 'csv',
      to: path,
      onProgress: (p) => seen.push(p.bytes),
    });
    const file = await readFile(path);
    expect(file.equals(await direct('format=csv'))).toBe(true);
    expect(file.toString('utf8').split('\r\n')[0]).toBe('url,scraped_at,title,price');
    expect(done).toEqual({
      bytes: file.length,
      contentType: 'text/csv; charset=utf-8',
      filename: `${mine}-${run.run_id}.csv`,
    });
    expect(seen.at(-1)).toBe(file.length);

    for (const format of ['json', 'sql'] as const) {
      const chunks: Buffer[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, cb) {
          chunks.push(chunk);
          cb();
        },
      });
      await owner.results.download(mine, { format, run_id: run.run_id, to: sink });
      expect(Buffer.concat(chunks).equals(await direct(`format=${format}&run_id=${run.run_id}`))).toBe(true);
    }
    const rows = JSON.parse((await direct('format=json')).toString('utf8')) as unknown[];
    expect(rows).toHaveLength(9);

    // xlsx carries the time it was zipped, so it is compared by what it is, not byte for byte.
    const opened = await owner.results.open(mine, { format: 'xlsx' });
    const xlsx = Buffer.concat(await opened.body.toArray());
    expect(opened.contentType).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(xlsx.subarray(0, 2).toString()).toBe('PK');

    // A download that fails leaves no file, not even a partial one.
    const failed = join(dir, 'never.csv');
    await expect(owner.results.download(mine, { run_id: 'run_unknown', to: failed })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(existsSync(failed)).toBe(false);
    expect((await readdir(dir)).filter((f) => f.endsWith('.part'))).toEqual([]);
  });
});

it("lists a tracked run's changes page by page, with its summary, and by type", async () => {
  const client = await newClient();
  const job = await client.jobs.create(
    jobBody({ source: `${site.url}/page/[1-2]`, change_tracking: { key: ['url', 'title'] } }),
  );
  const run = await runToEnd(client, job.job_id);
  // The comparison follows the run's end.
  await until(async () => (await client.runs.get(job.job_id, run.run_id)).changes, 15_000);

  const page = await client.runs.changes(job.job_id, run.run_id, { limit: 4 });
  changeListSchema.parse(page);
  expect(page).toMatchObject({
    run_id: run.run_id,
    base_run_id: null,
    summary: { added: 6, removed: 0, changed: 0, unchanged: 0, duplicate_keys: 0 },
    count: 4,
    next_cursor: expect.any(String),
  });
  const all = await collect(client.runs.iterateChanges(job.job_id, run.run_id, { limit: 4 }));
  expect(all).toHaveLength(6);
  expect(
    all.every((c) => !('kind' in c) && c.type === 'added' && c.previous === null && c.data !== null),
  ).toBe(true);
  expect(await collect(client.runs.iterateChanges(job.job_id, run.run_id, { type: 'removed' }))).toEqual([]);
});

describe("a run's documents", () => {
  let client: ScrapeJobs;
  let jobId: string;
  let runId: string;
  let pages: string[];

  beforeAll(async () => {
    pages = [1, 2, 3].map((n) => `${site.url}/page/${n}`);
    client = await newClient();
    const job = await client.jobs.create(
      jobBody({
        source: `${site.url}/page/[1-3]`,
        queries: [],
        formats: ['markdown', 'links', 'metadata'],
        // The whole body: a page that is one list of links has no main content to keep.
        content: { only_main_content: false },
      }),
    );
    expect(job).toMatchObject({
      queries: [],
      formats: ['markdown', 'links', 'metadata'],
      content: { only_main_content: false, include_tags: [], exclude_tags: [] },
    });
    jobId = job.job_id;
    runId = (await runToEnd(client, jobId)).run_id;
  });

  it('are listed page by page in the run’s URL order, with the formats the job asked for', async () => {
    const page = await client.runs.documents(jobId, runId, { limit: 2 });
    documentListSchema.parse(page);
    expect(page).toMatchObject({ job_id: jobId, run_id: runId, count: 2, next_cursor: expect.any(String) });
    const all = await collect(client.runs.iterateDocuments(jobId, runId, { limit: 2 }));
    expect(all.map((d) => d.url)).toEqual(pages);
    expect(all[0]).toEqual({
      url: pages[0],
      status_code: 200,
      markdown: expect.stringContaining('Item 0'),
      links: expect.arrayContaining([`${site.url}/item/0`, `${site.url}/item/2`]),
      metadata: expect.objectContaining({ title: 'Page 1', url: pages[0], status_code: 200 }),
      truncated: [],
    });
  });

  it('are filtered by url', async () => {
    const one = await client.runs.documents(jobId, runId, { url: pages[1] });
    expect(one).toMatchObject({ count: 1, next_cursor: null });
    expect(one.documents[0]!.metadata!.title).toBe('Page 2');
    expect(await collect(client.runs.iterateDocuments(jobId, runId, { url: `${site.url}/nowhere` }))).toEqual(
      [],
    );
  });

  it('are downloaded as JSON Lines and as JSON, the same documents the list shows; never as CSV', async () => {
    const listed = await collect(client.runs.iterateDocuments(jobId, runId));
    const opened = await client.results.open(jobId, { content: 'documents', format: 'jsonl' });
    expect(opened.filename).toBe(`${jobId}-${runId}-documents.jsonl`);
    const lines = Buffer.concat(await opened.body.toArray())
      .toString('utf8')
      .trimEnd()
      .split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual(listed);
    const path = join(dir, 'documents.json');
    await client.results.download(jobId, { content: 'documents', run_id: runId, to: path });
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(listed);

    const refused = await client.results
      .open(jobId, { content: 'documents', format: 'csv' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect(refused).toMatchObject({ details: { format: expect.any(String) } });
  });

  it("are kept apart from a run's records, which download as JSON Lines too", async () => {
    const records = await client.jobs.create(jobBody({ source: `${site.url}/page/1` }));
    await runToEnd(client, records.job_id);
    const opened = await client.results.open(records.job_id, { format: 'jsonl' });
    const rows = Buffer.concat(await opened.body.toArray())
      .toString('utf8')
      .trimEnd()
      .split('\n');
    expect(rows.map((l) => JSON.parse(l) as { title: string })).toEqual([
      expect.objectContaining({ url: `${site.url}/page/1`, title: 'Item 0' }),
      expect.objectContaining({ title: 'Item 1' }),
      expect.objectContaining({ title: 'Item 2' }),
    ]);
  });
});

it("lists the pages whose markdown changed between runs, with their diffs and counts, beside the records' changes", async () => {
  const client = await newClient();
  const job = await client.jobs.create(
    jobBody({
      source: `${site.url}/news/{a,b}`,
      queries: [],
      formats: ['markdown'],
      change_tracking: { key: [], content: true },
    }),
  );
  expect(job.change_tracking).toEqual({ key: [], content: true });
  const compared = async () => {
    const run = await runToEnd(client, job.job_id);
    await until(async () => (await client.runs.get(job.job_id, run.run_id)).changes, 15_000);
    return run.run_id;
  };
  news = 'Version 1';
  const first = await compared();
  const added = await collect(client.runs.iterateChanges(job.job_id, first));
  expect(added).toEqual([
    { kind: 'page', type: 'added', url: `${site.url}/news/a`, diff: expect.stringContaining('+Version 1') },
    { kind: 'page', type: 'added', url: `${site.url}/news/b`, diff: expect.any(String) },
  ]);

  news = 'Version 2';
  const second = await compared();
  const page = await client.runs.changes(job.job_id, second);
  changeListSchema.parse(page);
  expect(page.summary).toEqual({
    added: 0,
    removed: 0,
    changed: 0,
    unchanged: 0,
    duplicate_keys: 0,
    pages: { added: 0, removed: 0, changed: 1, unchanged: 1 },
  });
  expect(page.changes).toEqual([
    {
      kind: 'page',
      type: 'changed',
      url: `${site.url}/news/a`,
      diff: expect.stringMatching(/^-Version 1$[\s\S]*^\+Version 2$/m),
    },
  ]);
});

it("fetches a rendered URL's screenshot by index and by its screenshot_url", async () => {
  const client = await newClient();
  const job = await client.jobs.create(jobBody({ render_config: { enabled: true, screenshot: true } }));
  const run = await runToEnd(client, job.job_id);
  expect(run.status).toBe('success');
  const [item] = (await client.runs.urls(job.job_id, run.run_id)).urls;
  expect([item!.rendered, item!.render_reason]).toEqual([true, 'always']);
  const png = await client.runs.screenshotAt(item!.screenshot_url!);
  expect(png.subarray(0, 8)).toEqual(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
  expect((await client.runs.screenshot(job.job_id, run.run_id, 0)).equals(png)).toBe(true);
  await expect(client.runs.screenshot(job.job_id, run.run_id, 1)).rejects.toBeInstanceOf(NotFoundError);
});

it('creates a job that renders only the pages that need it, and reads why a page was not rendered', async () => {
  const client = await newClient();
  const job = await client.jobs.create(jobBody({ render_config: { enabled: true, mode: 'auto' } }));
  expect(job.render_config).toMatchObject({ enabled: true, mode: 'auto', block_resources: null });
  const run = await runToEnd(client, job.job_id);
  expect(run.status).toBe('success');
  const [item] = (await client.runs.urls(job.job_id, run.run_id)).urls;
  expect([item!.rendered, item!.render_reason]).toEqual([false, 'static']);
});

describe('webhooks', () => {
  const SECRET = 'client-test-secret-0123456789';

  it('are created, read, listed page by page and deleted', async () => {
    const client = await newClient();
    const receiver = await startReceiver();
    try {
      const created = [];
      for (const n of [1, 2, 3])
        created.push(
          await client.webhooks.create({
            url: receiver.url,
            events: ['job.completed', 'job.failed'],
            secret: SECRET,
            description: `hook ${n}`,
          }),
        );
      webhookSchema.parse(created[0]);
      expect(created[0]).toMatchObject({ url: receiver.url, active: true, description: 'hook 1' });
      expect(created[0]).not.toHaveProperty('secret');
      expect(await client.webhooks.get(created[0]!.webhook_id)).toEqual(created[0]);
      const page = await client.webhooks.list({ limit: 2 });
      webhookListSchema.parse(page);
      expect(page).toMatchObject({ count: 2, next_cursor: expect.any(String) });
      const all = await collect(client.webhooks.iterate({ limit: 2 }));
      expect(all.map((w) => w.webhook_id)).toEqual(created.map((w) => w.webhook_id).reverse());
      await client.webhooks.delete(created[0]!.webhook_id);
      await expect(client.webhooks.get(created[0]!.webhook_id)).rejects.toBeInstanceOf(NotFoundError);
    } finally {
      await receiver.close();
    }
  });

  it('send a test event whose real delivery verifyWebhook accepts with either scheme, and only unaltered', async () => {
    const client = await newClient();
    const receiver = await startReceiver();
    try {
      const hook = await client.webhooks.create({
        url: receiver.url,
        events: ['job.completed'],
        secret: SECRET,
      });
      const queued = await client.webhooks.test(hook.webhook_id);
      deliverySchema.parse(queued);
      expect(queued).toMatchObject({ webhook_id: hook.webhook_id, event: 'webhook.test', status: 'pending' });
      await receiver.waitFor(1);
      const { raw, headers } = receiver.hits[0]!;

      const event = verifyWebhook(raw, headers, SECRET);
      expect(event).toEqual({
        id: queued.event_id,
        event: 'webhook.test',
        timestamp: expect.any(String),
        data: { webhook_id: hook.webhook_id, message: expect.any(String) },
      });
      expect(verifyWebhook(raw.toString('utf8'), headers, SECRET, { scheme: 'service' })).toEqual(event);
      expect(
        verifyWebhook(raw, new Headers(headers as Record<string, string>), SECRET, { scheme: 'any' }),
      ).toEqual(event);

      const refused = (fn: () => unknown) => {
        try {
          fn();
        } catch (err) {
          expect(err).toBeInstanceOf(WebhookVerificationError);
          return (err as WebhookVerificationError).code;
        }
        throw new Error('accepted');
      };
      const altered = Buffer.from(raw.toString('utf8').replace('webhook.test', 'webhook.tesT'));
      expect(refused(() => verifyWebhook(altered, headers, SECRET))).toBe('invalid_signature');
      expect(refused(() => verifyWebhook(altered, headers, SECRET, { scheme: 'service' }))).toBe(
        'invalid_signature',
      );
      expect(refused(() => verifyWebhook(raw, headers, `${SECRET}x`))).toBe('invalid_signature');
      // The same bytes replayed ten minutes later.
      const later = new Date(Date.now() + 10 * 60_000);
      expect(refused(() => verifyWebhook(raw, headers, SECRET, { now: later }))).toBe(
        'timestamp_out_of_tolerance',
      );
    } finally {
      await receiver.close();
    }
  });

  it("list a webhook's deliveries page by page, and resend a failed one", async () => {
    const client = await newClient();
    const receiver = await startReceiver();
    try {
      const hook = await client.webhooks.create({
        url: receiver.url,
        events: ['job.failed'],
        secret: SECRET,
      });
      receiver.answer(500);
      const failing = await client.webhooks.test(hook.webhook_id);
      const failed = await until(async () => {
        const [latest] = (await client.webhooks.deliveries(hook.webhook_id, { status: 'failed' })).deliveries;
        return latest;
      }, 20_000);
      // A test event is tried once (an event of a job would be retried first).
      expect(failed).toMatchObject({ delivery_id: failing.delivery_id, status: 'failed' });
      expect(failed.attempt_log[0]).toMatchObject({ attempt: failed.attempts, status_code: 500 });

      receiver.answer(200);
      const again = await client.webhooks.resend(hook.webhook_id, failing.delivery_id);
      deliverySchema.parse(again);
      expect(again).toMatchObject({ delivery_id: failing.delivery_id, status: 'pending' });
      await until(
        async () => (await client.webhooks.deliveries(hook.webhook_id, { status: 'succeeded' })).count === 1,
      );
      const conflict = await client.webhooks
        .resend(hook.webhook_id, failing.delivery_id)
        .catch((e: unknown) => e);
      expect(conflict).toBeInstanceOf(ConflictError);

      await client.webhooks.test(hook.webhook_id);
      await client.webhooks.test(hook.webhook_id);
      const page = await client.webhooks.deliveries(hook.webhook_id, { limit: 2 });
      deliveryListSchema.parse(page);
      expect(page).toMatchObject({ webhook_id: hook.webhook_id, count: 2, next_cursor: expect.any(String) });
      const all = await collect(client.webhooks.iterateDeliveries(hook.webhook_id, { limit: 2 }));
      expect(all).toHaveLength(3);
      expect(all.at(-1)!.delivery_id).toBe(failing.delivery_id);
    } finally {
      await receiver.close();
    }
  });
});
