import { createHash, randomBytes } from 'node:crypto';
import { createJobSchema, SECRET_MASK } from '@scrapejobs/contracts';
import request from 'supertest';
import { type ConsoleFixture, consoleFixture, type SignedIn } from '../testing.ts';

// Pages behind headers, cookies, logins and clicks in the console (docs/api.md §14): the job
// page's masked request and render steps, and the run's screenshots, over the real domain
// services and database. Screenshots are written directly: the worker is not under test.

let f: ConsoleFixture;
let stranger: SignedIn;

beforeAll(async () => {
  f = await consoleFixture('login@example.com');
  stranger = await f.signIn('stranger@example.com');
});

afterAll(async () => {
  await f.close();
});

const get = (path: string, cookie = f.session.cookie) =>
  request(f.app).get(`/console${path}`).set('Cookie', cookie);

const SECRETS = ['hdr-secret-7f3a', 'cookie-secret-91bc', 'pass-secret-44de'];

const loginJob = (render: Record<string, unknown> | null, withRequest = true) =>
  f.jobs.create(
    f.owner,
    createJobSchema.parse({
      name: 'Members area',
      source: 'https://members.example/list',
      queries: [{ name: 'title', type: 'css', query: 'h1' }],
      render_config: render,
      request: withRequest
        ? {
            headers: { 'X-Api-Token': SECRETS[0], 'Accept-Language': 'fr' },
            cookies: [
              { name: 'session', value: SECRETS[1] },
              { name: 'pref', value: 'dark', domain: 'cdn.members.example', path: '/static' },
            ],
            basic_auth: { username: 'alice', password: SECRETS[2] },
            user_agent: 'MembersBot/1.0 <test>',
          }
        : null,
    }),
  );

/** The configuration list of the job page, tags left out and spaces collapsed. */
function configText(page: string): string {
  const dl = /<dl class="config">([\s\S]*?)<\/dl>\s*<table/.exec(page)?.[1] ?? '';
  return dl
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

describe('the job page’s request settings', () => {
  it('shows header names, cookies, user name and user agent with every secret masked', async () => {
    const job = await loginJob(null);
    const res = await get(`/jobs/${job.id}`);
    expect(res.status).toBe(200);
    for (const secret of SECRETS) expect(res.text).not.toContain(secret);
    // Nor the sealed form of any of them.
    const stored = job.request!;
    for (const sealed of [...Object.values(stored.headers), ...stored.cookies.map((c) => c.value)])
      expect(res.text).not.toContain(sealed);
    expect(res.text).not.toContain(stored.basic_auth!.password);
    const text = configText(res.text);
    expect(text).toContain(`Headers X-Api-Token : ${SECRET_MASK} Accept-Language : ${SECRET_MASK}`);
    expect(text).toContain(
      `Cookies session = ${SECRET_MASK} for members.example/ pref = ${SECRET_MASK} for cdn.members.example/static`,
    );
    expect(text).toContain(`Basic auth user alice , password ${SECRET_MASK}`);
    expect(text).toContain('User agent MembersBot/1.0 &lt;test&gt;');
    expect(text).toContain('set through the API');
    expect(text).toContain('never shown');
  });

  it('says the service’s defaults are sent when the job has no request', async () => {
    const job = await loginJob(null, false);
    const text = configText((await get(`/jobs/${job.id}`)).text);
    expect(text).toContain('Request the service’s defaults');
    expect(text).toContain('set through the API');
    expect(text).not.toContain('Basic auth');
  });
});

describe('the job page’s rendering settings', () => {
  it('lists the page actions in order and says whether screenshots are kept', async () => {
    const job = await loginJob({
      enabled: true,
      wait_strategy: 'networkidle2',
      actions: [
        { type: 'type', selector: '#q', text: 'x'.repeat(100) },
        { type: 'press', key: 'Enter' },
        { type: 'wait_for', selector: '.results > li' },
        { type: 'click', selector: 'button.more' },
        { type: 'wait', ms: 500 },
        { type: 'scroll', to: 'bottom', times: 3 },
      ],
      screenshot: true,
    });
    const res = await get(`/jobs/${job.id}`);
    const steps = /<ol class="steps">([\s\S]*?)<\/ol>/.exec(res.text)?.[1] ?? '';
    expect([...steps.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ''))).toEqual([
      `type “${'x'.repeat(60)}…” into #q`,
      'press Enter',
      'wait for .results &gt; li (at most 10.0 s)',
      'click button.more',
      'wait 500 ms',
      'scroll to the bottom, 3 times',
    ]);
    const text = configText(res.text);
    expect(text).toContain('Rendering headless browser for every page, wait for networkidle2');
    expect(text).toContain('Screenshots a full-page PNG kept with each rendered URL');
  });

  it('says when only the pages that need it are rendered (render_config.mode auto)', async () => {
    const job = await loginJob({ enabled: true, mode: 'auto' });
    const text = configText((await get(`/jobs/${job.id}`)).text);
    expect(text).toContain(
      'Rendering headless browser for the pages that need it (each fetched plainly first), wait for load',
    );
  });

  it('says when no action runs and no screenshot is kept', async () => {
    const job = await loginJob({ enabled: true });
    const text = configText((await get(`/jobs/${job.id}`)).text);
    expect(text).toContain('Page actions none');
    expect(text).toContain('Screenshots not kept');
  });
});

// The first bytes of a PNG, then some that tell the two apart.
const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(64)]);

/** A run of a rendering job with two URLs: the first has a screenshot, the second none. */
async function runWithScreenshot() {
  const job = await loginJob({ enabled: true, screenshot: true });
  const { runId } = await f.jobs.run(f.owner, job.id);
  const urls = ['https://members.example/list?a=1&b=<2>', 'https://members.example/list?page=2'];
  await f.tdb.db.runUrl.createMany({
    data: urls.map((url, seq) => ({
      runId,
      seq,
      url,
      status: 'success' as const,
      httpStatus: 200,
      urlKey: createHash('sha256').update(`${seq} ${url}`).digest().subarray(0, 16),
    })),
  });
  await f.tdb.db.runScreenshot.create({ data: { runId, seq: 0, png: PNG } });
  const path = `/jobs/${job.id}/runs/${runId}`;
  return { jobId: job.id, runId, path, shot: `${path}/screenshots/0` };
}

describe('a run’s screenshots', () => {
  it('are the PNG for the owner, private to the browser', async () => {
    const { shot } = await runWithScreenshot();
    const res = await get(shot).buffer(true);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['cache-control']).toBe('private');
    expect(Buffer.compare(res.body as Buffer, PNG)).toBe(0);
  });

  it('are a 404 page for another account, a URL without one, another run’s, or a malformed number', async () => {
    const { jobId, runId, path, shot } = await runWithScreenshot();
    const other = await runWithScreenshot();
    for (const [cookie, at] of [
      [stranger.cookie, shot],
      [f.session.cookie, `${path}/screenshots/1`],
      [f.session.cookie, `${path}/screenshots/7`],
      [f.session.cookie, `${path}/screenshots/-1`],
      [f.session.cookie, `${path}/screenshots/01`],
      [f.session.cookie, `/jobs/${other.jobId}/runs/${runId}/screenshots/0`],
      [f.session.cookie, `/jobs/${jobId}/runs/${other.runId}/screenshots/0`],
    ] as const) {
      const res = await get(at, cookie);
      expect([at, res.status]).toEqual([at, 404]);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('It does not exist');
    }
  });

  it('need a signed-in session', async () => {
    const { shot } = await runWithScreenshot();
    const res = await request(f.app).get(`/console${shot}`);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/console/login');
  });

  it('show as a thumbnail linking to the image in the run page’s URL table, for the URLs that have one', async () => {
    const { path, shot } = await runWithScreenshot();
    const res = await get(path);
    expect(res.status).toBe(200);
    expect(res.text).toContain('<th scope="col">Screenshot</th>');
    const thumbs = [...res.text.matchAll(/<a class="thumb" href="([^"]+)"><img ([^>]+)><\/a>/g)];
    expect(thumbs.map((m) => m[1])).toEqual([`/console${shot}`]);
    expect(thumbs[0]![2]).toBe(
      `src="/console${shot}" loading="lazy" width="120" alt="Screenshot of https://members.example/list?a=1&amp;b=&lt;2&gt;"`,
    );
    // The link's image loads through the console route.
    const image = await get(shot).buffer(true);
    expect(Buffer.compare(image.body as Buffer, PNG)).toBe(0);
  });

  it('leave the URL table without the column when no URL of the page has one', async () => {
    const job = await loginJob({ enabled: true });
    const { runId } = await f.jobs.run(f.owner, job.id);
    await f.tdb.db.runUrl.create({
      data: {
        runId,
        seq: 0,
        url: 'https://members.example/list',
        status: 'success',
        urlKey: createHash('sha256').update('0').digest().subarray(0, 16),
      },
    });
    const res = await get(`/jobs/${job.id}/runs/${runId}`);
    expect(res.text).toContain('https://members.example/list');
    expect(res.text).not.toContain('Screenshot');
  });
});
