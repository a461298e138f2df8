import type { RunAnalysis } from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';

/** A run whose analysis failed here is tried again after this, doubling up to MAX_RETRY_MS. */
const RETRY_MS = 30_000;
const MAX_RETRY_MS = 60 * 60_000;

/**
 * Analyses the runs that ended (their changes against the base run, their extraction health),
 * one at a time, whichever worker ended them: a run whose analysis failed or whose worker died
 * stays due and is taken up again here (after a backoff) or by any other worker.
 */
export class Analyst {
  readonly #analysis: RunAnalysis;
  readonly #log: Logger;
  #working: Promise<void> | null = null;
  #stopped = false;
  /** Runs whose analysis failed here: when to try again, and how often it failed. */
  readonly #failed = new Map<string, { at: number; times: number }>();

  constructor(analysis: RunAnalysis, log: Logger) {
    this.#analysis = analysis;
    this.#log = log;
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
      const now = Date.now();
      const due = (await this.#analysis.due(skipped.size + 10)).filter((id) => {
        if ((this.#failed.get(id)?.at ?? 0) > now) skipped.add(id);
        return !skipped.has(id);
      });
      if (due.length === 0) return;
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
      const retryMs = Math.min(MAX_RETRY_MS, RETRY_MS * 2 ** (times - 1));
      this.#failed.set(runId, { at: Date.now() + retryMs, times });
      this.#log.warn(
        { run_id: runId, err: (err as Error).message, retry_in_ms: retryMs },
        'could not analyse a run; it stays due',
      );
    }
  }
}
