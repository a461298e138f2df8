import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { abortReason, SandboxError, TaskError } from './pool.ts';

/** What a task's process answers: that it is loaded, then the task's value or the error it threw. */
type ProcessReply =
  | { ready: true }
  | { ok: true; value: unknown }
  | { ok: false; error: { name: string; message: string; fields: Record<string, unknown> } };

/** How long a process may take to load its code (a busy machine is slow); a load that hangs still ends. */
const LOAD_LIMIT_MS = 30_000;
/** Its stderr kept, to tell a V8 heap limit from other fatal errors. */
const STDERR_KEPT = 4_096;
/** Signals that stop processes for reasons of their own (a shutdown, a terminal): never the task's. */
const STOPPING = new Set<NodeJS.Signals>(['SIGTERM', 'SIGINT', 'SIGHUP']);

/**
 * A task's process ended for a reason that is not the task's: stopped by someone else (the SIGTERM
 * of a shutdown), or ended before the task was sent to it (its load failed or hung).
 */
export class ProcessStopped extends Error {
  override readonly name = 'ProcessStopped';
}

export interface ProcessTaskOptions {
  /** The process's module; it calls `serveProcessTask`. */
  entry: URL;
  /** Wall time of the task; the process should stop itself then. One still busy `graceMs` later is killed. */
  timeLimitMs: number;
  graceMs?: number;
  /** V8 heap of the whole process (its own code included); past it V8 ends the process. */
  memoryMb: number;
  /** Given to the process as its first argument, as JSON. */
  settings?: unknown;
  signal?: AbortSignal | undefined;
}

/**
 * Runs one task in a child process of its own, started for it and ended after it: a native abort,
 * a fault or memory outside V8's heap ends only that process. The task's value (structured-cloned)
 * comes back, or a TaskError when its code threw. A death of the process is a SandboxError naming
 * why (`time`: killed here past its limit; `memory`: past its heap; `crash`: a signal, a V8 fatal
 * error or an exit without an answer), except a stop by SIGTERM, SIGINT or SIGHUP and an end
 * before the task was sent, which say nothing about the task (ProcessStopped). The process ends
 * by itself when this one goes.
 */
export function runInProcess<In, Out>(input: In, options: ProcessTaskOptions): Promise<Out> {
  const { entry, timeLimitMs, graceMs = 1_000, memoryMb, settings, signal } = options;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  const { promise, resolve, reject } = Promise.withResolvers<Out>();
  const child = fork(fileURLToPath(entry), [JSON.stringify(settings ?? null)], {
    execArgv: [
      ...process.execArgv.filter((arg) => !/^--max-(old|semi)-space-size/.test(arg)),
      `--max-old-space-size=${memoryMb}`,
    ],
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-STDERR_KEPT);
  });
  let settled = false;
  let sent = false;
  let ending: 'time' | 'abort' | null = null;
  const settle = (end: () => void) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    end();
  };
  const kill = (why: 'time' | 'abort') => {
    ending = why;
    child.kill('SIGKILL');
  };
  const onAbort = () => {
    kill('abort');
    settle(() => reject(abortReason(signal)));
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer = setTimeout(() => kill('time'), LOAD_LIMIT_MS);
  child.on('message', (reply: ProcessReply) => {
    if ('ready' in reply) {
      // The task's clock starts once the process is loaded.
      clearTimeout(timer);
      timer = setTimeout(() => kill('time'), timeLimitMs + graceMs);
      sent = true;
      child.send(input as object, (err) => {
        if (err && !settled) kill('abort');
      });
      return;
    }
    settle(() =>
      reply.ok
        ? resolve(reply.value as Out)
        : reject(new TaskError(reply.error.name, reply.error.message, reply.error.fields)),
    );
    // The process has nothing more to do.
    child.kill('SIGKILL');
  });
  child.on('error', (err) => settle(() => reject(err)));
  child.on('exit', (code, exitSignal) =>
    settle(() =>
      reject(
        sent
          ? deathOf(code, exitSignal, ending, stderr, options)
          : new ProcessStopped(`its process ended while it loaded (${exitSignal ?? `code ${code}`})`),
      ),
    ),
  );
  return promise;
}

/** Why a task's process ended before it answered. */
function deathOf(
  code: number | null,
  signal: NodeJS.Signals | null,
  ending: 'time' | 'abort' | null,
  stderr: string,
  { timeLimitMs, memoryMb }: ProcessTaskOptions,
): Error {
  if (ending === 'time') return new SandboxError('time', `exceeded its time limit of ${timeLimitMs} ms`);
  if (signal && STOPPING.has(signal)) return new ProcessStopped(`its process was stopped by ${signal}`);
  if (/heap out of memory|Reached heap limit/i.test(stderr))
    return new SandboxError('memory', `exceeded its memory limit of ${memoryMb} MB`);
  const fatal = stderr.match(/FATAL ERROR: (.*)/)?.[1]?.trim();
  const how = signal ? `was ended by ${signal}` : `exited with code ${code} without answering`;
  return new SandboxError('crash', `its process ${how}${fatal ? ` (${fatal})` : ''}`);
}

/** Own enumerable fields of an error that survive structured cloning (code, limit, …). */
function fieldsOf(err: object): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(err))
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  return fields;
}

/**
 * The child side of `runInProcess`: answers the one task it is sent with `handler`'s value, or
 * the error it threw. It asks the kernel to end it before any other process when memory runs
 * out, and exits as soon as its parent goes (its IPC channel closes).
 */
export function serveProcessTask<In, Out>(handler: (input: In) => Out | Promise<Out>): void {
  const send = process.send?.bind(process);
  if (!send) throw new Error('serveProcessTask must run in a process started by runInProcess');
  try {
    // Best effort: raising one's own score needs no privilege, but /proc may be missing.
    writeFileSync('/proc/self/oom_score_adj', '1000');
  } catch {}
  process.on('disconnect', () => process.exit(0));
  process.once('message', async (input: In) => {
    let reply: ProcessReply;
    try {
      reply = { ok: true, value: await handler(input) };
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      reply = { ok: false, error: { name: error.name, message: error.message, fields: fieldsOf(error) } };
    }
    send(reply);
  });
  send({ ready: true } satisfies ProcessReply);
}
