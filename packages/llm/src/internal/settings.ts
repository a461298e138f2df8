import { z } from 'zod';

const positive = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/**
 * The operator's language model (docs/api.md §24), the names self-hosted Firecrawl uses: any
 * OpenAI-compatible Chat Completions endpoint. Spread into an app's configuration schema.
 */
export const llmEnv = {
  /** The endpoint's base URL (…/v1); unset with OPENAI_API_KEY set: OpenAI's own. */
  OPENAI_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  /** The model every call names. */
  MODEL_NAME: z.string().min(1).max(200).default('gpt-4o-mini'),
  /** One call's time limit, its retries after 429 or 5xx answers included. */
  LLM_TIMEOUT_MS: positive(1_000, 600_000).default(60_000),
  /** A page's markdown is cut to this many tokens (o200k_base) before it is sent. */
  LLM_MAX_INPUT_TOKENS: positive(100, 2_000_000).default(32_000),
  /** The most tokens one answer may have. */
  LLM_MAX_OUTPUT_TOKENS: positive(16, 200_000).default(4_096),
  /** Tokens (input and output) one account may spend in a UTC day; 0: no limit. */
  LLM_TOKENS_PER_DAY: positive(0, Number.MAX_SAFE_INTEGER).default(0),
  /** Model calls one user has in flight in one worker process. */
  LLM_CONCURRENCY_PER_USER: positive(1, 256).default(2),
};

const envSchema = z.object(llmEnv);
export type LlmEnv = z.output<typeof envSchema>;

/** The operator's model, as calls need it. */
export interface ModelSettings {
  baseUrl: string;
  apiKey: string | null;
  model: string;
  timeoutMs: number;
  maxInputTokens: number;
  maxOutputTokens: number;
  tokensPerDay: number;
  concurrencyPerUser: number;
}

const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** The model the operator named, or null when none is configured (neither OPENAI_BASE_URL nor OPENAI_API_KEY). */
export function modelSettings(env: LlmEnv): ModelSettings | null {
  if (env.OPENAI_BASE_URL === undefined && env.OPENAI_API_KEY === undefined) return null;
  return {
    baseUrl: (env.OPENAI_BASE_URL ?? OPENAI_BASE_URL).replace(/\/+$/, ''),
    apiKey: env.OPENAI_API_KEY ?? null,
    model: env.MODEL_NAME,
    timeoutMs: env.LLM_TIMEOUT_MS,
    maxInputTokens: env.LLM_MAX_INPUT_TOKENS,
    maxOutputTokens: env.LLM_MAX_OUTPUT_TOKENS,
    tokensPerDay: env.LLM_TOKENS_PER_DAY,
    concurrencyPerUser: env.LLM_CONCURRENCY_PER_USER,
  };
}

/** What a 400 says when a feature needs a model and none is configured. */
export const NO_MODEL_MESSAGE =
  'no language model is configured: the operator must set OPENAI_BASE_URL (or OPENAI_API_KEY) and MODEL_NAME';
