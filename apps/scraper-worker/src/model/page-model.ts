import type { PageDocument } from '@scrapejobs/content';
import type { RunFailure, StoredExtract } from '@scrapejobs/domain';
import {
  type ChatModel,
  MAX_FIELDS,
  type ModelResult,
  type ModelSettings,
  type TokenLedger,
} from '@scrapejobs/llm';
import type { PageExtractor } from '../extract/extractor.ts';
import type { ModelInput } from '../extract/model-tasks.ts';
import { UserSlots } from './user-slots.ts';

/** What an object is asked by: a JSON Schema, a prompt, or both. */
export interface ObjectRequest {
  schema: Record<string, unknown> | null;
  prompt: string | null;
}

/** What a job asks the language model of each page (docs/api.md §24). */
export interface ModelWork {
  extract: StoredExtract | null;
  summary: boolean;
}

/** What the language model gave a page. */
export interface PageModelOutput {
  /** The page's record (a job with extract); null when the model gave no usable object. */
  record: Record<string, unknown> | null;
  /** What the page's document gains. */
  fields: Pick<PageDocument, 'summary' | 'json' | 'warning'>;
  /** Why an output is missing or the page was cut, for the URL's item; null when nothing is. */
  warning: RunFailure | null;
}

/** Model calls and tokens, for /metrics. */
export interface ModelObserver {
  used(calls: number, tokens: number): void;
}

export interface PageModelDeps {
  model: ChatModel;
  settings: ModelSettings;
  ledger: TokenLedger;
  /** Checks answers against the job's schema on the extraction threads. */
  extractor: PageExtractor;
  observer?: ModelObserver;
}

/**
 * The language model's work on one page: an extraction checked against the job's schema, a
 * summary, or both; bounded per user in this process (LLM_CONCURRENCY_PER_USER), in time per call
 * (LLM_TIMEOUT_MS), and per account per day (LLM_TOKENS_PER_DAY: a TokenBudgetError, code
 * LLM_BUDGET, fails the page). A call that gives nothing usable leaves a warning, never a failure.
 */
export class PageModel {
  readonly #deps: PageModelDeps;
  readonly #slots: UserSlots;

  constructor(deps: PageModelDeps) {
    this.#deps = deps;
    this.#slots = new UserSlots(deps.settings.concurrencyPerUser);
  }

  /** LLM_MAX_INPUT_TOKENS: a page's markdown is cut to this many tokens. */
  get maxInputTokens(): number {
    return this.#deps.settings.maxInputTokens;
  }

  async apply(
    userId: string,
    runId: string,
    work: ModelWork,
    input: ModelInput,
    signal: AbortSignal,
  ): Promise<PageModelOutput> {
    const { ledger, model, settings } = this.#deps;
    await ledger.check(userId);
    const warnings: RunFailure[] = [];
    if (input.cut)
      warnings.push({
        code: 'LLM_INPUT_CUT',
        message: `the page's markdown was cut to ${settings.maxInputTokens} tokens (LLM_MAX_INPUT_TOKENS) for the language model`,
      });
    const output: PageModelOutput = { record: null, fields: {}, warning: null };
    const release = await this.#slots.take(userId, signal);
    try {
      const { extract } = work;
      if (extract) {
        const result = await this.#extract(userId, `${runId} extract`, extract, input.text, signal);
        if (result.ok) {
          output.record = recordOf(result.value, extract.fields);
          output.fields.json = result.value;
        } else warnings.push({ code: result.code, message: result.message });
      }
      if (work.summary) {
        const result = await this.#spent(userId, model.summarize(input.text, signal));
        if (result.ok) output.fields.summary = result.value;
        else warnings.push({ code: result.code, message: `summary: ${result.message}` });
      }
    } finally {
      release();
    }
    if (warnings.length > 0) {
      // The code of what went wrong first (a cut page is the lesser news), every message.
      const first = warnings.find((w) => w.code !== 'LLM_INPUT_CUT') ?? warnings[0]!;
      output.warning = { code: first.code, message: warnings.map((w) => w.message).join('; ') };
      output.fields.warning = output.warning.message;
    }
    return output;
  }

  /**
   * One object of `text` by `extract`'s schema and prompt, in one of the user's places (within
   * the day's tokens); why there is none when the model gave nothing usable. `key` names the
   * schema in the threads' cache of compiled schemas.
   */
  async object(
    userId: string,
    key: string,
    extract: ObjectRequest,
    text: string,
    signal: AbortSignal,
  ): Promise<ModelResult<Record<string, unknown>>> {
    await this.#deps.ledger.check(userId);
    const release = await this.#slots.take(userId, signal);
    try {
      return await this.#extract(userId, key, extract, text, signal);
    } finally {
      release();
    }
  }

  #extract(userId: string, key: string, extract: ObjectRequest, text: string, signal: AbortSignal) {
    const { schema, prompt } = extract;
    return this.#spent(
      userId,
      this.#deps.model.extract({
        markdown: text,
        schema,
        prompt,
        check: (value) =>
          schema
            ? this.#deps.extractor.checkAnswer(userId, { key, schema, value }, signal)
            : Promise.resolve(null),
        signal,
      }),
    );
  }

  async #spent<T>(userId: string, call: Promise<ModelResult<T>>): Promise<ModelResult<T>> {
    const result = await call;
    this.#deps.observer?.used(result.usage.calls, result.usage.tokens);
    await this.#deps.ledger.spend(userId, result.usage.tokens);
    return result;
  }
}

/**
 * The record of an extracted object: the schema's top-level properties in its order (null when
 * missing), or without a schema the object's own, at most MAX_FIELDS.
 */
function recordOf(value: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  if (fields.length === 0) return Object.fromEntries(Object.entries(value).slice(0, MAX_FIELDS));
  return Object.fromEntries(fields.map((name) => [name, value[name] ?? null]));
}
