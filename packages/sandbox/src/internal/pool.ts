import { type Transferable, Worker } from 'node:worker_threads';
import type { ReplyMessage, TaskMessage } from './protocol.ts';

/** Which limit ended a thread: wall time, heap, or the thread died some other way. */
export type SandboxLimit = 'time' | 'memory' | 'crash';

/** A task whose thread was terminated: past its wall time or heap limit, or crashed. */
export class SandboxError extends Error {
  override readonly name = 'SandboxError';
  readonly limit: SandboxLimit;
  constructor(limit: SandboxLimit, message: string) {
    super(message);
    this.limit = limit;
  }
}

/** An error thrown by the task's own code inside the thread, rebuilt here with its plain fields. */
export class TaskError extends Error {
  readonly fields: Readonly<Record<string, unknown>>;
  constructor(name: string, message: string, fields: Record<string, unknown>) {
    super(message);
    this.name = name;
    this.fields = fields;
  }
}

export interface SandboxPoolOptions {
  /** The thread's module; it calls `serveTasks`. */
  entry: URL;
  /** Threads at most; they start on demand and are kept. */
  threads: number;
  /**
   * Wall time of one task. The thread should stop itself at this limit (and answer with an error
   * of its own); one still busy `graceMs` later is terminated and replaced.
   */
  timeLimitMs: number;
  graceMs?: number;
  /** Old-generation heap of each thread; a thread past it is ended by V8 and replaced. */
  memoryMb: number;
  workerData?: unknown;
  /** Told of every thread the pool had to end or lost, for logs and metrics. */
  onThreadEnd?: (limit: SandboxLimit) => void;
}

interface Task {
  owner: string;
  input: unknown;
  transfer: Transferable[];
  signal: AbortSignal | undefined;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  onAbort: () => void;
}

interface Thread {
  worker: Worker;
  task: Task | null;
  timer: NodeJS.Timeout | null;
  /** Set when this pool ended the thread, so its exit is not reported again. */
  ending: SandboxLimit | 'abort' | 'close' | null;
}

/**
 * A pool of worker threads that run untrusted work (a user's queries on a user's page) off the
 * event loop, each task bounded in wall time and heap. A thread past a limit is terminated and
 * replaced; its task fails with a SandboxError, and nothing else in the process notices.
 *
 * Tasks belong to owners (users). With two threads or more, one owner never holds them all, so
 * another owner's task never waits behind slow ones; a free thread goes to the waiting task whose
 * owner runs the fewest, the oldest first.
 */
export class SandboxPool<In, Out> {
  readonly #options: Required<Omit<SandboxPoolOptions, 'workerData' | 'onThreadEnd'>> &
    Pick<SandboxPoolOptions, 'workerData' | 'onThreadEnd'>;
  readonly #threads = new Set<Thread>();
  readonly #queue: Task[] = [];
  #started = 0;
  #closed = false;

  constructor(options: SandboxPoolOptions) {
    this.#options = { graceMs: 1_000, ...options };
  }

  /** Threads running a task, tasks waiting for one, threads in all, and threads started so far. */
  stats(): { busy: number; queued: number; threads: number; started: number } {
    let busy = 0;
    for (const thread of this.#threads) if (thread.task) busy++;
    return { busy, queued: this.#queue.length, threads: this.#threads.size, started: this.#started };
  }

  /** Runs one of `owner`'s tasks on a free thread; an abort takes it off the queue or ends its thread. */
  run(
    owner: string,
    input: In,
    opts: { signal?: AbortSignal | undefined; transfer?: Transferable[] } = {},
  ): Promise<Out> {
    if (this.#closed) return Promise.reject(new Error('the sandbox pool is closed'));
    const { signal } = opts;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Out>((resolve, reject) => {
      const task: Task = {
        owner,
        input,
        transfer: opts.transfer ?? [],
        signal,
        resolve: resolve as (value: unknown) => void,
        reject,
        onAbort: () => this.#abort(task),
      };
      signal?.addEventListener('abort', task.onAbort, { once: true });
      this.#queue.push(task);
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const task of this.#queue.splice(0)) this.#settle(task, new Error('the sandbox pool is closed'));
    await Promise.all(
      [...this.#threads].map((thread) => {
        thread.ending = 'close';
        const task = thread.task;
        this.#release(thread);
        if (task) this.#settle(task, new Error('the sandbox pool is closed'));
        return thread.worker.terminate();
      }),
    );
  }

  #dispatch(): void {
    for (;;) {
      const next = this.#nextTask();
      if (next < 0) return;
      const thread = this.#idleThread();
      if (!thread) return;
      const [task] = this.#queue.splice(next, 1) as [Task];
      thread.task = task;
      thread.worker.ref();
      const { timeLimitMs, graceMs } = this.#options;
      thread.timer = setTimeout(
        () => this.#end(thread, 'time', `exceeded its time limit of ${timeLimitMs} ms`),
        timeLimitMs + graceMs,
      );
      thread.worker.postMessage({ input: task.input } satisfies TaskMessage, task.transfer);
    }
  }

  /** Index of the queued task to run next, or -1 when none may run now. */
  #nextTask(): number {
    // Tasks sharing one signal abort one by one: one whose abort has not been handled yet must not
    // take the thread an earlier one just freed (a new thread for each, ended at once).
    for (const task of this.#queue.filter((t) => t.signal?.aborted)) this.#abort(task);
    const running = new Map<string, number>();
    for (const thread of this.#threads) {
      if (thread.task) running.set(thread.task.owner, (running.get(thread.task.owner) ?? 0) + 1);
    }
    const cap = Math.max(1, this.#options.threads - 1);
    let best = -1;
    let fewest = Number.POSITIVE_INFINITY;
    this.#queue.forEach((task, index) => {
      const count = running.get(task.owner) ?? 0;
      if (count < cap && count < fewest) {
        best = index;
        fewest = count;
      }
    });
    return best;
  }

  #idleThread(): Thread | null {
    for (const thread of this.#threads) if (!thread.task && !thread.ending) return thread;
    if (this.#threads.size >= this.#options.threads) return null;
    return this.#spawn();
  }

  #spawn(): Thread {
    const { entry, memoryMb, workerData } = this.#options;
    this.#started++;
    const worker = new Worker(entry, {
      workerData,
      resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: Math.min(16, memoryMb) },
    });
    // An idle thread never keeps its process alive; a busy one does.
    worker.unref();
    const thread: Thread = { worker, task: null, timer: null, ending: null };
    this.#threads.add(thread);
    worker.on('message', (reply: ReplyMessage) => {
      const task = thread.task;
      if (!task) return;
      this.#release(thread);
      if (reply.ok) this.#settle(task, null, reply.value);
      else this.#settle(task, new TaskError(reply.error.name, reply.error.message, reply.error.fields));
      this.#dispatch();
    });
    worker.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY')
        this.#end(thread, 'memory', `exceeded its memory limit of ${memoryMb} MB`);
      else this.#end(thread, 'crash', `its thread failed: ${err.message}`);
    });
    worker.on('exit', () => {
      if (!thread.ending) this.#end(thread, 'crash', 'its thread exited');
    });
    return thread;
  }

  #release(thread: Thread): void {
    if (thread.timer) clearTimeout(thread.timer);
    thread.timer = null;
    thread.task = null;
    thread.worker.unref();
  }

  /** Ends a thread (terminating it if it still runs), fails its task, and frees its place for a new one. */
  #end(thread: Thread, why: SandboxLimit | 'abort', message: string): void {
    if (thread.ending) return;
    thread.ending = why;
    const task = thread.task;
    this.#release(thread);
    this.#threads.delete(thread);
    void thread.worker.terminate();
    if (why !== 'abort') this.#options.onThreadEnd?.(why);
    if (task) this.#settle(task, why === 'abort' ? task.signal?.reason : new SandboxError(why, message));
    if (!this.#closed) this.#dispatch();
  }

  #abort(task: Task): void {
    const queued = this.#queue.indexOf(task);
    if (queued >= 0) {
      this.#queue.splice(queued, 1);
      this.#settle(task, task.signal?.reason);
      return;
    }
    for (const thread of this.#threads) if (thread.task === task) this.#end(thread, 'abort', 'aborted');
  }

  #settle(task: Task, err: unknown, value?: unknown): void {
    task.signal?.removeEventListener('abort', task.onAbort);
    if (err) task.reject(err);
    else task.resolve(value);
  }
}
