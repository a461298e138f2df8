import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { REDIS_URL } from './redis.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

export interface Proc {
  child: ChildProcess;
  /** JSON log lines printed so far. */
  logs: Record<string, unknown>[];
  waitForLog(
    match: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** The environment of a scraper worker on a test's database and queue prefix, fetching from local sites. */
export const scraperWorkerEnv = (
  databaseUrl: string,
  queuePrefix: string,
  over: Record<string, string> = {},
) => ({
  DATABASE_URL: databaseUrl,
  REDIS_URL,
  QUEUE_PREFIX: queuePrefix,
  ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
  PUBLIC_BASE_URL: 'https://scrape.example.com',
  ...over,
});

/** Processes of this test file still running: SIGKILLed after its tests (test/after-file.ts). */
const running = new Set<ChildProcess>();

/**
 * Ends what a test file left running: a process whose test failed before stopping it would
 * otherwise hold jest open after the suite, its pipes being open handles.
 */
export async function killStragglers(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    }),
  );
}

/** How long a signalled process may take to exit before it is SIGKILLed. */
const EXIT_GRACE_MS = 20_000;

/** Starts one of the apps as a real process (`apps/<app>/src/main.ts`) with extra environment. */
export function startApp(app: string, env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [`${ROOT}apps/${app}/src/main.ts`], {
    env: { ...process.env, LOG_LEVEL: 'info', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const logs: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line));
      } catch {
        logs.push({ raw: line });
      }
    }
    for (const w of waiters) w();
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      running.delete(child);
      if (code && stderr) process.stderr.write(`[${app}] ${stderr}\n`);
      resolve(code);
    }),
  );
  return {
    child,
    logs,
    exited,
    waitForLog(match, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = logs.find(match);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching log line from ${app} within ${timeoutMs} ms; stderr: ${stderr}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      // A process that does not exit on its signal is a failure of its test, never a hang of the suite.
      const stuck = setTimeout(() => child.kill('SIGKILL'), EXIT_GRACE_MS);
      const code = await exited;
      clearTimeout(stuck);
      return code;
    },
  };
}

export async function until<T>(
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 15_000,
  stepMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago, for a process that must be told its port. */
export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as { port: number };
  srv.close();
  await once(srv, 'close');
  return port;
}

/** The live child processes of `pid` whose command line holds `marker`, read from /proc: their pids. */
export function childProcesses(pid: number, marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent pid is the 2nd field after the command name, which may hold spaces.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) !== pid || state === 'Z') continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // It ended while it was read.
    }
  }
  return found;
}

/** The live child processes of `pid` that extract a taken-over URL (docs/api.md §16.2). */
export const extractionProcesses = (pid: number): number[] => childProcesses(pid, 'extract/process.ts');

/** Whether a process of this pid is alive (a zombie is not). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
