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

/** A task given to a thread: the first one runs; one sent ahead waits there for its turn. */
interface Sent {
  task: Task;
  /** For a task sent ahead: the ticket the thread or the pool takes out of the thread's slot. */
  ticket: number;
  /** Settled or taken back here: the thread's answer to it is dropped. */
  dropped: boolean;
}

interface Thread {
  worker: Worker;
  /** In the order the thread answers them. */
  sent: Sent[];
  /** Holds the ticket of the task sent ahead until the thread starts it or the pool takes it back. */
  slot: Int32Array;
  timer: NodeJS.Timeout | null;
  /** Set when this pool ended the thread, so its exit is not reported again. */
  ending: SandboxLimit | 'abort' | 'close' | null;
  /** Settles once the thread's code is loaded, or it ended. */
  ready: Promise<void>;
  loaded: () => void;
  /** Its code is loaded: a task's clock runs from when it is sent. */
  isLoaded: boolean;
}

/**
 * What a thread still loading its code gets beyond a task's limits: a task waiting for the load
 * is not running yet (the clock starts again once it is loaded); a load that hangs still ends.
 */
const LOAD_ALLOWANCE_MS = 10_000;

/**
 * A pool of worker threads that run untrusted work (a user's queries on a user's page) off the
 * event loop, each task bounded in wall time and heap. A thread past a limit is terminated and
 * replaced; its task fails with a SandboxError, and nothing else in the process notices.
 *
 * Tasks belong to owners (users). With two threads or more, one owner never holds them all, so
 * another owner's task never waits behind slow ones; a free thread goes to the waiting task whose
 * owner runs the fewest, the oldest first.
 *
 * While only one owner waits and it holds all the threads it may, each of its threads gets its
 * next task ahead (a copy of the input), so that the thread starts it without waiting for this
 * thread's event loop to hear of the one before. As soon as another owner's task waits, the tasks
 * sent ahead that have not started are taken back and wait in the queue again.
 */
export class SandboxPool<In, Out> {
  readonly #options: Required<Omit<SandboxPoolOptions, 'workerData' | 'onThreadEnd'>> &
    Pick<SandboxPoolOptions, 'workerData' | 'onThreadEnd'>;
  readonly #threads = new Set<Thread>();
  readonly #queue: Task[] = [];
  #started = 0;
  #tickets = 0;
  #closed = false;

  constructor(options: SandboxPoolOptions) {
    this.#options = { graceMs: 1_000, ...options };
  }

  /** Threads running a task, tasks waiting for one (here or sent ahead), threads in all, and threads started so far. */
  stats(): { busy: number; queued: number; threads: number; started: number } {
    let busy = 0;
    let ahead = 0;
    for (const thread of this.#threads) {
      const live = thread.sent.filter((sent) => !sent.dropped).length;
      if (live > 0) busy++;
      ahead += Math.max(0, live - 1);
    }
    return { busy, queued: this.#queue.length + ahead, threads: this.#threads.size, started: this.#started };
  }

  /**
   * Resolves once the thread the next task would get has loaded its code (one is started when none
   * is free and there is room), so that the task's wall time is its own, not a thread's start.
   */
  async ready(): Promise<void> {
    if (this.#closed) return;
    await this.#idleThread()?.ready;
  }

  /** Runs one of `owner`'s tasks on a free thread; an abort takes it off the queue or ends its thread. */
  run(
    owner: string,
    input: In,
    opts: { signal?: AbortSignal | undefined; transfer?: Transferable[] } = {},
  ): Promise<Out> {
    if (this.#closed) return Promise.reject(new Error('the sandbox pool is closed'));
    const { signal } = opts;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
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
    for (const task of this.#queue.splice(0)) this.#fail(task, new Error('the sandbox pool is closed'));
    await Promise.all(
      [...this.#threads].map((thread) => {
        thread.ending = 'close';
        thread.loaded();
        for (const sent of this.#clear(thread))
          this.#fail(sent.task, new Error('the sandbox pool is closed'));
        return thread.worker.terminate();
      }),
    );
  }

  #dispatch(): void {
    // Tasks sharing one signal abort one by one: one whose abort has not been handled yet must not
    // take the thread an earlier one just freed (a new thread for each, ended at once).
    for (const task of this.#queue.filter((t) => t.signal?.aborted)) this.#abort(task);
    this.#takeBackForOthers();
    const running = this.#running();
    for (;;) {
      const next = this.#nextTask(running);
      if (next < 0) break;
      const thread = this.#idleThread();
      if (!thread) break;
      const [task] = this.#queue.splice(next, 1) as [Task];
      running.set(task.owner, (running.get(task.owner) ?? 0) + 1);
      thread.sent.push({ task, ticket: 0, dropped: false });
      this.#begin(thread);
      thread.worker.ref();
      thread.worker.postMessage({ input: task.input } satisfies TaskMessage, task.transfer);
    }
    const owner = this.#waitingAlone(running);
    if (owner !== null) this.#sendAhead(owner);
  }

  /** Threads running a task of each owner. */
  #running(): Map<string, number> {
    const running = new Map<string, number>();
    for (const thread of this.#threads) {
      const first = thread.sent.find((sent) => !sent.dropped);
      if (first) running.set(first.task.owner, (running.get(first.task.owner) ?? 0) + 1);
    }
    return running;
  }

  /** The owner of every waiting task when there is one and it holds all the threads it may; else null. */
  #waitingAlone(running: Map<string, number>): string | null {
    const owner = this.#queue[0]?.owner;
    if (owner === undefined || this.#queue.some((task) => task.owner !== owner)) return null;
    return (running.get(owner) ?? 0) >= this.#cap() ? owner : null;
  }

  #cap(): number {
    return Math.max(1, this.#options.threads - 1);
  }

  /** Index of the queued task to run next, or -1 when none may run now. */
  #nextTask(running: Map<string, number>): number {
    const cap = this.#cap();
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

  /** Sends the owner's next waiting task ahead to each of its threads that runs one task. */
  #sendAhead(owner: string): void {
    for (const thread of this.#threads) {
      const next = this.#queue.findIndex((task) => task.owner === owner);
      if (next < 0) return;
      if (thread.ending || thread.sent.length !== 1 || thread.sent[0]!.task.owner !== owner) continue;
      // The slot holds one ticket: the task before, if it was sent ahead too, must have taken its own.
      if (Atomics.load(thread.slot, 0) !== 0) continue;
      const [task] = this.#queue.splice(next, 1) as [Task];
      const ticket = ++this.#tickets;
      Atomics.store(thread.slot, 0, ticket);
      thread.sent.push({ task, ticket, dropped: false });
      // A copy: the input stays here, for the queue if the task is taken back.
      thread.worker.postMessage({
        input: task.input,
        ahead: { slot: thread.slot, ticket },
      } satisfies TaskMessage);
    }
  }

  /**
   * When a task of another owner waits, takes back every task sent ahead that its thread has not
   * started: they wait in the queue again, first.
   */
  #takeBackForOthers(): void {
    const ahead = [...this.#threads].flatMap((thread) =>
      thread.sent.filter((sent) => sent.ticket !== 0 && !sent.dropped).map((sent) => ({ thread, sent })),
    );
    if (ahead.length === 0) return;
    const owners = new Set(ahead.map(({ sent }) => sent.task.owner));
    if (this.#queue.every((task) => owners.has(task.owner))) return;
    const back = ahead
      .filter(({ thread, sent }) => this.#takeBackOne(thread, sent))
      .map(({ sent }) => sent.task);
    this.#queue.unshift(...back);
  }

  /** True when `sent` was a task sent ahead that had not started: its answer is dropped. */
  #takeBackOne(thread: Thread, sent: Sent): boolean {
    if (sent.dropped || sent.ticket === 0) return false;
    if (Atomics.compareExchange(thread.slot, 0, sent.ticket, 0) !== sent.ticket) return false;
    sent.dropped = true;
    return true;
  }

  #idleThread(): Thread | null {
    for (const thread of this.#threads) if (thread.sent.length === 0 && !thread.ending) return thread;
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
    const slot = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
    const { promise: ready, resolve: loaded } = Promise.withResolvers<void>();
    const thread: Thread = {
      worker,
      sent: [],
      slot,
      timer: null,
      ending: null,
      ready,
      loaded,
      isLoaded: false,
    };
    this.#threads.add(thread);
    worker.on('message', (reply: ReplyMessage) => {
      if ('ready' in reply) {
        thread.isLoaded = true;
        thread.loaded();
        // The first task's clock starts now: the load was not its time.
        if (thread.sent.length > 0) this.#begin(thread);
        return;
      }
      const sent = thread.sent.shift();
      if (!sent) return;
      if (thread.timer) clearTimeout(thread.timer);
      thread.timer = null;
      if (thread.sent.length > 0) this.#begin(thread);
      else thread.worker.unref();
      if (!sent.dropped) {
        if (reply.ok) this.#succeed(sent.task, reply.value);
        else if ('error' in reply)
          this.#fail(sent.task, new TaskError(reply.error.name, reply.error.message, reply.error.fields));
      }
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

  /** Starts the clock of the thread's first task. */
  #begin(thread: Thread): void {
    const { timeLimitMs, graceMs } = this.#options;
    if (thread.timer) clearTimeout(thread.timer);
    thread.timer = setTimeout(
      () => this.#end(thread, 'time', `exceeded its time limit of ${timeLimitMs} ms`),
      timeLimitMs + graceMs + (thread.isLoaded ? 0 : LOAD_ALLOWANCE_MS),
    );
  }

  /** Forgets the thread's tasks; returns those not dropped, in order. */
  #clear(thread: Thread): Sent[] {
    if (thread.timer) clearTimeout(thread.timer);
    thread.timer = null;
    thread.worker.unref();
    return thread.sent.splice(0).filter((sent) => !sent.dropped);
  }

  /**
   * Ends a thread (terminating it if it still runs), fails the task it runs, puts a task sent
   * ahead that had not started back in the queue, and frees its place for a new one.
   */
  #end(thread: Thread, why: SandboxLimit | 'abort', message: string): void {
    if (thread.ending) return;
    thread.ending = why;
    thread.loaded();
    const waiting = thread.sent.filter((sent) => this.#takeBackOne(thread, sent)).map((sent) => sent.task);
    const [task, ...started] = this.#clear(thread).map((sent) => sent.task);
    this.#threads.delete(thread);
    void thread.worker.terminate();
    if (why !== 'abort') this.#options.onThreadEnd?.(why);
    const error =
      why === 'abort' ? new SandboxError('crash', 'its thread was ended') : new SandboxError(why, message);
    if (task) this.#fail(task, why === 'abort' ? abortReason(task.signal) : error);
    // A task sent ahead that had started: the thread ran it when it was ended.
    for (const other of started) this.#fail(other, error);
    this.#queue.unshift(...waiting);
    if (!this.#closed) this.#dispatch();
  }

  #abort(task: Task): void {
    const queued = this.#queue.indexOf(task);
    if (queued >= 0) {
      this.#queue.splice(queued, 1);
      this.#fail(task, abortReason(task.signal));
      return;
    }
    for (const thread of this.#threads) {
      const index = thread.sent.findIndex((sent) => sent.task === task && !sent.dropped);
      if (index < 0) continue;
      const first = thread.sent.findIndex((sent) => !sent.dropped);
      if (index === first) {
        this.#end(thread, 'abort', 'aborted');
        return;
      }
      // Sent ahead: taken back if it has not started, else left to finish; either way settled now.
      const sent = thread.sent[index]!;
      this.#takeBackOne(thread, sent);
      sent.dropped = true;
      this.#fail(task, abortReason(task.signal));
      return;
    }
  }

  #succeed(task: Task, value: unknown): void {
    task.signal?.removeEventListener('abort', task.onAbort);
    task.resolve(value);
  }

  #fail(task: Task, err: unknown): void {
    task.signal?.removeEventListener('abort', task.onAbort);
    task.reject(err);
  }
}

/**
 * What an aborted task rejects with: the signal's reason, as fetch() does, unless it is falsy
 * (`abort(0)`, `abort(null)`): a caller checking `if (err)` would take that for no error at all.
 */
export function abortReason(signal: AbortSignal | undefined): unknown {
  const reason: unknown = signal?.reason;
  return reason || new DOMException(`The task was aborted (${String(reason)})`, 'AbortError');
}
