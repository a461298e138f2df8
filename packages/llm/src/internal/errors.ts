/** Why a page's model output is missing: its code is the URL's warning (docs/api.md §24). */
export type ModelProblemCode = 'LLM_INVALID_ANSWER' | 'LLM_UNAVAILABLE';

/** A model call that could not give an answer (the server failed, refused, or took too long). */
export class ModelUnavailableError extends Error {
  override name = 'ModelUnavailableError';
  readonly code = 'LLM_UNAVAILABLE';
}

/** The account spent its daily tokens (LLM_TOKENS_PER_DAY): the page's extraction fails with this code. */
export class TokenBudgetError extends Error {
  override name = 'TokenBudgetError';
  readonly code = 'LLM_BUDGET';
}
