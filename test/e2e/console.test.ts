import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Accounts } from '@scrapejobs/domain';
import { parse } from 'csv-parse/sync';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { buildTestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type Proc, startApp, until } from '../support/processes.ts';
import { REDIS_URL, testPrefix } from '../support/redis.ts';
import { startSite } from '../support/site.ts';

// Everything here listens on 127.0.0.1: the API with its console, the target site, the webhook
// receivers, the workers; Chromium runs with background networking off.
const SHOTS = new URL('./screenshots/', import.meta.url).pathname;
const CLI = new URL('../../apps/api/src/cli/account.ts', import.meta.url).pathname;
const KEY = randomBytes(32);
const EMAIL = 'owner@console.test';
const PASSWORD = 'a console password 42';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let tdb: TestDatabase;
let api: ReturnType<typeof buildTestApi>;
let server: Server;
let base: string;
let site: Awaited<ReturnType<typeof startSite>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const prefix = testPrefix();
const procs: Proc[] = [];
const receivers: Server[] = [];

async function start(app: 'scraper-worker' | 'webhook-worker', logLine: string) {
  const p = startApp(app, {
    DATABASE_URL: tdb.url,
    REDIS_URL,
    QUEUE_PREFIX: prefix.prefix,
    ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
    PUBLIC_BASE_URL: 'https://scrape.example.com',
    WEBHOOK_SECRET_KEY: KEY.toString('hex'),
    WEBHOOK_RETRY_DELAYS_MS: '30,30,30,30,30',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_OUTBOX_POLL_MS: '50',
  });
  procs.push(p);
  await p.waitForLog((l) => l.msg === logLine);
}

function createAccountWithCli(email: string, password: string) {
  return new Promise<string>((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [CLI, 'create', '--email', email, '--password-stdin'],
      { env: { ...process.env, DATABASE_URL: tdb.url } },
      (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout)),
    );
    child.stdin!.end(`${password}\n`);
  });
}

/** A webhook receiver answering `status(n)` to its n-th request. */
async function receiver(status: (n: number) => number) {
  const hits: { event: string; signature: string }[] = [];
  const srv = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      hits.push({
        event: (JSON.parse(body) as { event: string }).event,
        signature: String(req.headers['x-service-signature']),
      });
      res.writeHead(status(hits.length)).end();
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  receivers.push(srv);
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`, hits };
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  tdb = await createTestDatabase();
  api = buildTestApi({
    db: tdb.db,
    prefix: prefix.prefix,
    webhooks: { WEBHOOK_SECRET_KEY: KEY, ALLOW_PRIVATE_NETWORK_TARGETS: true },
  });
  server = api.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A page elsewhere that tries to pause a job through the signed-in browser (CSRF).
  site = await startSite((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    if (url.pathname !== '/attack') return false;
    res.setHeader('Content-Type', 'text/html');
    res.end(`<form id="f" method="post" action="${url.searchParams.get('action')}">
<input type="hidden" name="_csrf" value="guessed"></form><script>document.getElementById('f').submit()</script>`);
    return true;
  });
  [browser] = await Promise.all([
    chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    }),
    start('scraper-worker', 'scraper worker started'),
    start('webhook-worker', 'webhook worker started'),
    createAccountWithCli(EMAIL, PASSWORD),
    new Accounts(tdb.db).create('target@console.test', 'the target password'),
  ]);
  context = await browser.newContext({ viewport: DESKTOP });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  page = await context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(procs.map((p) => p.kill('SIGKILL')));
  for (const r of receivers) {
    r.closeAllConnections();
    r.close();
  }
  server?.closeAllConnections();
  server?.close();
  await site?.close();
  await api?.close();
  await tdb?.drop();
  await prefix.cleanup();
});

/** Screenshots at desktop and phone width, after checking nothing overflows sideways. */
async function shoot(p: Page, name: string) {
  for (const [label, size] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await p.setViewportSize(size);
    // Elements reaching past the right edge and not clipped by an ancestor, to name what overflows.
    const overflowing = await p.evaluate(() => {
      const edge = document.documentElement.clientWidth + 0.5;
      const clipped = (el: Element) => {
        for (let a = el.parentElement; a && a !== document.body; a = a.parentElement)
          if (getComputedStyle(a).overflowX !== 'visible' && a.getBoundingClientRect().right <= edge)
            return true;
        return false;
      };
      const boxes = Array.from(document.querySelectorAll('body *'))
        .filter((el) => el.getBoundingClientRect().right > edge && !clipped(el))
        .map((el) => el.outerHTML.slice(0, 120));
      // Text that runs out of its box (an unbreakable word) overflows without the box doing so.
      const texts: string[] = [];
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const range = document.createRange();
        range.selectNodeContents(n);
        if (range.getBoundingClientRect().right > edge && !clipped(n as unknown as Element))
          texts.push(`${n.parentElement?.outerHTML.slice(0, 80)}: ${n.textContent?.slice(0, 60)}`);
      }
      return [...boxes, ...texts];
    });
    const overflow = await p.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect({ page: name, width: label, overflow, overflowing }).toEqual({
      page: name,
      width: label,
      overflow: 0,
      overflowing: [],
    });
    await p.screenshot({ path: `${SHOTS}${name}-${label}.png`, fullPage: true });
  }
  await p.setViewportSize(DESKTOP);
}

/** Every form control and button has an accessible name. */
async function expectLabelled(p: Page) {
  const unlabelled = await p.evaluate(() =>
    Array.from(document.querySelectorAll('input:not([type=hidden]), select, textarea, button, a'))
      .filter((el) => {
        if (el.tagName === 'BUTTON' || el.tagName === 'A')
          return !(el.textContent?.trim() || el.getAttribute('aria-label'));
        const control = el as HTMLInputElement;
        return !(control.labels?.length || el.getAttribute('aria-label'));
      })
      .map((el) => el.outerHTML),
  );
  expect(unlabelled).toEqual([]);
}

/** Clicks, and returns the status of the page the click leads to (after any redirect). */
async function submit(p: Page, click: () => Promise<void>): Promise<number> {
  const final = p.waitForResponse((r) => r.request().isNavigationRequest() && r.status() !== 303);
  await click();
  const res = await final;
  await p.waitForLoadState();
  return res.status();
}

// innerText, unlike textContent, gives the text as shown (CSS text-transform, cells split by tabs).
// biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, not the DOM property
const text = (l: Locator) => l.innerText();
const nav = (name: string) =>
  page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });
const csrfOf = async (p: Page) => p.locator('input[name=_csrf]').first().inputValue();
const status = (p: Page) => text(p.locator('.title-row .badge').first());
const apiGet = (path: string, token: string) =>
  fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` } });

let token = '';
let jobId = '';
let webhookId = '';
let deliveryId = '';

describe('account console in Chromium', () => {
  it('refuses a wrong password, then rate-limits the account even for the right one', async () => {
    const p = await (await browser.newContext({ viewport: DESKTOP })).newPage();
    await p.goto(`${base}/console/login`);
    const attempt = async (password: string) => {
      await p.getByLabel('Email').fill('target@console.test');
      await p.getByLabel('Password').fill(password);
      return submit(p, () => p.getByRole('button', { name: 'Sign in' }).click());
    };
    for (let i = 0; i < 5; i++) {
      expect(await attempt('not the password')).toBe(401);
      await expect(text(p.getByRole('alert'))).resolves.toBe('Incorrect email or password.');
    }
    expect(await attempt('not the password')).toBe(429);
    expect(await attempt('the target password')).toBe(429);
    await expect(text(p.getByRole('alert'))).resolves.toMatch(
      /Too many failed sign-ins. Try again in 15 minutes/,
    );
    expect(p.url()).toBe(`${base}/console/login`);
    await shoot(p, 'sign-in-rate-limited');
    await p.context().close();
  });

  it('signs in with the keyboard alone', async () => {
    await page.goto(`${base}/console/login`);
    await expectLabelled(page);
    await shoot(page, 'sign-in');
    const focused = () =>
      page.evaluate(() => document.activeElement?.id || document.activeElement?.className);
    expect(await focused()).toBe('email'); // autofocus
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('skip');
    await page.keyboard.press('Tab');
    await page.keyboard.type(EMAIL);
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('password');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${base}/console/jobs`);
    await expect(text(page.getByRole('heading', { level: 1 }))).resolves.toBe('Jobs');
    await expect(text(page.locator('.empty'))).resolves.toContain('No jobs in test mode yet');
    // The skip link moves focus past the navigation, to the page's first control.
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('skip');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('New job');
    const cookie = (await context.cookies()).find((c) => c.name === 'sj_session')!;
    expect(cookie).toEqual(expect.objectContaining({ httpOnly: true, sameSite: 'Lax', path: '/console' }));
  });

  it('generates a key shown once, which works against the API; regenerating refuses the old token', async () => {
    await nav('API Keys').click();
    await page.getByLabel('Name', { exact: true }).fill('ci');
    expect(await page.getByLabel('Test (sk_test_…)').isChecked()).toBe(true);
    for (const scope of ['jobs:read', 'jobs:write', 'webhooks:read', 'webhooks:write'])
      expect(await page.getByLabel(scope).isChecked()).toBe(true);
    expect(await submit(page, () => page.getByRole('button', { name: 'Generate New Key' }).click())).toBe(
      200,
    );
    token = await page.getByLabel('Token').inputValue();
    expect(token).toMatch(/^sk_test_[A-Za-z0-9]{32}$/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    await expectLabelled(page);
    await shoot(page, 'keys-new-token');

    // curl -H "Authorization: Bearer $TOKEN" $BASE/jobs/status
    const listed = await apiGet('/jobs/status', token);
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual({ jobs: [], count: 0, next_cursor: null });
    // curl -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{…}' $BASE/jobs
    const created = await fetch(`${base}/jobs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: 'Made with the API',
        source: 'https://example.com/',
        queries: [{ name: 'h', type: 'css', query: 'h1' }],
      }),
    });
    expect(created.status).toBe(201);

    // Shown once: the list page never contains the token again.
    await page.reload();
    expect(await page.content()).not.toContain(token);
    const row = page.getByRole('row', { name: /^ci test/ });
    await expect(text(row.getByRole('cell').nth(3))).resolves.toBe(`${token.slice(0, 12)}…`);
    await until(async () => {
      await page.reload();
      return !(await text(row)).includes('never');
    }, 5_000);

    await submit(page, () => row.getByRole('button', { name: 'Regenerate' }).click());
    const fresh = await page.getByLabel('Token').inputValue();
    expect(fresh).toMatch(/^sk_test_/);
    expect(fresh).not.toBe(token);
    await expect(text(page.locator('.panel-token'))).resolves.toContain(
      'The previous token no longer works.',
    );
    expect((await apiGet('/jobs/status', token)).status).toBe(401);
    expect((await apiGet('/jobs/status', fresh)).status).toBe(200);
    await expect(text(page.locator('details summary'))).resolves.toBe('Revoked keys (1)');

    // Revoke: the fresh token stops working too.
    await page.getByRole('button', { name: 'Revoke' }).click();
    await expect(text(page.getByRole('status').first())).resolves.toMatch(/Key “ci” .* is revoked/);
    expect((await apiGet('/jobs/status', fresh)).status).toBe(401);
    token = fresh;
  });

  it('creates a job, runs it, shows its results, downloads a CSV, and pauses and resumes it', async () => {
    await nav('Jobs').click();
    await page.getByRole('link', { name: 'New job' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Console job');
    await page.getByLabel('Source URL').fill(`${site.url}/page/{1,2}`);
    await page.getByLabel('Rate limit (requests per minute)').fill('6000');
    await page.getByLabel('Query 1 name').fill('title');
    await page.getByLabel('Expression').first().fill('li.item a[');
    await page.getByLabel('Query 2 name').fill('price');
    await page.getByLabel('Type').nth(1).selectOption('xpath');
    await page.getByLabel('Expression').nth(1).fill("//span[@class='price']");
    // The API's own validation: the broken selector is named by its row.
    expect(await submit(page, () => page.getByRole('button', { name: 'Create job' }).click())).toBe(400);
    await expect(text(page.getByRole('alert'))).resolves.toMatch(/query row 1: query: invalid css/);
    await expectLabelled(page);
    await shoot(page, 'job-new-invalid');

    await page.getByLabel('Expression').first().fill('li.item a');
    expect(await submit(page, () => page.getByRole('button', { name: 'Create job' }).click())).toBe(200);
    jobId = /\/console\/jobs\/(job_\w+)$/.exec(page.url())![1]!;
    await expect(text(page.getByRole('status').first())).resolves.toBe('Job “Console job” created.');
    expect(await status(page)).toBe('scheduled');
    expect(await page.getByRole('button', { name: 'Resume' }).isDisabled()).toBe(true);

    await page.getByRole('button', { name: 'Run now' }).click();
    await expect(text(page.getByRole('status').first())).resolves.toBe('Run started.');
    await until(async () => {
      await page.getByRole('link', { name: 'Refresh' }).click();
      return (await status(page)) === 'success';
    }, 20_000);
    const preview = page.locator('table.results');
    await expect(text(preview.locator('thead'))).resolves.toMatch(/URL\s+title\s+price/i);
    await expect(preview.locator('tbody tr').count()).resolves.toBe(6);
    await expect(text(preview.locator('tbody'))).resolves.toMatch(/Item 0\s+0/);
    const runRow = page.locator('section[aria-labelledby=runs-title] tbody tr');
    await expect(runRow.count()).resolves.toBe(1);
    await expect(text(runRow)).resolves.toMatch(/success\s+manual[\s\S]*6\s+2 \/ 0/);
    await expectLabelled(page);
    await shoot(page, 'job-detail');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    const run = await tdb.db.run.findFirstOrThrow({ where: { jobId } });
    expect(download.suggestedFilename()).toBe(`${jobId}-${run.id}.csv`);
    const rows = parse(readFileSync((await download.path())!), { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(6);
    expect(Object.keys(rows[0]!)).toEqual(['url', 'scraped_at', 'title', 'price']);
    expect(rows.map((r) => r.title).sort()).toEqual([
      'Item 0',
      'Item 0',
      'Item 1',
      'Item 1',
      'Item 2',
      'Item 2',
    ]);
    for (const [format, type] of [
      ['json', 'application/json'],
      ['xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
      ['sql', 'application/sql'],
    ]) {
      const res = await context.request.get(`${base}/console/jobs/${jobId}/download?format=${format}`);
      expect([format, res.status(), res.headers()['content-type']?.split(';')[0]]).toEqual([
        format,
        200,
        type,
      ]);
    }

    await page.getByRole('button', { name: 'Pause' }).click();
    expect(await status(page)).toBe('paused');
    for (const [name, disabled] of [
      ['Run now', true],
      ['Pause', true],
      ['Resume', false],
    ] as const)
      expect([name, await page.getByRole('button', { name }).isDisabled()]).toEqual([name, disabled]);
    await page.getByRole('button', { name: 'Resume' }).click();
    expect(await status(page)).toBe('scheduled');
    expect(await page.getByRole('button', { name: 'Run now' }).isEnabled()).toBe(true);

    // The list: both jobs of test mode, this one with its results and last run.
    await nav('Jobs').click();
    const jobRow = page.getByRole('row', { name: /Console job/ });
    await expect(text(jobRow)).resolves.toMatch(/scheduled\s+\d{4}-\d\d-\d\d \d\d:\d\d UTC\s+—\s+6/);
    await expect(page.getByRole('row', { name: /Made with the API/ }).count()).resolves.toBe(1);
    await expectLabelled(page);
    await shoot(page, 'jobs');
  }, 45_000);

  it('adds webhooks, sends test events, shows the delivery log with status codes, and resends a failed delivery', async () => {
    const ok = await receiver(() => 200);
    // A test event gets one attempt (job events get the retries of docs/api.md §6): 500, then 200 on resend.
    const flaky = await receiver((n) => (n === 1 ? 500 : 200));
    await nav('Webhooks').click();
    await expectLabelled(page);
    await page.getByLabel('Endpoint URL').fill('ftp://example.com/hook');
    expect(await submit(page, () => page.getByRole('button', { name: 'Add webhook' }).click())).toBe(400);
    await expect(text(page.locator('#err-wh-url'))).resolves.toMatch(/http or https/);

    await page.getByLabel('Endpoint URL').fill(ok.url);
    await page.getByLabel('Description (optional)').fill('receiver that answers 200');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    webhookId = /\/console\/webhooks\/(wh_\w+)$/.exec(page.url())![1]!;
    await page.getByRole('button', { name: 'Send test event' }).click();
    await expect(text(page.getByRole('status').first())).resolves.toMatch(/Test event queued/);
    await until(async () => {
      await page.getByRole('link', { name: 'Refresh' }).click();
      return (await text(page.locator('table.deliveries tbody'))).includes('succeeded');
    }, 10_000);
    await expect(text(page.locator('table.deliveries tbody'))).resolves.toMatch(
      /webhook\.test[\s\S]*succeeded[\s\S]*#1 200/,
    );
    expect(ok.hits).toEqual([
      { event: 'webhook.test', signature: expect.stringMatching(/^sha256=[0-9a-f]{64}$/) },
    ]);

    await nav('Webhooks').click();
    await page.getByLabel('Endpoint URL').fill(flaky.url);
    await page.getByLabel('job.started').uncheck();
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const flakyId = /\/console\/webhooks\/(wh_\w+)$/.exec(page.url())![1]!;
    await page.getByRole('button', { name: 'Send test event' }).click();
    const log = page.locator('table.deliveries tbody');
    await until(async () => {
      await page.getByRole('link', { name: 'Refresh' }).click();
      return (await text(log.locator('.badge').first())) === 'failed';
    }, 10_000);
    await expect(log.locator('.attempts li').count()).resolves.toBe(1);
    await expect(text(log.locator('.attempts li').first())).resolves.toMatch(/^#1 500/);
    await page.getByRole('button', { name: 'Resend' }).click();
    await until(async () => {
      await page.getByRole('link', { name: 'Refresh' }).click();
      return (await text(log.locator('.badge').first())) === 'succeeded';
    }, 10_000);
    await expect(text(log.locator('.attempts li').first())).resolves.toMatch(/^#2 200/);
    deliveryId = (await tdb.db.delivery.findFirstOrThrow({ where: { webhookId: flakyId } })).id;
    await expectLabelled(page);
    await shoot(page, 'webhook-deliveries');

    await nav('Webhooks').click();
    await expect(page.locator('tbody tr').count()).resolves.toBe(2);
    await expect(text(page.getByRole('row', { name: new RegExp(flaky.url) }))).resolves.toMatch(
      /job\.completed\s+job\.failed\s+job\.paused\s+job\.changed\s+job\.degraded\s+active/,
    );
    await shoot(page, 'webhooks');
    await page
      .getByRole('row', { name: new RegExp(flaky.url) })
      .getByRole('button', { name: 'Delete' })
      .click();
    await expect(text(page.getByRole('status').first())).resolves.toBe('Webhook deleted.');
    await expect(page.locator('tbody tr').count()).resolves.toBe(1);
  }, 45_000);

  it('switches between test and live mode, as keys are', async () => {
    await nav('Jobs').click();
    await page.getByRole('button', { name: 'Switch to live' }).click();
    await expect(text(page.getByRole('status').first())).resolves.toBe('Switched to live mode.');
    await expect(text(page.locator('.empty'))).resolves.toContain('No jobs in live mode yet');
    // The test-mode job does not exist in live mode.
    const res = await page.goto(`${base}/console/jobs/${jobId}`);
    expect(res!.status()).toBe(404);
    await page.goto(`${base}/console/webhooks`);
    await expect(text(page.locator('.empty'))).resolves.toContain('No webhooks in live mode');
    await page.getByRole('button', { name: 'Switch to test' }).click();
    expect(page.url()).toBe(`${base}/console/webhooks`);
    await expect(page.locator('tbody tr').count()).resolves.toBe(1);
  });

  it('refuses every mutation without the CSRF token, also from a form on another site', async () => {
    const keyId = (await tdb.db.apiKey.findFirstOrThrow({ where: { user: { email: EMAIL } } })).id;
    const paths = [
      '/console/logout',
      '/console/mode',
      '/console/keys',
      `/console/keys/${keyId}/regenerate`,
      `/console/keys/${keyId}/revoke`,
      '/console/jobs',
      `/console/jobs/${jobId}/run`,
      `/console/jobs/${jobId}/pause`,
      `/console/jobs/${jobId}/resume`,
      '/console/webhooks',
      `/console/webhooks/${webhookId}/test`,
      `/console/webhooks/${webhookId}/delete`,
      `/console/webhooks/${webhookId}/deliveries/${deliveryId}/resend`,
    ];
    const form = { mode: 'live', name: 'x', scopes: 'jobs:read', url: 'https://example.com/h' };
    for (const path of paths) {
      for (const extra of [{}, { _csrf: 'wrong' }] as Record<string, string>[]) {
        const res = await context.request.post(`${base}${path}`, {
          form: { ...form, ...extra },
          maxRedirects: 0,
        });
        expect([path, res.status()]).toEqual([path, 403]);
      }
    }
    await page.goto(`${site.url}/attack?action=${encodeURIComponent(`${base}/console/jobs/${jobId}/pause`)}`);
    await page.waitForURL(`${base}/console/jobs/${jobId}/pause`);
    await expect(text(page.getByRole('heading', { level: 1 }))).resolves.toBe('Refused');
    await shoot(page, 'refused-csrf');

    // Nothing changed, and the session still works.
    expect((await tdb.db.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('scheduled');
    expect(await tdb.db.webhook.count({ where: { id: webhookId } })).toBe(1);
    expect(await tdb.db.apiKey.count({ where: { user: { email: EMAIL } } })).toBe(2);
    expect(await tdb.db.job.count()).toBe(2);
    await page.goto(`${base}/console/jobs`);
    await expect(text(page.getByRole('heading', { level: 1 }))).resolves.toBe('Jobs');
  });

  it("cannot open, run or download another user's job", async () => {
    const other = await api.keys.create({
      email: 'other@console.test',
      mode: 'test',
      scopes: ['jobs:read', 'jobs:write', 'webhooks:write'],
      name: 'other',
    });
    const theirs = await fetch(`${base}/jobs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${other.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: 'Secret job',
        source: 'https://example.com/',
        queries: [{ name: 'h', type: 'css', query: 'h1' }],
      }),
    });
    const otherJob = ((await theirs.json()) as { job_id: string }).job_id;

    const res = await page.goto(`${base}/console/jobs/${otherJob}`);
    expect(res!.status()).toBe(404);
    expect(await page.content()).not.toContain('Secret job');
    await shoot(page, 'not-found');
    expect((await context.request.get(`${base}/console/jobs/${otherJob}/download?format=csv`)).status()).toBe(
      404,
    );
    await page.goto(`${base}/console/jobs`);
    const run = await context.request.post(`${base}/console/jobs/${otherJob}/run`, {
      form: { _csrf: await csrfOf(page) },
      maxRedirects: 0,
    });
    expect(run.status()).toBe(404);
    expect((await tdb.db.job.findUniqueOrThrow({ where: { id: otherJob } })).status).toBe('scheduled');
    await expect(page.getByRole('row', { name: /Secret job/ }).count()).resolves.toBe(0);
  });

  it('signs out, and the old session cookie no longer works', async () => {
    const cookies = await context.cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/console/login?signed_out=1`);
    await expect(text(page.getByRole('status'))).resolves.toBe('You are signed out.');
    const replay = await browser.newContext();
    await replay.addCookies(cookies);
    const res = await replay.request.get(`${base}/console/jobs`, { maxRedirects: 0 });
    expect(res.status()).toBe(303);
    expect(res.headers().location).toBe('/console/login');
    await replay.close();
  });
});
