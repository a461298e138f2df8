import type { JobModel } from '@scrapejobs/db';
import { buildTestApi } from '../support/api.ts';
import { client, validJob } from '../support/client.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type Proc, scraperWorkerEnv, startApp, until } from '../support/processes.ts';
import { recordCount, storedRecords } from '../support/records.ts';
import { testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let site: Awaited<ReturnType<typeof startSite>>;
let c: ReturnType<typeof client>;
const prefix = testPrefix();
const workers: Proc[] = [];

const workerEnv = (over: Record<string, string> = {}) =>
  scraperWorkerEnv(tdb.url, prefix.prefix, { RUN_LOCK_MS: '2000', ...over });

async function startWorker(over: Record<string, string> = {}) {
  const w = startApp('scraper-worker', workerEnv(over));
  workers.push(w);
  await w.waitForLog((l) => l.msg === 'scraper worker started');
  return w;
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
  site = await startSite();
  c = client(
    api.app,
    (
      await api.keys.create({
        email: 'e2e@example.com',
        mode: 'test',
        scopes: ['jobs:read', 'jobs:write'],
        name: 'e',
      })
    ).token,
  );
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.kill('SIGKILL')));
});

afterAll(async () => {
  await api.close();
  await site.close();
  await tdb.drop();
  await prefix.cleanup();
});

const queries = [
  { name: 'title', type: 'css', query: 'h1' },
  { name: 'item', type: 'css', query: 'li.item a' },
  { name: 'price', type: 'xpath', query: "//span[@class='price']" },
];

async function runJob(body: Record<string, unknown>) {
  const job = (await c.post('/jobs', validJob({ queries, rate_limit: 6000, ...body }))).body;
  const run = await c.post(`/jobs/${job.job_id}/run`);
  expect(run.status).toBe(202);
  return { jobId: job.job_id as string, runId: run.body.run_id as string };
}

const finished = (jobId: string, timeoutMs = 20_000) =>
  until(async () => {
    const job = await tdb.db.job.findUnique({ where: { id: jobId } });
    return job && job.status !== 'running' ? job : null;
  }, timeoutMs) as Promise<JobModel>;

const eventsOf = (jobId: string) => tdb.db.event.findMany({ where: { jobId }, orderBy: { id: 'asc' } });

describe('scraper worker', () => {
  it('runs a glob job to success: records stored, counts, job.completed with the documented fields', async () => {
    await startWorker();
    const { jobId, runId } = await runJob({ source: `${site.url}/page/[1-3]` });
    const job = await finished(jobId);
    expect(job.status).toBe('success');
    expect(job.resultsCount).toBe(9);
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toEqual(
      expect.objectContaining({
        status: 'success',
        successfulUrls: 3,
        failedUrls: 0,
        totalUrls: 3,
        resultsCount: 9,
      }),
    );
    const results = await storedRecords(tdb.db, runId);
    expect(results[0]).toEqual(
      expect.objectContaining({
        url: `${site.url}/page/1`,
        data: { title: 'Page 1', item: 'Item 0', price: '0' },
      }),
    );
    expect(results.map((r) => r.url)).toEqual(
      [1, 1, 1, 2, 2, 2, 3, 3, 3].map((n) => `${site.url}/page/${n}`),
    );
    const events = await eventsOf(jobId);
    expect(events.map((e) => e.kind)).toEqual(['job.started', 'job.completed']);
    expect(events[1]!.data).toEqual({
      skipped_urls: 0,
      job_id: jobId,
      job_name: 'Example',
      run_id: runId,
      status: 'success',
      results_count: 9,
      duration_ms: run.durationMs,
      download_url: `https://scrape.example.com/jobs/${jobId}/download`,
    });
    const runs = (await c.get(`/jobs/${jobId}/runs`)).body.runs;
    expect(runs[0]).toEqual(
      expect.objectContaining({
        status: 'success',
        results_count: 9,
        successful_urls: 3,
        failed_urls: 0,
        error: null,
      }),
    );
  });

  it('exposes pages by outcome and run durations on its ops port after a run', async () => {
    const w = await startWorker();
    const port = w.logs.find((l) => l.msg === 'scraper worker started')!.metrics_port as number;
    const { jobId } = await runJob({ source: `${site.url}/{page/1,status/404}` });
    await finished(jobId);
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/scraper_pages_total\{[^}]*outcome="success"[^}]*\} 1$/m);
    expect(text).toMatch(/scraper_pages_total\{[^}]*outcome="HTTP_ERROR"[^}]*\} 1$/m);
    expect(text).toMatch(/scraper_run_duration_seconds_count\{[^}]*status="failed"[^}]*\} 1$/m);
    expect(text).toMatch(/scraper_browser_pages\{[^}]*kind="capacity"[^}]*\} 0$/m);
    expect(await (await fetch(`http://127.0.0.1:${port}/ready`)).json()).toEqual({
      status: 'ready',
      checks: { postgres: 'ok', redis: 'ok' },
    });
  });

  it('renders script-made content in Chromium when render_config is enabled', async () => {
    const scripted = await startSite((req, res) => {
      if (!req.url?.startsWith('/app')) return false;
      res.setHeader('Content-Type', 'text/html');
      res.end(`<html><body><h1>Shell</h1><ul id="list"></ul><script>
        setTimeout(() => { for (const n of ['alpha', 'beta']) { const li = document.createElement('li');
          li.className = 'item'; li.innerHTML = '<a>' + n + '</a>'; document.getElementById('list').append(li); } }, 50);
      </script></body></html>`);
      return true;
    });
    try {
      await startWorker();
      const plain = await runJob({ source: `${scripted.url}/app` });
      const rendered = await runJob({
        source: `${scripted.url}/app`,
        render_config: { enabled: true, wait_strategy: 'networkidle0', wait_timeout_ms: 10_000 },
      });
      expect((await finished(plain.jobId)).resultsCount).toBe(1);
      expect((await finished(rendered.jobId, 40_000)).status).toBe('success');
      const rows = await storedRecords(tdb.db, rendered.runId);
      expect(rows.map((r) => (r.data as { item: string }).item)).toEqual(['alpha', 'beta']);
    } finally {
      await scripted.close();
    }
  });

  it('fails a run with a failing URL but keeps the other records (partial failure, 404)', async () => {
    await startWorker();
    const { jobId, runId } = await runJob({ source: `${site.url}/{page/1,status/404,page/2}` });
    const job = await finished(jobId);
    expect(job.status).toBe('failed');
    expect(job.resultsCount).toBe(6);
    const event = (await eventsOf(jobId)).at(-1)!;
    expect(event.kind).toBe('job.failed');
    expect(event.data).toEqual({
      skipped_urls: 0,
      job_id: jobId,
      job_name: 'Example',
      run_id: runId,
      status: 'failed',
      error: {
        code: 'HTTP_ERROR',
        message: expect.stringMatching(/404/),
        failed_urls: 1,
        successful_urls: 2,
      },
    });
  });

  it('refuses loopback targets unless private targets are allowed (BLOCKED_TARGET), including via a redirect', async () => {
    await startWorker({ ALLOW_PRIVATE_NETWORK_TARGETS: 'false' });
    const before = site.hits.length;
    const { jobId } = await runJob({ source: `${site.url}/page/1` });
    const job = await finished(jobId);
    expect(job.status).toBe('failed');
    expect(((await eventsOf(jobId)).at(-1)!.data as { error: { code: string } }).error.code).toBe(
      'BLOCKED_TARGET',
    );
    const viaName = await runJob({ source: `http://localhost:${site.port}/page/1` });
    expect((await finished(viaName.jobId)).status).toBe('failed');
    // A crawl that respects robots.txt meets the refusal at robots.txt first: the same code, not a robots skip.
    const crawl = { follow: [{ type: 'css', query: 'a' }], respect_robots_txt: true };
    const polite = await runJob({ source: `${site.url}/page/1`, crawl });
    expect((await finished(polite.jobId)).status).toBe('failed');
    const urls = (await c.get(`/jobs/${polite.jobId}/runs/${polite.runId}/urls`)).body.urls;
    expect(urls).toEqual([
      expect.objectContaining({
        url: `${site.url}/page/1`,
        status: 'failed',
        error: {
          code: 'BLOCKED_TARGET',
          message: expect.stringMatching(/^127\.0\.0\.1 is a private address/),
        },
      }),
    ]);
    expect(site.hits.length).toBe(before);
  });

  it('fails a page over the 10 MiB cap, and a run over its time limit with TIMEOUT', async () => {
    await startWorker({ RUN_TIMEOUT_MS: '1500' });
    const big = await runJob({ source: `${site.url}/big` });
    expect((await finished(big.jobId)).status).toBe('failed');
    const slow = await runJob({ source: `${site.url}/slow/1?ms=5000` });
    const job = await finished(slow.jobId);
    expect(job.status).toBe('failed');
    const error = (
      (await eventsOf(slow.jobId)).at(-1)!.data as { error: { code: string; failed_urls: number } }
    ).error;
    expect(error).toEqual(expect.objectContaining({ code: 'TIMEOUT', failed_urls: 1 }));
  });

  it('stops a run within 1 s of a pause, keeps its results, and sends no further requests', async () => {
    await startWorker();
    const { jobId, runId } = await runJob({ source: `${site.url}/slow/[1-40]?ms=200`, rate_limit: 600 });
    await until(async () => (await recordCount(tdb.db, runId)) >= 2 || null, 10_000);
    expect((await c.post(`/jobs/${jobId}/pause`)).status).toBe(200);
    const pausedAt = Date.now();
    await new Promise((r) => setTimeout(r, 1_500));
    const late = site.hits.filter((h) => h.path.startsWith('/slow/') && h.at > pausedAt + 1_000);
    expect(late).toEqual([]);
    const run = await tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe('cancelled');
    const kept = await recordCount(tdb.db, runId);
    expect(kept).toBeGreaterThanOrEqual(2);
    expect(run.resultsCount).toBe(kept);
    expect((await tdb.db.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('paused');
    expect((await eventsOf(jobId)).map((e) => e.kind)).toEqual(['job.started', 'job.paused']);
  });

  it('finishes a run exactly once after its worker is killed mid-run (SIGKILL), fetching no stored page again', async () => {
    const first = await startWorker();
    const { jobId, runId } = await runJob({ source: `${site.url}/slow/[1-12]?ms=150`, rate_limit: 600 });
    const runRow = () => tdb.db.run.findUniqueOrThrow({ where: { id: runId } });
    const doneSeqs = async () =>
      (await tdb.db.runUrl.findMany({ where: { runId, status: { in: ['success', 'failed'] } } })).map(
        (u) => u.seq,
      );
    await until(async () => (await doneSeqs()).length >= 4 || null, 10_000);
    await first.kill('SIGKILL');
    const killedAt = Date.now();
    const doneBefore = await doneSeqs();
    const second = await startWorker();
    const job = await finished(jobId, 30_000);
    expect(job.status).toBe('success');
    const results = await storedRecords(tdb.db, runId);
    expect(results).toHaveLength(24);
    expect(new Set(results.map((r) => `${r.urlIndex}:${r.rowIndex}`)).size).toBe(24);
    expect((await eventsOf(jobId)).map((e) => e.kind)).toEqual(['job.started', 'job.completed']);
    // The URLs in flight on the killed worker were taken over after their lease ran out.
    expect(second.logs.some((l) => l.msg === 'taking over a URL whose worker stopped')).toBe(true);
    const again = new Set(doneBefore.map((i) => `/slow/${i + 1}`));
    expect(site.hits.filter((h) => h.at > killedAt && again.has(h.path))).toEqual([]);
    const run = await runRow();
    expect(run).toEqual(expect.objectContaining({ successfulUrls: 12, failedUrls: 0, resultsCount: 24 }));
    expect(await tdb.db.runUrl.count({ where: { runId, status: 'success' } })).toBe(12);
  });

  it('keeps one budget per job across three workers, even while a held-up worker and its successor both run it', async () => {
    const held = await startWorker({ LOG_LEVEL: 'debug' });
    const since = Date.now();
    // 240 a minute: one start every 250 ms across the fleet; a page answers in 1.5 s, so a worker
    // that claimed URLs holds them while they wait for their turn and while they load.
    const { jobId, runId } = await runJob({ source: `${site.url}/slow/[1-24]?ms=1500`, rate_limit: 240 });
    const starts = () =>
      site.hits.filter((h) => h.path.startsWith('/slow/') && h.at >= since).map((h) => h.at);
    await held.waitForLog((l) => l.msg === 'claimed URLs' && l.run_id === runId);
    // Held up past RUN_LOCK_MS with URLs in hand: the two workers started now take them over,
    // then the first one wakes up with the same URLs in hand.
    held.child.kill('SIGSTOP');
    const others = [await startWorker(), await startWorker()];
    await until(
      async () => others.find((w) => w.logs.some((l) => l.msg === 'taking over a URL whose worker stopped')),
      20_000,
    );
    const before = starts().length;
    await until(async () => starts().length >= before + 2 || null);
    held.child.kill('SIGCONT');
    await held.waitForLog((l) => String(l.msg).startsWith('lost the lease of URLs'));

    const job = await finished(jobId, 30_000);
    expect(job.status).toBe('success');
    const results = await storedRecords(tdb.db, runId);
    expect(results).toHaveLength(48);
    expect(new Set(results.map((r) => `${r.urlIndex}:${r.rowIndex}`)).size).toBe(48);
    expect((await eventsOf(jobId)).map((e) => e.kind)).toEqual(['job.started', 'job.completed']);
    // Never a burst: any one-second window holds four starts (one more for a timer that fires
    // late on a loaded machine), the held-up worker's included.
    const all = starts().sort((a, b) => a - b);
    const perWindow = all.map((t) => all.filter((u) => u >= t && u < t + 1_000).length);
    expect(Math.max(...perWindow)).toBeLessThanOrEqual(5);
  });

  it('gives its URLs back on SIGTERM and another worker completes the run with no duplicate', async () => {
    // Both workers are up before the run, so that the first is stopped a few pages in: the job's
    // rate limit keeps the run going for at least 5 s after that, however slow a worker's start.
    const [first, second] = await Promise.all([startWorker(), startWorker()]);
    const { jobId, runId } = await runJob({ source: `${site.url}/slow/[1-30]?ms=150`, rate_limit: 300 });
    await until(async () => (await recordCount(tdb.db, runId)) >= 4 || null, 10_000);
    expect(await recordCount(tdb.db, runId)).toBeLessThan(60);
    expect(await first.kill('SIGTERM')).toBe(0);
    expect(first.logs.some((l) => l.msg === 'run finished')).toBe(false);
    const job = await finished(jobId, 30_000);
    expect(job.status).toBe('success');
    expect(await recordCount(tdb.db, runId)).toBe(60);
    expect(second.logs.some((l) => l.msg === 'run finished' && l.run_id === runId)).toBe(true);
  });

  it('applies an update of a job from its next run, even while its run waits between requests', async () => {
    await startWorker();
    // 30 a minute: the run's URLs wait in the frontier between its requests.
    const { jobId, runId } = await runJob({ source: `${site.url}/page/{21,22,23}`, rate_limit: 30 });
    await until(async () => (await tdb.db.runUrl.count({ where: { runId, status: 'success' } })) >= 1);
    const updated = await c.patch(`/jobs/${jobId}`, {
      source: `${site.url}/page/{31,32}`,
      queries: [{ name: 'first_item', type: 'css', query: 'li.item a' }],
    });
    expect(updated.status).toBe(200);
    expect((await finished(jobId, 30_000)).status).toBe('success');
    const rows = await storedRecords(tdb.db, runId);
    expect(rows.map((r) => r.url)).toEqual(
      [21, 22, 23].flatMap((n) => Array(3).fill(`${site.url}/page/${n}`)),
    );
    expect(
      new Set(
        rows.map((r) =>
          Object.keys(r.data as object)
            .sort()
            .join(),
        ),
      ),
    ).toEqual(new Set(['item,price,title']));
    expect(site.hits.filter((h) => h.path === '/page/31' || h.path === '/page/32')).toEqual([]);

    const next = await c.post(`/jobs/${jobId}/run`);
    await until(
      async () =>
        (await tdb.db.run.findUniqueOrThrow({ where: { id: next.body.run_id } })).status !== 'running',
      30_000,
    );
    const nextRows = await storedRecords(tdb.db, next.body.run_id);
    expect(nextRows.map((r) => r.data)).toEqual([
      { first_item: 'Item 0' },
      { first_item: 'Item 1' },
      { first_item: 'Item 2' },
      { first_item: 'Item 0' },
      { first_item: 'Item 1' },
      { first_item: 'Item 2' },
    ]);
  });
});
