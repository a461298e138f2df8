// The operator's language model (docs/api.md §24): an OpenAI-compatible Chat Completions client
// with structured extraction, summaries, token cutting and a per-account daily token budget.
export {
  ChatModel,
  type ExtractRequest,
  MAX_SUMMARY_CHARS,
  type ModelResult,
  parseObject,
  type Usage,
} from './internal/client.ts';
export { type ModelProblemCode, ModelUnavailableError, TokenBudgetError } from './internal/errors.ts';
export { TokenLedger, type TokenUsage } from './internal/ledger.ts';
export {
  compileExtractSchema,
  type ExtractSchema,
  extractSchemaProblem,
  MAX_FIELDS,
  MAX_SCHEMA_BYTES,
} from './internal/schema.ts';
export {
  type LlmEnv,
  llmEnv,
  type ModelSettings,
  modelSettings,
  NO_MODEL_MESSAGE,
} from './internal/settings.ts';
export { cutToTokens, estimateTokens } from './internal/tokens.ts';
