import type { RunAnalysis } from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';

/** A run whose analysis failed here is tried again after this, doubling at each failure. */
const RETRY_MS = 30_000;
/**
 * A run whose analysis failed this many times here is given up, about 15 minutes after its first
 * failure: due forever, it would hold back its job's retention. An outage of PostgreSQL costs a
 * run one failure at most, since the next look for due runs fails before any further try.
 */
export const ANALYSIS_ATTEMPTS = 6;

/**
 * Analyses the runs that ended (their changes against the base run, their extraction health),
 * one at a time, whichever worker ended them: a run whose analysis failed or whose worker died
 * stays due and is taken up again here (after a backoff) or by any other worker, until a worker
 * gives it up after ANALYSIS_ATTEMPTS failures.
 */
export class Analyst {
  readonly #analysis: RunAnalysis;
  readonly #log: Logger;
  readonly #now: () => number;
  #working: Promise<void> | null = null;
  #stopped = false;
  /** Runs whose analysis failed here: when to try again, and how often it failed. */
  readonly #failed = new Map<string, { at: number; times: number }>();

  constructor(analysis: RunAnalysis, log: Logger, now: () => number = Date.now) {
    this.#analysis = analysis;
    this.#log = log;
    this.#now = now;
  }

  /** Analyses every run that is due now; a call while one is under way joins it. */
  work(): Promise<void> {
    this.#working ??= this.#drain().finally(() => {
      this.#working = null;
    });
    return this.#working;
  }

  /** Takes no further run; waits for the one under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#working?.catch(() => {});
  }

  async #drain(): Promise<void> {
    // Runs another worker has now, or that failed here and wait for their next try.
    const skipped = new Set<string>();
    while (!this.#stopped) {
      const now = this.#now();
      // Grows with the runs skipped, so that many waiting for their retry hide no other run.
      const limit = 2 * skipped.size + 10;
      const listed = await this.#analysis.due(limit);
      const due = listed.filter((id) => {
        if ((this.#failed.get(id)?.at ?? 0) > now) skipped.add(id);
        return !skipped.has(id);
      });
      if (due.length === 0 && listed.length < limit) {
        // Every due run is listed: one that failed here and is not is gone (deleted, or analysed elsewhere).
        const still = new Set(listed);
        for (const runId of this.#failed.keys()) if (!still.has(runId)) this.#failed.delete(runId);
        return;
      }
      for (const runId of due) {
        if (this.#stopped) return;
        skipped.add(runId);
        await this.#analyze(runId);
      }
    }
  }

  async #analyze(runId: string): Promise<void> {
    const started = performance.now();
    try {
      const done = await this.#analysis.analyze(runId);
      this.#failed.delete(runId);
      // null: another worker has it now, or had it.
      if (done)
        this.#log.info(
          {
            run_id: runId,
            health: done.health.status,
            changes: done.changes,
            ms: Math.round(performance.now() - started),
          },
          'run analysed',
        );
    } catch (err) {
      const times = (this.#failed.get(runId)?.times ?? 0) + 1;
      const retryMs = RETRY_MS * 2 ** (times - 1);
      if (times >= ANALYSIS_ATTEMPTS) return this.#giveUp(runId, err as Error, times, retryMs);
      this.#failed.set(runId, { at: this.#now() + retryMs, times });
      this.#log.warn(
        { run_id: runId, err: (err as Error).message, attempt: times, retry_in_ms: retryMs },
        'could not analyse a run; it stays due',
      );
    }
  }

  /** Takes a run whose last try here failed out of analysis, so that it holds back nothing. */
  async #giveUp(runId: string, err: Error, times: number, retryMs: number): Promise<void> {
    try {
      const abandoned = await this.#analysis.abandon(runId);
      this.#failed.delete(runId);
      if (abandoned)
        this.#log.error(
          { run_id: runId, err: err.message, attempts: times },
          'gave up analysing a run; it keeps no changes and no health',
        );
      else
        this.#log.warn(
          { run_id: runId, err: err.message, attempts: times },
          'could not analyse a run; it is analysed, deleted or taken by another worker now',
        );
    } catch (abandonErr) {
      // Its next failure gives it up again.
      this.#failed.set(runId, { at: this.#now() + retryMs, times: times - 1 });
      this.#log.warn(
        { run_id: runId, err: err.message, abandon_err: (abandonErr as Error).message, retry_in_ms: retryMs },
        'could not analyse a run nor give it up; it stays due',
      );
    }
  }
}
