import type { RunFailure, RunStore } from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';
import { catalog, type createQueue } from '@scrapejobs/queues';
import { type ConnectionOptions, DelayedError, WaitingError, Worker } from 'bullmq';
import { type ExecutorDeps, executeRun, type StopReason } from './executor.ts';
import { runsToHandBack } from './fairness.ts';

const MIN_TURN_MS = 2_000;

export interface RunConsumerOptions {
  connection: ConnectionOptions;
  prefix: string;
  /** SCRAPER_CONCURRENCY: runs executed here at once. */
  concurrency: number;
  /** RUN_LOCK_MS: a run whose lock is not renewed this long is taken over elsewhere. */
  lockMs: number;
  /** RUN_RETRY_DELAY_MS: the first delay before a failed execution is tried again, doubling. */
  retryDelayMs: number;
  log: Logger;
}

/**
 * Takes runs from the queue and executes them. A run in progress here can be stopped at once by
 * its id (a cancel message, a lost lock, SIGTERM); a run that hands itself back goes to the end
 * of the queue until the time it names; the last failed attempt of a run ends it failed.
 */
export class RunConsumer {
  readonly #deps: ExecutorDeps;
  readonly #store: RunStore;
  readonly #log: Logger;
  readonly #concurrency: number;
  readonly #worker: Worker;
  readonly #active = new Map<string, { controller: AbortController; since: number }>();
  #stopping = false;

  constructor(deps: ExecutorDeps, options: RunConsumerOptions) {
    this.#deps = deps;
    this.#store = deps.store;
    this.#log = options.log;
    this.#concurrency = options.concurrency;
    this.#worker = new Worker(catalog.scrapeRuns.name, (job, token) => this.#process(job, token), {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockMs,
      stalledInterval: options.lockMs,
      maxStalledCount: 10,
      autorun: false,
      // attemptsMade is 1 after the first failure.
      settings: { backoffStrategy: (attemptsMade: number) => options.retryDelayMs * 2 ** (attemptsMade - 1) },
    });
    this.#worker.on('failed', (job, err) => {
      this.#log.error(
        { run_id: job?.data.runId, err: err.message, attempt: job?.attemptsMade },
        'run crashed',
      );
      // Its last attempt: the run ends failed rather than running forever.
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1))
        void this.#endCrashedRun(job.data.runId, `${err.message}`, job.attemptsMade);
    });
    // A run whose lock could not be renewed (this process was held up past RUN_LOCK_MS) belongs to
    // whichever worker takes it over: stop working on it here.
    this.#worker.on('lockRenewalFailed', (runIds) => {
      for (const runId of runIds) this.stop(runId, 'lost');
      this.#log.warn({ run_ids: runIds }, 'lost the lock of runs; another worker takes them over');
    });
    this.#worker.on('error', (err) => this.#log.warn({ err: err.message }, 'worker error'));
  }

  /** Starts taking runs from the queue. */
  start(): void {
    void this.#worker.run();
  }

  /** Stops a run in progress here, if it is; `reason` says what becomes of it. */
  stop(runId: string, reason: StopReason): void {
    this.#active.get(runId)?.controller.abort(reason);
  }

  /**
   * When every place here is taken and a run of a user none of whose runs this worker holds
   * waits, hands runs of the user holding the most places back to the end of the queue (fairness.ts).
   */
  async shareFairly(queue: ReturnType<typeof createQueue<'scrapeRuns'>>): Promise<void> {
    if (this.#stopping || this.#active.size < this.#concurrency) return;
    const waiting = await queue.getWaiting(0, 19);
    if (waiting.length === 0) return;
    const waitingIds = waiting.map((job) => job.data.runId);
    const owners = await this.#store.ownersOf([...this.#active.keys(), ...waitingIds]);
    const held = [...this.#active].flatMap(([runId, { since }]) => {
      const userId = owners.get(runId);
      return userId ? [{ runId, userId, since }] : [];
    });
    const waitingUsers = waitingIds.flatMap((runId) => owners.get(runId) ?? []);
    for (const runId of runsToHandBack(held, waitingUsers, Date.now(), MIN_TURN_MS)) {
      this.#log.info({ run_id: runId }, "handing a run back: another user's run waits for a place");
      this.stop(runId, 'yield');
    }
  }

  /** Takes no more runs and hands those in progress back to the queue for other workers. */
  async close(): Promise<void> {
    this.#stopping = true;
    this.#log.info({ active: this.#active.size }, 'handing runs back to the queue');
    // Stop fetching first, so a run handed back here is not taken again by this process.
    const closed = this.#worker.close();
    for (const runId of this.#active.keys()) this.stop(runId, 'shutdown');
    await closed;
  }

  async #process(
    job: { data: unknown; moveToDelayed(at: number, token?: string): Promise<void> },
    token?: string,
  ) {
    const { runId, jobId } = catalog.scrapeRuns.payload.parse(job.data);
    const controller = new AbortController();
    if (this.#stopping) controller.abort('shutdown' satisfies StopReason);
    this.#active.set(runId, { controller, since: Date.now() });
    this.#log.info({ run_id: runId, job_id: jobId }, 'run started');
    try {
      const end = this.#stopping
        ? { handBackAt: Date.now() }
        : await executeRun(this.#deps, runId, controller.signal);
      if (typeof end === 'object') {
        // Back to the queue, for any worker; the run resumes there without duplicates.
        await job.moveToDelayed(end.handBackAt, token);
        this.#log.info(
          { run_id: runId, resumes_at: new Date(end.handBackAt).toISOString() },
          'run handed back',
        );
        throw new DelayedError();
      }
      // Moved back to waiting by the stalled-job check and taken by another worker: BullMQ must
      // not try to finish it with this worker's stale lock.
      if (end === 'lost') throw new WaitingError();
      return end;
    } finally {
      this.#active.delete(runId);
    }
  }

  async #endCrashedRun(runId: string, error: string, attempts: number): Promise<void> {
    const failure: RunFailure = {
      code: 'EXTRACTION_ERROR',
      message: `The run could not go on after ${attempts} attempts: ${error}`,
    };
    try {
      await this.#store.finish(runId, failure);
      await this.#deps.leases.forget(runId);
    } catch (err) {
      this.#log.warn({ run_id: runId, err: (err as Error).message }, 'could not end a crashed run');
    }
  }
}
