// The `scrapejobs` command, spawned with node as a user runs it, against the real API process and
// scraper worker: its output, its progress bars, its exit codes, and its one-line refusals.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, until } from '../../../test/support/processes.ts';
import { startSite } from '../../../test/support/site.ts';
import { ScrapeJobs } from './index.ts';
import { formatBytes } from './internal/cli/progress.ts';
import { startReceiver } from './testing/receiver.ts';
import { type Stack, startStack } from './testing/stack.ts';

const CLI = new URL('./cli.ts', import.meta.url).pathname;
const ROOT = new URL('../../../', import.meta.url).pathname;

/** A Node.js 20 to 23 on the PATH (the machine's own, beside the workspace's 24), or null. */
/** A Node 20–23 on the PATH (the machine's own, below the workspace's Node 24), else this Node. */
function olderNode(): string {
  for (const folder of (process.env.PATH ?? '').split(':')) {
    const bin = join(folder, 'node');
    if (!existsSync(bin)) continue;
    const major = Number(/^v(\d+)/.exec(execFileSync(bin, ['--version'], { encoding: 'utf8' }))?.[1]);
    if (major >= 20 && major < 24) return bin;
  }
  return process.execPath;
}
const OLDER_NODE = olderNode();

let stack: Stack;
let site: Awaited<ReturnType<typeof startSite>>;
let dir: string;
let key: string;

beforeAll(async () => {
  [stack, site, dir] = await Promise.all([
    startStack({ workers: ['scraper-worker'] }),
    startSite(),
    mkdtemp(join(tmpdir(), 'scrapejobs-cli-')),
  ]);
  key = await stack.key();
});

afterAll(async () => {
  await stack?.stop();
  await site?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface CliOptions {
  /** Over the key and base URL of the stack (undefined removes a variable). */
  env?: Record<string, string | undefined>;
  /** Standard input. */
  input?: string;
  /** Another Node.js and build of the tool. */
  bin?: [node: string, script: string];
}

/** Runs `scrapejobs <args>` in the test's folder, as a user would. */
function cli(
  args: string[],
  { env = {}, input, bin = [process.execPath, CLI] }: CliOptions = {},
): Promise<Ran> {
  const merged: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    SCRAPEJOBS_API_KEY: key,
    SCRAPEJOBS_BASE_URL: stack.baseUrl,
    ...env,
  };
  const child = spawn(bin[0], [bin[1], ...args], {
    cwd: dir,
    env: Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined)),
  });
  child.stdin.end(input);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const write = (name: string, content: unknown) =>
  writeFile(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));

const job = (over: Record<string, unknown> = {}) => ({
  name: 'Catalogue',
  source: `${site.url}/page/[1-5]`,
  queries: [
    { name: 'title', type: 'css', query: 'li.item a' },
    { name: 'price', type: 'css', query: 'li.item .price' },
  ],
  rate_limit: 6000,
  ...over,
});

/** Creates a job through the tool and returns its id. */
async function createJob(over: Record<string, unknown> = {}): Promise<string> {
  await write('job.json', job(over));
  const ran = await cli(['jobs', 'create', '-f', 'job.json', '--json']);
  expect(ran).toMatchObject({ code: 0, stderr: '' });
  return (JSON.parse(ran.stdout) as { job_id: string }).job_id;
}

describe('bad input', () => {
  it('gets one line naming the problem on standard error, nothing on standard output, and a non-zero exit', async () => {
    await write('bad.json', '{"name": "x",');
    await write('invalid.json', { name: ' ', source: 'ftp://example.com', queries: [] });
    await write('typo.json', job({ rate_limt: 5 }));
    const reader = await stack.key(['jobs:read']);
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const cases: [string[], Record<string, string | undefined>, number, RegExp][] = [
      [['jobs', 'list'], { SCRAPEJOBS_API_KEY: undefined }, 2, /SCRAPEJOBS_API_KEY is not set/],
      [['jobs', 'list'], { SCRAPEJOBS_BASE_URL: undefined }, 2, /SCRAPEJOBS_BASE_URL is not set/],
      [
        ['jobs', 'list'],
        { SCRAPEJOBS_BASE_URL: 'localhost:3000' },
        2,
        /SCRAPEJOBS_BASE_URL is not an http\(s\) URL/,
      ],
      [['jobs', 'create', '-f', 'bad.json'], {}, 2, /bad\.json is not JSON: /],
      [['jobs', 'create', '-f', 'missing.json'], {}, 2, /cannot read missing\.json: no such file/],
      [['jobs', 'create'], {}, 2, /-f <file\.json> is required/],
      [
        ['jobs', 'create', '-f', 'invalid.json'],
        {},
        3,
        /validation_error \(HTTP 400\): .*name: .*source: .*queries: /,
      ],
      [
        ['jobs', 'create', '-f', 'typo.json'],
        {},
        3,
        /validation_error \(HTTP 400\): .*rate_limt: unknown field/,
      ],
      [['jobs', 'get', 'job_unknown'], {}, 3, /not_found \(HTTP 404\)/],
      [['jobs', 'list'], { SCRAPEJOBS_API_KEY: `sk_test_${'x'.repeat(32)}` }, 4, /unauthorized \(HTTP 401\)/],
      [['jobs', 'create', '-f', 'typo.json'], { SCRAPEJOBS_API_KEY: reader }, 4, /forbidden \(HTTP 403\)/],
      [['jobs', 'list'], { SCRAPEJOBS_BASE_URL: nowhere }, 5, /cannot reach .*ECONNREFUSED/],
      [['jobs', 'frobnicate'], {}, 2, /unknown command "jobs frobnicate"/],
      [['jobs', 'list', '--colour'], {}, 2, /Unknown option '--colour'/],
      [['jobs', 'get'], {}, 2, /missing <job_id>/],
      [['jobs', 'list', '--limit', 'ten'], {}, 2, /--limit must be a whole number/],
      [
        ['results', 'download', 'job_x', '--format', 'pdf'],
        {},
        2,
        /--format must be one of json, jsonl, csv, xlsx, sql, got "pdf"/,
      ],
      [
        ['results', 'download', 'job_x', '--content', 'pages'],
        {},
        2,
        /--content must be one of records, documents, got "pages"/,
      ],
      [
        ['documents', 'job_x', 'run_x', '--format', 'html'],
        {},
        2,
        /--format must be one of jsonl, json, markdown, got "html"/,
      ],
      [['documents', 'job_x'], {}, 2, /missing <run_id>/],
      [[], {}, 2, /^usage: scrapejobs/],
    ];
    const results = await Promise.all(cases.map(([args, env]) => cli(args, { env })));
    results.forEach((ran, i) => {
      const [args, , code, message] = cases[i]!;
      const context = `scrapejobs ${args.join(' ')}`;
      expect({ context, code: ran.code, stdout: ran.stdout }).toEqual({ context, code, stdout: '' });
      expect(ran.stderr).toMatch(message);
      expect(ran.stderr).not.toMatch(/\n\s+at /);
      if (args.length) expect(ran.stderr).toMatch(/^scrapejobs: [^\n]+\n$/);
    });
  });
});

describe('jobs', () => {
  it('are created from a file, listed as a table and as JSON, read, paused, resumed and deleted', async () => {
    const fromStdin = await cli(['jobs', 'create', '-f', '-'], {
      input: JSON.stringify(job({ name: 'Shop' })),
    });
    const jobId = /^(job_\w+) created \(status scheduled\)\n$/.exec(fromStdin.stdout)![1]!;
    const [table, json, detail] = await Promise.all([
      cli(['jobs', 'list']),
      cli(['jobs', 'list', '--json', '--limit', '1']),
      cli(['jobs', 'get', jobId]),
    ]);
    expect(table.code).toBe(0);
    const [header, row] = table.stdout.split('\n');
    expect(header).toMatch(/^JOB_ID\s+STATUS\s+LAST_RUN\s+RESULTS\s+NEXT_RUN_AT\s+NAME$/);
    expect(row).toMatch(new RegExp(`^${jobId}\\s+scheduled\\s+-\\s+0\\s+-\\s+Shop$`));
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ job_id: jobId, name: 'Shop' })]);

    expect(detail.stdout).toMatch(new RegExp(`^job_id\\s+${jobId}$`, 'm'));
    expect(detail.stdout).toMatch(/^rate_limit\s+6000$/m);
    await write('patch.json', { name: 'Renamed' });
    expect((await cli(['jobs', 'update', jobId, '-f', 'patch.json'])).stdout).toBe(
      `${jobId} updated (status scheduled)\n`,
    );
    expect((await cli(['jobs', 'pause', jobId])).stdout).toBe(`${jobId} paused (status paused)\n`);
    const conflict = await cli(['jobs', 'run', jobId]);
    expect(conflict).toMatchObject({
      code: 3,
      stderr: expect.stringMatching(/^scrapejobs: conflict \(HTTP 409\)/),
    });
    const resumed = JSON.parse((await cli(['jobs', 'resume', jobId, '--json'])).stdout) as { status: string };
    expect(resumed).toMatchObject({ job_id: jobId, name: 'Renamed', status: 'scheduled' });
    expect((await cli(['jobs', 'delete', jobId])).stdout).toBe(`${jobId} deleted\n`);
    expect((await cli(['jobs', 'get', jobId])).code).toBe(3);
  });

  it('run --wait draws a progress bar, prints the ended run and exits 0; 1 when the run failed', async () => {
    const jobId = await createJob();
    const ok = await cli(['jobs', 'run', jobId, '--wait', '--interval', '0.1', '--progress']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^run_\w+ success: 15 results, 5 URLs ok, 0 failed, 0 skipped, \d+ ms\n$/);
    expect(ok.stderr).toMatch(/\rrun_\w+ \[#{24}\] 100% 5\/5 URLs \(5 ok, 0 failed\)/);

    const brokenId = await createJob({ source: `${site.url}/status/404` });
    const failed = await cli(['jobs', 'run', brokenId, '--wait', '--interval', '0.1', '--json']);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({
      status: 'failed',
      failed_urls: 1,
      error: { code: 'HTTP_ERROR' },
    });
    expect(failed.stderr).toBe('');
  });
});

describe('a job that ran', () => {
  let jobId: string;
  let runId: string;

  beforeAll(async () => {
    jobId = await createJob({ change_tracking: { key: ['url', 'title'] } });
    const ran = await cli(['jobs', 'run', jobId, '--wait', '--interval', '0.1', '--json']);
    runId = (JSON.parse(ran.stdout) as { run_id: string }).run_id;
    // Its comparison with the (absent) base run follows the run's end.
    const client = new ScrapeJobs({ apiKey: key, baseUrl: stack.baseUrl });
    await until(async () => (await client.runs.get(jobId, runId)).changes, 15_000);
  });

  it('shows its runs, the run, its URLs, its records and its changes as tables and as JSON', async () => {
    const runs = await cli(['runs', 'list', jobId]);
    expect(runs.stdout).toMatch(
      new RegExp(`^${runId}\\s+success\\s+manual\\s+\\S+\\s+\\d+\\s+15\\s+5\\s+0\\s+0$`, 'm'),
    );
    expect(JSON.parse((await cli(['runs', 'get', jobId, runId, '--json'])).stdout)).toMatchObject({
      run_id: runId,
      results_count: 15,
    });

    const urls = await cli(['runs', 'urls', jobId, runId, '--status', 'success']);
    const lines = urls.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^STATUS\s+HTTP\s+UNCHANGED\s+RECORDS\s+DEPTH\s+ERROR\s+URL$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/).at(-1))).toEqual(
      [1, 2, 3, 4, 5].map((n) => `${site.url}/page/${n}`),
    );

    const results = await cli(['results', 'get', jobId, '--limit', '4']);
    const rows = results.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^URL\s+SCRAPED_AT\s+TITLE\s+PRICE$/);
    expect(rows).toHaveLength(5);
    expect(rows[1]).toMatch(/Item \d\s+\d+$/);
    const records = JSON.parse((await cli(['results', 'get', jobId, '--json'])).stdout) as unknown[];
    expect(records).toHaveLength(15);

    const changes = await cli(['changes', jobId, runId, '--type', 'added']);
    expect(changes.stdout.split('\n')[0]).toBe(
      `${runId} against (no base run): 15 added, 0 removed, 0 changed, 0 unchanged, 0 duplicate_keys`,
    );
    expect(changes.stdout.split('\n').filter((l) => l.startsWith('added'))).toHaveLength(15);
    const changed = JSON.parse((await cli(['changes', jobId, runId, '--type', 'changed', '--json'])).stdout);
    expect(changed).toEqual([]);
  });

  it('downloads exactly the bytes the API serves, to a file with a progress bar in bytes or to standard output', async () => {
    const direct = Buffer.from(
      await (
        await fetch(`${stack.baseUrl}/jobs/${jobId}/download?format=csv`, {
          headers: { Authorization: `Bearer ${key}` },
        })
      ).arrayBuffer(),
    );
    const ran = await cli(['results', 'download', jobId, '--format', 'csv', '-o', 'out.csv', '--progress']);
    expect(ran.code).toBe(0);
    expect((await readFile(join(dir, 'out.csv'))).equals(direct)).toBe(true);
    const size = formatBytes(direct.length);
    expect(ran.stdout).toBe(`out.csv: ${size} (text/csv; charset=utf-8)\n`);
    expect(ran.stderr.endsWith(`\rout.csv [${'#'.repeat(24)}] 100% ${size}\n`)).toBe(true);

    const piped = await cli(['results', 'download', jobId, '--format', 'csv']);
    expect(piped).toMatchObject({ code: 0, stdout: direct.toString('utf8'), stderr: '' });
  });
});

describe('a job that keeps documents', () => {
  let jobId: string;
  let runId: string;
  let pages: string[];

  beforeAll(async () => {
    pages = [1, 2].map((n) => `${site.url}/page/${n}`);
    jobId = await createJob({
      source: `${site.url}/page/[1-2]`,
      queries: [],
      formats: ['markdown', 'metadata'],
      content: { only_main_content: false },
      change_tracking: { key: [], content: true },
    });
    const ran = await cli(['jobs', 'run', jobId, '--wait', '--interval', '0.1', '--json']);
    runId = (JSON.parse(ran.stdout) as { run_id: string }).run_id;
    const client = new ScrapeJobs({ apiKey: key, baseUrl: stack.baseUrl });
    await until(async () => (await client.runs.get(jobId, runId)).changes, 15_000);
  });

  it('prints its documents as JSON Lines, as a JSON array, and one by --url', async () => {
    const lines = await cli(['documents', jobId, runId]);
    expect(lines).toMatchObject({ code: 0, stderr: '' });
    const documents = lines.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { url: string; markdown: string; metadata: { title: string } });
    expect(documents.map((d) => [d.url, d.metadata.title])).toEqual([
      [pages[0], 'Page 1'],
      [pages[1], 'Page 2'],
    ]);
    expect(documents[0]!.markdown).toContain('Item 0');

    const array = await cli(['documents', jobId, runId, '--format', 'json']);
    expect(JSON.parse(array.stdout)).toEqual(documents);
    expect(JSON.parse((await cli(['documents', jobId, runId, '--json'])).stdout)).toEqual(documents);
    const one = await cli(['documents', jobId, runId, '--url', pages[1]!, '--format', 'json']);
    expect(JSON.parse(one.stdout)).toEqual([documents[1]]);
    const first = await cli(['documents', jobId, runId, '--limit', '1']);
    expect(first.stdout).toBe(`${JSON.stringify(documents[0])}\n`);
  });

  it("prints each document's markdown under a # <url> line", async () => {
    const documents = JSON.parse((await cli(['documents', jobId, runId, '--json'])).stdout) as {
      url: string;
      markdown: string;
    }[];
    const ran = await cli(['documents', jobId, runId, '--format', 'markdown']);
    expect(ran).toMatchObject({ code: 0, stderr: '' });
    expect(ran.stdout).toBe(
      documents.map((d) => `# ${d.url}\n\n${d.markdown.replace(/\n+$/, '')}\n`).join('\n'),
    );
  });

  it('downloads its documents as JSON Lines, exactly the bytes the API serves', async () => {
    const direct = await (
      await fetch(`${stack.baseUrl}/jobs/${jobId}/download?content=documents&format=jsonl`, {
        headers: { Authorization: `Bearer ${key}` },
      })
    ).text();
    expect(direct.trimEnd().split('\n')).toHaveLength(2);
    const ran = await cli(['results', 'download', jobId, '--content', 'documents', '--format', 'jsonl']);
    expect(ran).toMatchObject({ code: 0, stdout: direct, stderr: '' });
    const refused = await cli(['results', 'download', jobId, '--content', 'documents', '--format', 'csv']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/^scrapejobs: validation_error \(HTTP 400\): .*format: /);
  });

  it("lists its pages' changes with their counts", async () => {
    const ran = await cli(['changes', jobId, runId]);
    const [summary, header, ...rows] = ran.stdout.trimEnd().split('\n');
    expect(summary).toBe(
      `${runId} against (no base run): 0 added, 0 removed, 0 changed, 0 unchanged, 0 duplicate_keys; pages: 2 added, 0 removed, 0 changed, 0 unchanged`,
    );
    expect(header).toMatch(/^TYPE\s+KIND\s+KEY\s+CHANGED_FIELDS\s+DATA$/);
    expect(rows.map((r) => r.split(/\s+/).slice(0, 3))).toEqual(pages.map((url) => ['added', 'page', url]));
  });
});

describe('webhooks', () => {
  it('are created, listed, tested and their deliveries listed', async () => {
    const receiver = await startReceiver();
    try {
      const created = await cli(
        ['webhooks', 'create', '--url', receiver.url, '--events', 'job.completed,job.failed', '--json'],
        { env: { SCRAPEJOBS_WEBHOOK_SECRET: 'cli-test-secret-0123456789' } },
      );
      expect(created.code).toBe(0);
      const hook = JSON.parse(created.stdout) as { webhook_id: string };
      expect(hook).toMatchObject({
        url: receiver.url,
        events: ['job.completed', 'job.failed'],
        active: true,
      });
      const list = await cli(['webhooks', 'list']);
      expect(list.stdout).toMatch(
        new RegExp(
          `^${hook.webhook_id}\\s+true\\s+job.completed,job.failed\\s+\\S+\\s+${receiver.url}$`,
          'm',
        ),
      );

      const tested = await cli(['webhooks', 'test', hook.webhook_id]);
      expect(tested.stdout).toMatch(/^dlv_\w+ queued \(webhook\.test, event evt_\w+\)\n$/);
      const deliveries = JSON.parse(
        (await cli(['webhooks', 'deliveries', hook.webhook_id, '--json'])).stdout,
      );
      expect(deliveries).toEqual([
        expect.objectContaining({ webhook_id: hook.webhook_id, event: 'webhook.test' }),
      ]);
    } finally {
      await receiver.close();
    }
  });
});

describe(`built for Node 20 and up (run with ${OLDER_NODE})`, () => {
  it('runs on an older Node: creates a job, runs it to its end and downloads its records', async () => {
    const out = join(dir, 'dist');
    const build = join(ROOT, 'packages/client/tsconfig.build.json');
    // The build's own settings; the root type-check has checked its types already.
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const flags = ['--outDir', out, '--noCheck', '--declaration', 'false'];
    await promisify(execFile)(process.execPath, [tsc, '-p', build, ...flags]);
    const built = (args: string[]) => cli(args, { bin: [OLDER_NODE, join(out, 'cli.js')] });

    await write('job.json', job({ source: `${site.url}/page/[1-2]` }));
    const created = await built(['jobs', 'create', '-f', 'job.json', '--json']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const { job_id: jobId } = JSON.parse(created.stdout) as { job_id: string };
    const ran = await built(['jobs', 'run', jobId, '--wait', '--interval', '0.1', '--progress']);
    expect(ran).toMatchObject({ code: 0, stdout: expect.stringMatching(/ success: 6 results/) });
    expect(ran.stderr).toContain('100% 2/2 URLs');
    const downloaded = await built(['results', 'download', jobId, '--format', 'sql']);
    expect(downloaded.code).toBe(0);
    expect(downloaded.stdout).toMatch(/^CREATE TABLE IF NOT EXISTS "scrape_results"/m);
  }, 30_000);
});
