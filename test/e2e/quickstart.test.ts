import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { freePort, until } from '../support/processes.ts';
import { REDIS_URL, testPrefix } from '../support/redis.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const sh = promisify(execFile);
let tdb: TestDatabase;
const prefix = testPrefix();

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
  await prefix.cleanup();
});

const answers = async (url: string) => (await fetch(url).catch(() => null))?.status === 200;

describe('the README start command (scripts/start.sh)', () => {
  let script: ChildProcess | undefined;
  afterEach(() => {
    script?.kill('SIGKILL');
  });

  it('runs the API and both workers, prints a key and curls that work as printed, and stops them all on SIGTERM', async () => {
    const [port, scraperMetrics, webhookMetrics] = [await freePort(), await freePort(), await freePort()];
    script = spawn('bash', ['scripts/start.sh'], {
      cwd: ROOT,
      env: {
        ...process.env,
        START_SKIP_SETUP: '1',
        DATABASE_URL: tdb.url,
        REDIS_URL,
        QUEUE_PREFIX: prefix.prefix,
        PORT: String(port),
        SCRAPER_METRICS_PORT: String(scraperMetrics),
        WEBHOOK_METRICS_PORT: String(webhookMetrics),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    script.stdout!.on('data', (c: Buffer) => {
      output += c.toString();
    });
    script.stderr!.on('data', (c: Buffer) => {
      output += c.toString();
    });
    const exited = once(script, 'exit');
    await until(async () => output.includes('Ctrl-C stops everything'), 60_000, 200);

    expect(output).toMatch(/sk_test_[A-Za-z0-9]{24,64}/);
    // The curl lines exactly as printed, continuation included.
    const printed = output.slice(output.indexOf('Try it:'), output.indexOf('Ctrl-C'));
    const commands = printed
      .replace(/\\\n\s*/g, '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith('curl '));
    expect(commands).toHaveLength(2);
    const created = JSON.parse((await sh('bash', ['-c', commands[0]!])).stdout);
    expect(created).toEqual(expect.objectContaining({ name: 'Example', status: 'scheduled' }));
    const listed = JSON.parse((await sh('bash', ['-c', commands[1]!])).stdout);
    expect(listed.jobs.map((j: { job_id: string }) => j.job_id)).toEqual([created.job_id]);

    // Both workers run beside the API, each with its own ops port.
    await until(async () => (await answers(`http://127.0.0.1:${scraperMetrics}/ready`)) || null, 15_000);
    await until(async () => (await answers(`http://127.0.0.1:${webhookMetrics}/ready`)) || null, 15_000);

    script.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
    for (const p of [port, scraperMetrics, webhookMetrics])
      expect(await answers(`http://127.0.0.1:${p}/health`)).toBe(false);
  });
});
