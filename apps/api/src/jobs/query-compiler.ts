import {
  type CompileResult,
  compileQuery,
  DEFAULT_COMPILE_TIME_LIMIT_MS,
  type QueryType,
  tooExpensiveToCompile,
} from '@scrapejobs/extraction';
import { SandboxError, SandboxPool } from '@scrapejobs/sandbox';

export interface CompileTask {
  type: QueryType;
  query: string;
  timeLimitMs: number;
}

export interface QueryCompilerOptions {
  threads?: number;
  /** One query's compilation. */
  timeLimitMs?: number;
  /** All the queries of one request together. */
  budgetMs?: number;
  memoryMb?: number;
}

/**
 * Compiles job queries on a few threads: each query within a time limit, a request's queries
 * within a budget, and one user's requests never on every thread at once, so that no create or
 * update can keep the API from answering others. A query past a limit is too expensive to compile.
 */
export class QueryCompiler {
  readonly #pool: SandboxPool<CompileTask, CompileResult>;
  readonly #timeLimitMs: number;
  readonly #budgetMs: number;
  readonly #memoryMb: number;

  constructor(options: QueryCompilerOptions = {}) {
    this.#timeLimitMs = options.timeLimitMs ?? DEFAULT_COMPILE_TIME_LIMIT_MS;
    this.#budgetMs = options.budgetMs ?? 5_000;
    this.#memoryMb = options.memoryMb ?? 64;
    this.#pool = new SandboxPool({
      entry: new URL('./compile-thread.ts', import.meta.url),
      threads: options.threads ?? 2,
      timeLimitMs: this.#timeLimitMs,
      memoryMb: this.#memoryMb,
    });
  }

  /**
   * Each query's result, in order; `owner` is the user whose request it is. A css selector is
   * compiled here (parsing it is linear in its length and evaluates nothing); XPath (evaluated on
   * an empty page) and regex (a backtracking match) go to the threads.
   */
  compileAll(
    owner: string,
    queries: readonly { type: QueryType; query: string }[],
  ): Promise<CompileResult[]> {
    // The budget's timer only when a query goes to a thread: most jobs have css selectors only.
    const budget = queries.some(({ type }) => type !== 'css') ? AbortSignal.timeout(this.#budgetMs) : null;
    return Promise.all(
      queries.map(({ type, query }) =>
        type === 'css'
          ? compileQuery(type, query, { timeLimitMs: this.#timeLimitMs })
          : this.#compileInThread(owner, type, query, budget!),
      ),
    );
  }

  #compileInThread(
    owner: string,
    type: QueryType,
    query: string,
    budget: AbortSignal,
  ): Promise<CompileResult> {
    return this.#pool
      .run(owner, { type, query, timeLimitMs: this.#timeLimitMs }, { signal: budget })
      .catch((err: unknown): CompileResult => {
        if (budget.aborted)
          return {
            ok: false,
            message: `too expensive to compile (the job's queries took longer than ${this.#budgetMs} ms in all)`,
          };
        if (err instanceof SandboxError && err.limit === 'memory')
          return { ok: false, message: `too expensive to compile (needed more than ${this.#memoryMb} MB)` };
        return tooExpensiveToCompile(this.#timeLimitMs);
      });
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}
