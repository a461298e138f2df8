import type { RunAnalysis } from '@scrapejobs/domain';
import type { Logger } from '@scrapejobs/logging';

/**
 * Analyses the runs that ended (their changes against the base run, their extraction health),
 * one at a time, whichever worker ended them: a run whose analysis failed or whose worker died
 * stays due and is taken up again here or by any other worker.
 */
export class Analyst {
  readonly #analysis: RunAnalysis;
  readonly #log: Logger;
  #working: Promise<void> | null = null;
  #stopped = false;

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
    const failed = new Set<string>();
    while (!this.#stopped) {
      const due = (await this.#analysis.due(failed.size + 10)).filter((id) => !failed.has(id));
      if (due.length === 0) return;
      for (const runId of due) {
        if (this.#stopped) return;
        const started = performance.now();
        try {
          const done = await this.#analysis.analyze(runId);
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
          // Another worker has it now: look again at the next round.
          else failed.add(runId);
        } catch (err) {
          failed.add(runId);
          this.#log.warn(
            { run_id: runId, err: (err as Error).message },
            'could not analyse a run; it stays due',
          );
        }
      }
    }
  }
}
