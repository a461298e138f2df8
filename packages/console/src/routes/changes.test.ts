import { createJobSchema, type RunHealth } from '@scrapejobs/contracts';
import { newId } from '@scrapejobs/db';
import request from 'supertest';
import { type ConsoleFixture, consoleFixture } from '../testing.ts';

// Change tracking and extraction health in the console (docs/api.md §13): the job form's
// section, the job page's health history and the run page's changes, over the real domain
// services and database. Runs, their analysis and their changes are written directly: the
// workers that produce them are not part of these tests.

let f: ConsoleFixture;

beforeAll(async () => {
  f = await consoleFixture('tracker@example.com');
});

afterAll(async () => {
  await f.close();
});

const get = (path: string) => request(f.app).get(`/console${path}`).set('Cookie', f.session.cookie);

const createJob = (changeTracking: { key: string[]; content?: boolean } | null) =>
  f.jobs.create(
    f.owner,
    createJobSchema.parse({
      name: 'Prices',
      source: 'https://shop.example/',
      queries: [
        { name: 'title', type: 'css', query: 'h1' },
        { name: 'price', type: 'css', query: '.price' },
      ],
      change_tracking: changeTracking,
    }),
  );

let clock = Date.UTC(2026, 10, 1, 8);

/** An ended run of the job, newer than every run added before it. */
async function addRun(
  jobId: string,
  over: {
    status?: 'running' | 'success' | 'failed' | 'cancelled';
    resultsCount?: number;
    health?: RunHealth;
    changes?: Record<string, number | Record<string, number>>;
    baseRunId?: string;
  } = {},
) {
  clock += 3_600_000;
  const run = await f.tdb.db.run.create({
    data: {
      id: newId('run', clock),
      jobId,
      trigger: 'schedule',
      status: 'success',
      startedAt: new Date(clock),
      finishedAt: over.status === 'running' ? null : new Date(clock + 60_000),
      ...over,
    },
  });
  return run.id;
}

describe('the job form’s change tracking', () => {
  const form = (over: Record<string, string> = {}) => ({
    _csrf: f.session.csrf,
    name: 'Tracked',
    source: 'https://shop.example/',
    q_rows: '2',
    q_name_0: 'title',
    q_type_0: 'css',
    q_query_0: 'h1',
    q_name_1: 'price',
    q_type_1: 'css',
    q_query_1: '.price',
    change_tracking: '1',
    change_tracking_key: 'url, title',
    ...over,
  });
  const post = (body: Record<string, string>) =>
    request(f.app).post('/console/jobs').set('Cookie', f.session.cookie).type('form').send(body);
  const keyInput = /<input id="tracking-key" name="change_tracking_key"[^>]*>(<p class="error"[^<]*<\/p>)?/;

  it('shows the change tracking section on the new job form, off and with no key names', async () => {
    const res = await get('/jobs/new');
    expect(res.text).toContain('<legend>Change tracking</legend>');
    expect(res.text).toMatch(/name="change_tracking" value="1">/);
    expect(keyInput.exec(res.text)?.[0]).toContain('value=""');
  });

  it('creates a job that tracks changes by the key names typed, shown on its page', async () => {
    const res = await post(form({ change_tracking_key: ' url, ,title ' }));
    expect(res.status).toBe(303);
    const id = /\/console\/jobs\/(job_\w+)$/.exec(res.headers.location!)![1]!;
    expect((await f.jobs.get(f.owner, id)).changeTracking).toEqual({ key: ['url', 'title'] });
    const page = await get(`/jobs/${id}`);
    expect(page.text).toContain(
      '<dt>Change tracking</dt><dd>on: an item is identified by <span class="mono">url</span>, <span class="mono">title</span></dd>',
    );
  });

  it('tracks whole records with an empty key, and nothing when unticked', async () => {
    const whole = await post(form({ change_tracking_key: '' }));
    const wholeId = /(job_\w+)$/.exec(whole.headers.location!)![1]!;
    expect((await f.jobs.get(f.owner, wholeId)).changeTracking).toEqual({ key: [] });
    expect((await get(`/jobs/${wholeId}`)).text).toContain('on: an item is identified by its whole record');
    const off = await post(form({ change_tracking: '' }));
    const offId = /(job_\w+)$/.exec(off.headers.location!)![1]!;
    expect((await f.jobs.get(f.owner, offId)).changeTracking).toBeNull();
    expect((await get(`/jobs/${offId}`)).text).toContain('<dt>Change tracking</dt><dd>off</dd>');
  });

  it('shows a key name that is no query of the job at the field, keeping what was typed', async () => {
    const res = await post(form({ change_tracking_key: 'url, , <price>' }));
    expect(res.status).toBe(400);
    expect(res.text).toContain(
      '<code>key name 3</code>: &quot;&lt;price&gt;&quot; is neither url, a query name of the job, nor a top-level property of its extract.schema',
    );
    expect(keyInput.exec(res.text)?.[0]).toBe(
      '<input id="tracking-key" name="change_tracking_key" class="mono" value="url, , &lt;price&gt;" maxlength="400" aria-invalid="true" aria-describedby="err-change-tracking">' +
        '<p class="error" id="err-change-tracking">key name 3: &quot;&lt;price&gt;&quot; is neither url, a query name of the job, nor a top-level property of its extract.schema</p>',
    );
    expect(res.text).toMatch(/name="change_tracking" value="1" checked>/);
  });

  it('shows the API’s key errors at the field', async () => {
    f.parseDetails = { 'change_tracking.key': 'must have at most 5 items' };
    try {
      const res = await post(form({ change_tracking_key: 'a,b,c,d,e,f' }));
      expect(res.status).toBe(400);
      expect(keyInput.exec(res.text)?.[1]).toBe(
        '<p class="error" id="err-change-tracking">must have at most 5 items</p>',
      );
    } finally {
      f.parseDetails = null;
    }
  });

  it('keeps the change tracking fields when a query row is added', async () => {
    const res = await post(form({ add_row: '1', change_tracking_key: 'title' }));
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/name="change_tracking" value="1" checked>/);
    expect(keyInput.exec(res.text)?.[0]).toContain('value="title"');
  });
});

const degradedBy = (message: string): RunHealth => ({
  status: 'degraded',
  reasons: [{ code: 'RECORDS_DROP', query: null, message }],
});
const healthy: RunHealth = { status: 'ok', reasons: [] };

/** The chart's bars: class, height and tooltip, left to right. */
const bars = (text: string) =>
  [
    ...text.matchAll(/<rect class="bar bar-(\w+)"[^>]* height="([\d.]+)"><title>([^<]*)<\/title><\/rect>/g),
  ].map((m) => ({ state: m[1], height: Number(m[2]), title: m[3] }));

describe('the job page’s health history', () => {
  it('draws records per ended run, oldest first, with the degraded run marked and listed with its reasons', async () => {
    const job = await createJob(null);
    await addRun(job.id, { resultsCount: 120, health: healthy });
    const bad = await addRun(job.id, {
      status: 'failed',
      resultsCount: 30,
      health: degradedBy('30 records, under half the median <120>'),
    });
    await addRun(job.id, { status: 'cancelled', resultsCount: 5 });
    await addRun(job.id, { resultsCount: 0 });
    await addRun(job.id, { status: 'running', resultsCount: 7 });
    const res = await get(`/jobs/${job.id}`);
    expect(res.status).toBe(200);
    expect(res.text).toMatch(
      /<svg class="health-chart" [^>]*role="img" aria-labelledby="health-chart-title health-chart-desc">\n<title id="health-chart-title">Records per run of the last 3 ended runs<\/title>/,
    );
    expect(res.text).toContain(
      '<desc id="health-chart-desc">3 ended runs, oldest first: from 0 to 120 records per run; 1 degraded.</desc>',
    );
    expect(bars(res.text)).toEqual([
      { state: 'ok', height: 60, title: '2026-11-01 09:01 UTC: 120 records, success; healthy' },
      {
        state: 'degraded',
        height: 15,
        title:
          '2026-11-01 10:01 UTC: 30 records, failed; degraded: RECORDS_DROP: 30 records, under half the median &lt;120&gt;',
      },
      {
        state: 'unchecked',
        height: 1.5,
        title: '2026-11-01 12:01 UTC: 0 records, success; health not checked',
      },
    ]);
    const list =
      /<h3>Degraded runs<\/h3>\n<ul class="plain degraded-runs">([\s\S]*?)<\/ul>\n<\/section>/.exec(
        res.text,
      )?.[1];
    expect(list).toContain(`<a href="/console/jobs/${job.id}/runs/${bad}">`);
    expect(list).toContain('<code>RECORDS_DROP</code> 30 records, under half the median &lt;120&gt;');
    expect(res.text).toMatch(
      /badge-failed">failed<\/span> <span class="badge badge-degraded">degraded<\/span>/,
    );
  });

  it('shows at most the last 30 ended runs', async () => {
    const job = await createJob(null);
    for (let i = 1; i <= 33; i++) await addRun(job.id, { resultsCount: i });
    const res = await get(`/jobs/${job.id}`);
    const shown = bars(res.text);
    expect(shown).toHaveLength(30);
    expect(shown[0]!.title).toContain(': 4 records');
    expect(shown[29]!.title).toContain(': 33 records');
    expect(res.text).not.toContain('<h3>Degraded runs</h3>');
  });

  it('says so when the job has no ended run', async () => {
    const job = await createJob(null);
    await addRun(job.id, { status: 'running' });
    const res = await get(`/jobs/${job.id}`);
    expect(res.text).toMatch(
      /<h2 id="health-title">Health history<\/h2>\n<p class="empty">No ended run yet.<\/p>/,
    );
    expect(res.text).not.toContain('<svg');
  });
});

/** The rows of the changes table: type, key and record, tags left out. */
function changeRows(text: string): string[][] {
  const body = /<table class="cards changes">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(text)?.[1] ?? '';
  return [...body.matchAll(/<tr class="change-\w+(?: change-page)?">([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) =>
      cell[1]!
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    ),
  );
}

/** A job tracking changes by title, its base run and a compared run with one item of each kind. */
async function comparedRun() {
  const job = await createJob({ key: ['title'] });
  const baseId = await addRun(job.id, { resultsCount: 3, health: healthy });
  const runId = await addRun(job.id, {
    resultsCount: 3,
    baseRunId: baseId,
    changes: { added: 1, removed: 1, changed: 1, unchanged: 1, duplicate_keys: 2 },
    health: {
      status: 'degraded',
      reasons: [{ code: 'EMPTY_QUERY', query: 'price', message: 'price matched nothing on any page' }],
    },
  });
  const url = 'https://shop.example/';
  await f.tdb.db.runChange.createMany({
    data: [
      {
        runId,
        seq: 0,
        type: 'changed',
        key: { title: 'Lamp' },
        data: { url, title: 'Lamp', price: '12 <EUR>' },
        previous: { url, title: 'Lamp', price: '10 <EUR>' },
        changedFields: ['price'],
        scrapedAt: new Date(),
      },
      {
        runId,
        seq: 1,
        type: 'added',
        key: { title: 'Desk' },
        data: { url, title: 'Desk', price: null },
        changedFields: [],
        scrapedAt: new Date(),
      },
      {
        runId,
        seq: 2,
        type: 'removed',
        key: { title: 'Chair' },
        previous: { url, title: 'Chair', price: '40' },
        changedFields: [],
        scrapedAt: new Date(),
      },
    ],
  });
  return { job, baseId, runId, path: `/jobs/${job.id}/runs/${runId}` };
}

describe('the run page’s changes', () => {
  it('shows the run’s health, its change summary against the base run and every change in order', async () => {
    const { job, baseId, path } = await comparedRun();
    const res = await get(path);
    expect(res.status).toBe(200);
    expect(res.text).toContain('<dt>Health</dt><dd><span class="badge badge-degraded">degraded</span></dd>');
    expect(res.text).toContain(
      '<li><code>EMPTY_QUERY</code> <span class="mono">price</span> price matched nothing on any page</li>',
    );
    expect(res.text).toContain(
      `Compared with <a href="/console/jobs/${job.id}/runs/${baseId}">run <span class="mono">${baseId}</span></a>.`,
    );
    const summary = /<dl class="facts change-summary">([\s\S]*?)<\/dl>/.exec(res.text)![1]!;
    expect([...summary.matchAll(/<dt>([^<]+)<\/dt><dd>(\d+)<\/dd>/g)].map((m) => `${m[1]} ${m[2]}`)).toEqual([
      'Added 1',
      'Removed 1',
      'Changed 1',
      'Unchanged 1',
      'Duplicate keys 2',
    ]);
    expect(changeRows(res.text)).toEqual([
      [
        'changed',
        'title Lamp',
        'url https://shop.example/ title Lamp price changed from 10 &lt;EUR&gt; → to 12 &lt;EUR&gt;',
      ],
      ['added', 'title Desk', 'url https://shop.example/ title Desk price null'],
      ['removed', 'title Chair', 'url https://shop.example/ title Chair price 40'],
    ]);
    expect(res.text).toContain(
      '<div class="changed"><dt>price</dt><dd><span class="visually-hidden">changed from </span><del><span class="wrap">10 &lt;EUR&gt;</span></del> <span aria-hidden="true">→</span><span class="visually-hidden"> to</span> <mark><span class="wrap">12 &lt;EUR&gt;</span></mark></dd></div>',
    );
    expect(res.text).toContain('<div><dt>title</dt><dd><span class="wrap">Lamp</span></dd></div>');
    expect(res.text.match(/<mark>/g)).toHaveLength(1);
    expect(res.text).toContain('<td data-label="Previous record">');
  });

  it.each([
    ['changed', ['changed']],
    ['added', ['added']],
    ['removed', ['removed']],
  ])(
    'filters the changes by type %s, marking the filter shown and keeping the URL filter',
    async (type, types) => {
      const { path } = await comparedRun();
      const res = await get(`${path}?status=failed&change=${type}`);
      expect(res.status).toBe(200);
      expect(changeRows(res.text).map((r) => r[0])).toEqual(types);
      expect(res.text).toContain(
        `href="/console${path}?status=failed&amp;change=${type}#changes" aria-current="true"`,
      );
      expect(res.text).toContain(`href="/console${path}?status=failed#changes" class="stat"`);
    },
  );

  it('pages the changes with a next link that keeps the type filter', async () => {
    const { runId, path } = await comparedRun();
    await f.tdb.db.runChange.createMany({
      data: Array.from({ length: 60 }, (_, i) => ({
        runId,
        seq: 3 + i,
        type: 'added' as const,
        key: { title: `Item ${i}` },
        data: { url: 'https://shop.example/', title: `Item ${i}`, price: '1' },
        changedFields: [],
        scrapedAt: new Date(),
      })),
    });
    const seen: string[] = [];
    let next: string | undefined = `${path}?change=added`;
    let pages = 0;
    while (next) {
      const res = await get(next);
      expect(res.status).toBe(200);
      seen.push(...changeRows(res.text).map((r) => r[1]!));
      next = /<a href="\/console([^"]+)#changes">Next changes →<\/a>/
        .exec(res.text)?.[1]
        ?.replaceAll('&amp;', '&');
      if (next) expect(next).toMatch(/\?change=added&change_cursor=/);
      pages++;
    }
    expect(pages).toBe(2);
    expect(seen).toEqual(['title Desk', ...Array.from({ length: 60 }, (_, i) => `title Item ${i}`)]);
  });

  it('shows the pages whose markdown changed beside the records, each diff as escaped text, and the pages’ counts', async () => {
    const job = await createJob({ key: ['title'], content: true });
    const baseId = await addRun(job.id);
    const runId = await addRun(job.id, {
      baseRunId: baseId,
      changes: {
        added: 1,
        removed: 0,
        changed: 0,
        unchanged: 0,
        duplicate_keys: 0,
        pages: { added: 0, removed: 1, changed: 1, unchanged: 3 },
      },
    });
    const diff =
      '--- https://shop.example/a\n+++ https://shop.example/a\n@@ -1 +1 @@\n-Old <b>text</b>\n+<script>alert(1)</script>';
    await f.tdb.db.runChange.createMany({
      data: [
        {
          runId,
          seq: 0,
          type: 'added',
          key: { title: 'Desk' },
          data: { url: 'https://shop.example/', title: 'Desk', price: '5' },
          changedFields: [],
          scrapedAt: new Date(),
        },
        {
          runId,
          seq: 1,
          kind: 'page',
          type: 'changed',
          key: { url: 'https://shop.example/a' },
          diff,
          changedFields: [],
          scrapedAt: new Date(),
        },
        {
          runId,
          seq: 2,
          kind: 'page',
          type: 'removed',
          key: { url: 'https://shop.example/<gone>' },
          diff: '-Gone',
          changedFields: [],
          scrapedAt: new Date(),
        },
      ],
    });
    const res = await get(`/jobs/${job.id}/runs/${runId}`);
    expect(res.status).toBe(200);
    expect(changeRows(res.text)).toEqual([
      ['added', 'title Desk', 'url https://shop.example/ title Desk price 5'],
      [
        'changed page',
        'https://shop.example/a',
        '--- https://shop.example/a +++ https://shop.example/a @@ -1 +1 @@ -Old &lt;b&gt;text&lt;/b&gt; +&lt;script&gt;alert(1)&lt;/script&gt;',
      ],
      ['removed page', 'https://shop.example/&lt;gone&gt;', '-Gone'],
    ]);
    expect(res.text).toContain(
      '<pre class="text diff">--- https://shop.example/a\n+++ https://shop.example/a\n@@ -1 +1 @@\n-Old &lt;b&gt;text&lt;/b&gt;\n+&lt;script&gt;alert(1)&lt;/script&gt;</pre>',
    );
    expect(res.text).not.toContain('<script>alert(1)');
    const pages = /<dl class="facts change-summary" aria-label="Pages">([\s\S]*?)<\/dl>/.exec(res.text)![1]!;
    expect([...pages.matchAll(/<dt>([^<]+)<\/dt><dd>(\d+)<\/dd>/g)].map((m) => `${m[1]} ${m[2]}`)).toEqual([
      'Pages added 0',
      'Pages removed 1',
      'Pages changed 1',
      'Pages unchanged 3',
    ]);
    const detail = await get(`/jobs/${job.id}`);
    expect(detail.text).toContain(
      'on: an item is identified by <span class="mono">title</span>; each page’s markdown is compared too</dd>',
    );
  });

  it('says plainly when the job does not track changes, or the run is not compared yet', async () => {
    const untracked = await createJob(null);
    const runId = await addRun(untracked.id, { health: healthy });
    const res = await get(`/jobs/${untracked.id}/runs/${runId}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain(
      '<h2 id="changes">Changes</h2>\n<p class="empty">This job does not track changes between runs.</p>',
    );
    expect(res.text).not.toContain('class="cards changes"');
    expect(res.text).toContain('<dt>Health</dt><dd><span class="badge badge-ok">ok</span></dd>');

    const tracked = await createJob({ key: [] });
    const pending = await addRun(tracked.id);
    const waiting = await get(`/jobs/${tracked.id}/runs/${pending}`);
    expect(waiting.text).toContain('This run has not been compared with an earlier run yet.');
    expect(waiting.text).toContain('<dt>Health</dt><dd><span class="muted">not checked</span></dd>');
    expect(waiting.text).not.toContain('class="cards changes"');
  });

  it('is a 404 page for another account’s run and job, or a run of another job', async () => {
    const { job, path, runId } = await comparedRun();
    const other = await createJob({ key: [] });
    const stranger = await f.signIn('stranger@example.com');
    for (const [cookie, p] of [
      [stranger.cookie, path],
      [stranger.cookie, `/jobs/${job.id}`],
      [stranger.cookie, `${path}?change=changed`],
      [f.session.cookie, `/jobs/${other.id}/runs/${runId}`],
    ]) {
      const res = await request(f.app).get(`/console${p}`).set('Cookie', cookie!);
      expect([p, res.status]).toEqual([p, 404]);
      expect(res.text).not.toContain('Lamp');
    }
  });
});
