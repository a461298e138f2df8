// The README's examples, run: its TypeScript blocks against the real API and workers (the shop
// they scrape is a local site), its command lines through the tool's parser, its curl lines
// against the API's endpoints, its job.json through the API's schema, its exit codes.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createJobSchema } from '@scrapejobs/contracts';
import { freePort, until } from '../../../test/support/processes.ts';
import { startSite } from '../../../test/support/site.ts';
import { ScrapeJobs } from './index.ts';
import { EXIT } from './internal/cli/command.ts';
import { parseCommandLine } from './internal/cli/main.ts';
import { ENDPOINTS } from './testing/endpoints.ts';
import { type Stack, startStack } from './testing/stack.ts';

const README = new URL('../README.md', import.meta.url).pathname;
const INDEX = new URL('./index.ts', import.meta.url).pathname;
const CLI = new URL('./cli.ts', import.meta.url).pathname;
const SHOP = 'https://shop.example';

let readme: string;
let stack: Stack;
let site: Awaited<ReturnType<typeof startSite>>;
let dir: string;
let key: string;

beforeAll(async () => {
  [readme, stack, site, dir] = await Promise.all([
    readFile(README, 'utf8'),
    startStack({ workers: ['scraper-worker', 'webhook-worker'] }),
    startSite(),
    mkdtemp(join(tmpdir(), 'scrapejobs-readme-')),
  ]);
  key = await stack.key();
});

afterAll(async () => {
  await stack?.stop();
  await site?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The contents of the README's fenced blocks in `lang`, in order. */
const blocks = (lang: string) =>
  [...readme.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)]
    .filter(([, l]) => l === lang)
    .map(([, , code]) => code!);

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function collect(child: ChildProcess): { output: Ran; done: Promise<Ran> } {
  const output: Ran = { code: null, stdout: '', stderr: '' };
  child.stdout!.on('data', (c: Buffer) => {
    output.stdout += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => {
    output.stderr += c.toString();
  });
  const done = new Promise<Ran>((resolve) =>
    child.on('close', (code) => {
      output.code = code;
      resolve(output);
    }),
  );
  return { output, done };
}

/** A README block as a script of its own: the package imported from source, the shop made local. */
async function script(name: string, code: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(
    path,
    code.replaceAll("'@scrapejobs/client'", JSON.stringify(INDEX)).replaceAll(SHOP, site.url),
  );
  return path;
}

const envFor = (over: Record<string, string> = {}) => ({
  PATH: process.env.PATH,
  SCRAPEJOBS_API_KEY: key,
  SCRAPEJOBS_BASE_URL: stack.baseUrl,
  ...over,
});

describe('the README', () => {
  it('runs its client examples in order: a job created, run, read and downloaded, its pages read, a refusal, a patient client', async () => {
    const examples = blocks('ts').filter((code) => !code.includes('createServer('));
    expect(examples).toHaveLength(5);
    const path = await script('examples.ts', examples.join('\n'));
    const ran = await collect(spawn(process.execPath, [path], { cwd: dir, env: envFor() })).done;
    expect(ran.code).toBe(0);

    const lines = ran.stdout.split('\n');
    expect(lines[0]).toBe('run success: 9 records');
    const records = lines.slice(1, 10);
    expect(records).toHaveLength(9);
    for (const line of records) expect(line).toMatch(new RegExp(`^${site.url}/page/[1-3] Item [0-2] \\d+$`));
    const csv = await readFile(join(dir, 'records.csv'), 'utf8');
    expect(csv.split('\r\n')[0]).toBe('url,scraped_at,title,price');
    expect(ran.stdout).toContain(`records.csv: ${Buffer.byteLength(csv)} bytes of text/csv; charset=utf-8`);
    expect(ran.stderr).toMatch(new RegExp(`\\r${Buffer.byteLength(csv)} bytes$`));
    const pages = lines.filter((line) => line.includes('“Page '));
    expect(pages).toEqual([1, 2, 3].map((n) => `${site.url}/page/${n}: “Page ${n}”, 3 links`));
    expect(ran.stdout).toMatch(
      /validation_error 400 \{\s+source: 'must be an absolute http or https URL',\s+queries: /,
    );
    expect(ran.stdout).toContain('1 job on the first page');
  });

  it('runs its webhook receiver, which accepts a real delivery and refuses a forged one', async () => {
    const [example] = blocks('ts').filter((code) => code.includes('createServer('));
    const port = await freePort();
    const secret = 'readme-webhook-secret-0123456789';
    const path = await script('receiver.ts', example!);
    const child = spawn(process.execPath, [path], {
      cwd: dir,
      env: envFor({ PORT: String(port), WEBHOOK_SECRET: secret }),
    });
    const { output } = collect(child);
    try {
      const url = `http://127.0.0.1:${port}/hooks`;
      const forged = () =>
        fetch(url, {
          method: 'POST',
          body: '{"id":"evt_x","event":"webhook.test","timestamp":"2026-01-01T00:00:00.000Z","data":{}}',
          headers: {
            'webhook-id': 'evt_x',
            'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
            'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}`,
          },
        }).catch(() => null);
      expect((await until(forged, 10_000, 50)).status).toBe(401);

      const client = new ScrapeJobs({ apiKey: key, baseUrl: stack.baseUrl });
      const hook = await client.webhooks.create({ url, events: ['job.completed'], secret });
      const delivery = await client.webhooks.test(hook.webhook_id);
      await until(async () => output.stdout.includes(`webhook.test ${delivery.event_id}\n`));
      const [latest] = (await client.webhooks.deliveries(hook.webhook_id)).deliveries;
      expect(latest).toMatchObject({ delivery_id: delivery.delivery_id, status: 'succeeded' });
      expect(output.stderr).toBe('');
    } finally {
      child.kill();
    }
  });

  it('shows a job.json the API accepts, command lines the tool accepts, and curl lines of real endpoints', () => {
    const [job] = blocks('json');
    expect(createJobSchema.safeParse(JSON.parse(job!)).success).toBe(true);

    const sh = blocks('sh').flatMap((code) => code.split('\n'));
    const words = (line: string) =>
      [...line.matchAll(/"[^"]*"|'[^']*'|\S+/g)].map(([w]) => w.replace(/^(["'])(.*)\1$/, '$2'));
    const commands = sh.filter((l) => /^(\$ )?scrapejobs /.test(l));
    expect(commands.length).toBeGreaterThanOrEqual(10);
    for (const line of commands) {
      const argv = words(line.replace(/^\$ /, '')).slice(1);
      expect(() => parseCommandLine(argv)).not.toThrow();
    }

    const patterns = Object.keys(ENDPOINTS).map((name) => {
      const [method, path] = name.split(' ');
      return { method, path: new RegExp(`^${path!.replace(/\{\w+\}/g, '[^/]+')}$`) };
    });
    const curls = sh.filter((l) => l.startsWith('curl '));
    expect(curls.length).toBeGreaterThanOrEqual(10);
    for (const line of curls) {
      const method = / -X (\w+)/.exec(line)?.[1] ?? 'GET';
      const path = /"\$SCRAPEJOBS_BASE_URL([^"?]+)/.exec(line)?.[1];
      const known = patterns.some((p) => p.method === method && p.path.test(path ?? ''));
      expect({ line, known }).toEqual({ line, known: true });
    }
  });

  it('documents the exit codes the tool uses, and shows one refusal exactly as the tool prints it', async () => {
    const table = [...readme.matchAll(/^\| (\d+)\s+\|/gm)].map(([, code]) => Number(code));
    expect(table.sort((a, b) => a - b)).toEqual(Object.values(EXIT).sort((a, b) => a - b));

    const session = blocks('sh')
      .find((code) => code.includes('$ echo $?'))!
      .split('\n');
    let last: Ran | undefined;
    for (let i = 0; i < session.length; i++) {
      const line = session[i]!;
      const written = /^\$ echo '(.*)' > (\S+)$/.exec(line);
      if (written) await writeFile(join(dir, written[2]!), `${written[1]}\n`);
      else if (line === '$ echo $?') expect(String(last?.code)).toBe(session[++i]);
      else if (line.startsWith('$ scrapejobs ')) {
        const argv = line.slice('$ scrapejobs '.length).split(' ');
        last = await collect(spawn(process.execPath, [CLI, ...argv], { cwd: dir, env: envFor() })).done;
        expect(last.stdout + last.stderr).toBe(`${session[i + 1]}\n`);
      }
    }
    expect(last).toBeDefined();
    expect(existsSync(join(dir, 'job.json'))).toBe(true);
  });
});
