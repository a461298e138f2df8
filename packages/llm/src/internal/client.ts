import OpenAI, { APIError, APIUserAbortError } from 'openai';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources';
import { type ModelProblemCode, ModelUnavailableError } from './errors.ts';
import { EXTRACT_SYSTEM, pageMessage, repairMessage, SUMMARY_SYSTEM, schemaInstruction } from './prompts.ts';
import type { ModelSettings } from './settings.ts';
import { estimateTokens } from './tokens.ts';

/** A summary is cut to this many characters (docs/api.md §24). */
export const MAX_SUMMARY_CHARS = 2_000;
/** Retries of one call after a 429 or 5xx answer (the client waits as Retry-After says). */
const MAX_RETRIES = 2;

/**
 * How structured answers are asked for, best first: the schema as `response_format`, a JSON
 * object with the schema in the prompt, or only the prompt. A server that refuses one is asked
 * with the next, and the client remembers it.
 */
const MODES = ['json_schema', 'json_object', 'prompt'] as const;
type Mode = (typeof MODES)[number];

/** Model calls and tokens a page's request took. */
export interface Usage {
  calls: number;
  tokens: number;
}

export interface ExtractRequest {
  /** The page's markdown, already cut to LLM_MAX_INPUT_TOKENS. */
  markdown: string;
  schema: Record<string, unknown> | null;
  prompt: string | null;
  /** Null when a parsed answer is valid, else what is wrong; the worker runs it off its event loop. */
  check: (value: Record<string, unknown>) => Promise<string | null>;
  signal?: AbortSignal | undefined;
}

export type ModelResult<T> =
  | { ok: true; value: T; usage: Usage }
  | { ok: false; code: ModelProblemCode; message: string; usage: Usage };

/** What a call answered, or why it gave nothing. */
type Answer = { text: string } | { refused: true; message: string };

/**
 * An OpenAI-compatible Chat Completions endpoint (the `openai` client with the operator's base
 * URL): structured extraction with validation and one repair, and summaries. Every call is
 * bounded by LLM_TIMEOUT_MS, retries included; nothing the model answers is run or followed.
 */
export class ChatModel {
  readonly #settings: ModelSettings;
  readonly #client: OpenAI;
  /** The best way this server has taken structured answers so far. */
  #mode: Mode = 'json_schema';

  constructor(settings: ModelSettings, options: { fetch?: typeof fetch } = {}) {
    this.#settings = settings;
    this.#client = new OpenAI({
      baseURL: settings.baseUrl,
      // The client needs a key; servers without one (Ollama, vLLM) ignore it.
      apiKey: settings.apiKey ?? 'none',
      maxRetries: MAX_RETRIES,
      timeout: settings.timeoutMs,
      ...(options.fetch && { fetch: options.fetch }),
    });
  }

  /**
   * A JSON object from the page: asked with the schema as response format when the server takes
   * it; parsed, checked, and asked once more with what was wrong; else an LLM_INVALID_ANSWER.
   */
  async extract(request: ExtractRequest): Promise<ModelResult<Record<string, unknown>>> {
    const usage: Usage = { calls: 0, tokens: 0 };
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: EXTRACT_SYSTEM },
      { role: 'user', content: pageMessage(request.markdown, request.prompt) },
    ];
    try {
      let answer = await this.#structured(messages, request, usage);
      let problem = await this.#problem(answer.text, request);
      if (problem === null) return { ok: true, value: parseObject(answer.text)!, usage };
      // One repair: the answer, what is wrong with it, and the same request again.
      messages.push(
        { role: 'assistant', content: answer.text },
        { role: 'user', content: repairMessage(problem) },
      );
      const first = answer.mode;
      answer = await this.#structured(
        messages,
        request,
        usage,
        first === 'json_schema' ? 'json_object' : first,
      );
      problem = await this.#problem(answer.text, request);
      if (problem === null) {
        // The server ignored the schema as a response format but followed it in the prompt.
        if (first === 'json_schema' && parseObject(answer.text) && this.#mode === 'json_schema')
          this.#mode = 'json_object';
        return { ok: true, value: parseObject(answer.text)!, usage };
      }
      return {
        ok: false,
        code: 'LLM_INVALID_ANSWER',
        message: `the model's answer was not valid after one repair: ${problem}`,
        usage,
      };
    } catch (err) {
      if (err instanceof ModelUnavailableError)
        return { ok: false, code: 'LLM_UNAVAILABLE', message: err.message, usage };
      throw err;
    }
  }

  /** A few sentences of the page, at most MAX_SUMMARY_CHARS. */
  async summarize(markdown: string, signal?: AbortSignal): Promise<ModelResult<string>> {
    const usage: Usage = { calls: 0, tokens: 0 };
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: SUMMARY_SYSTEM },
      { role: 'user', content: pageMessage(markdown, null) },
    ];
    try {
      const answer = await this.#call({ messages }, usage, signal);
      if ('refused' in answer) throw new ModelUnavailableError(answer.message);
      const text = answer.text.trim();
      if (text === '')
        return {
          ok: false,
          code: 'LLM_INVALID_ANSWER',
          message: 'the model answered an empty summary',
          usage,
        };
      return { ok: true, value: cutSummary(text), usage };
    } catch (err) {
      if (err instanceof ModelUnavailableError)
        return { ok: false, code: 'LLM_UNAVAILABLE', message: err.message, usage };
      throw err;
    }
  }

  /** What is wrong with an answer's text, or null when it is a valid object. */
  async #problem(text: string, request: ExtractRequest): Promise<string | null> {
    const value = parseObject(text);
    if (value === null) return 'it is not a JSON object';
    return request.check(value);
  }

  /** Asks for a JSON object in the best mode the server takes, from `from` on. */
  async #structured(
    messages: ChatCompletionMessageParam[],
    request: ExtractRequest,
    usage: Usage,
    from: Mode = this.#mode,
  ): Promise<{ text: string; mode: Mode }> {
    const start = Math.max(MODES.indexOf(from), MODES.indexOf(this.#mode));
    let refusal = '';
    for (const mode of MODES.slice(start)) {
      if (mode === 'json_schema' && request.schema === null) continue;
      const answer = await this.#call(
        structuredParams(messages, mode, request.schema),
        usage,
        request.signal,
      );
      if (!('refused' in answer)) return { text: answer.text, mode };
      refusal = answer.message;
      // The server does not take this response format: later calls start with the next one.
      if (MODES.indexOf(this.#mode) <= MODES.indexOf(mode))
        this.#mode = MODES[MODES.indexOf(mode) + 1] ?? mode;
    }
    throw new ModelUnavailableError(`the model server refused the request: ${refusal}`);
  }

  /**
   * One chat completion, bounded by LLM_TIMEOUT_MS with its retries. A 4xx that is not a 429 is a
   * refusal (the next mode may be taken); anything else that gives no answer is unavailable.
   */
  async #call(
    params: Omit<ChatCompletionCreateParamsNonStreaming, 'model'>,
    usage: Usage,
    signal?: AbortSignal,
  ): Promise<Answer> {
    const { timeoutMs, model, maxOutputTokens } = this.#settings;
    const deadline = AbortSignal.timeout(timeoutMs);
    const bounded = signal ? AbortSignal.any([signal, deadline]) : deadline;
    usage.calls++;
    try {
      const completion = await this.#client.chat.completions.create(
        { ...params, model, max_tokens: maxOutputTokens },
        { signal: bounded },
      );
      const text = completion.choices[0]?.message?.content ?? '';
      const prompt = params.messages.reduce(
        (n, m) => n + (typeof m.content === 'string' ? estimateTokens(m.content) : 0),
        0,
      );
      usage.tokens += completion.usage?.total_tokens ?? prompt + estimateTokens(text);
      return { text };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (deadline.aborted || err instanceof APIUserAbortError)
        throw new ModelUnavailableError(`the model did not answer within ${timeoutMs} ms (LLM_TIMEOUT_MS)`);
      if (err instanceof APIError && err.status !== undefined) {
        if (err.status === 429)
          throw new ModelUnavailableError('the model server kept answering 429 (too many requests)');
        if (err.status >= 400 && err.status < 500)
          return { refused: true, message: `${err.status} ${err.message}` };
        throw new ModelUnavailableError(`the model server answered ${err.status}`);
      }
      throw new ModelUnavailableError(`the model server could not be reached: ${(err as Error).message}`);
    }
  }
}

/** The request of a mode: the schema as response format, a JSON object with the schema in the prompt, or the prompt alone. */
function structuredParams(
  messages: ChatCompletionMessageParam[],
  mode: Mode,
  schema: Record<string, unknown> | null,
): Omit<ChatCompletionCreateParamsNonStreaming, 'model'> {
  if (mode === 'json_schema')
    return {
      messages,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'extraction', schema: schema!, strict: false },
      },
    };
  const [system, ...rest] = messages;
  const withSchema: ChatCompletionMessageParam[] =
    schema === null
      ? messages
      : [{ role: 'system', content: `${system!.content as string}\n${schemaInstruction(schema)}` }, ...rest];
  return mode === 'json_object'
    ? { messages: withSchema, response_format: { type: 'json_object' } }
    : { messages: withSchema };
}

/**
 * The JSON object an answer holds: the whole text, or inside a ```json fence, or from its first
 * `{` to its last `}` (servers that ignore the response format add prose); null when none.
 */
export function parseObject(text: string): Record<string, unknown> | null {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(trimmed)?.[1];
  const first = trimmed.indexOf('{');
  const last = trimmed.lastIndexOf('}');
  for (const candidate of [
    trimmed,
    fenced,
    first >= 0 && last > first ? trimmed.slice(first, last + 1) : undefined,
  ]) {
    if (candidate === undefined) continue;
    try {
      const value: unknown = JSON.parse(candidate);
      if (typeof value === 'object' && value !== null && !Array.isArray(value))
        return value as Record<string, unknown>;
    } catch {
      // the next candidate
    }
  }
  return null;
}

/** A summary cut to MAX_SUMMARY_CHARS, at the end of a sentence when one ends past half of it. */
function cutSummary(text: string): string {
  if (text.length <= MAX_SUMMARY_CHARS) return text;
  const head = text.slice(0, MAX_SUMMARY_CHARS);
  const end = Math.max(head.lastIndexOf('. '), head.lastIndexOf('.\n'));
  return end > MAX_SUMMARY_CHARS / 2 ? head.slice(0, end + 1) : head;
}
