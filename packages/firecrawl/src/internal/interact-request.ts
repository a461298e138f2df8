import { z } from 'zod';
import { bookkeepingFields, parseBody } from './parse.ts';
import type { Parsed } from './types.ts';

/** Firecrawl's bounds of an interact call: code of at most 100,000 characters, 1 to 300 s. */
const MAX_CODE = 100_000;
const MAX_PROMPT = 10_000;
const DEFAULT_TIMEOUT_S = 30;
export const INTERACT_MAX_TIMEOUT_S = 300;

/** POST /v2/scrape/{id}/interact as this service runs it: node code, in the page. */
export interface InteractRequest {
  code: string;
  timeoutMs: number;
}

const LANGUAGE_MESSAGE =
  'only node code is run by this service, as the body of an async function in the page; python and bash are not supported';
const PROMPT_MESSAGE = 'natural-language interaction is not supported by this service; send code';

const schema = z
  .strictObject({
    code: z.string().max(MAX_CODE).optional(),
    prompt: z.string().max(MAX_PROMPT).optional(),
    language: z.enum(['node', 'python', 'bash']).default('node'),
    timeout: z.number().min(1).max(INTERACT_MAX_TIMEOUT_S).default(DEFAULT_TIMEOUT_S),
    ...bookkeepingFields,
  })
  .superRefine((request, ctx) => {
    if (request.language !== 'node')
      ctx.addIssue({ code: 'custom', path: ['language'], message: LANGUAGE_MESSAGE });
    if (request.prompt !== undefined)
      ctx.addIssue({ code: 'custom', path: ['prompt'], message: PROMPT_MESSAGE });
    else if (!request.code?.trim()) ctx.addIssue({ code: 'custom', path: ['code'], message: 'is required' });
  })
  .transform(
    (request): InteractRequest => ({
      code: request.code ?? '',
      timeoutMs: Math.round(request.timeout * 1000),
    }),
  );

/** Checks an interact call's body (docs/api.md §18). */
export const parseInteractRequest = (body: unknown): Parsed<InteractRequest> => parseBody(schema, body);

/** What a session's code gave, as the worker tells it. */
export interface InteractOutcome {
  stdout: string;
  stderr: string;
  result: string | null;
  exitCode: number;
  killed: boolean;
  truncated: boolean;
  error: string | null;
}

/**
 * An interact call's answer in Firecrawl's shape: `result` is the code's return value, or its
 * stdout when it returns nothing (as Firecrawl's sandbox answers `console.log(title)`);
 * `success` says whether the code ended without error.
 */
export function interactBody(outcome: InteractOutcome) {
  const { stdout, stderr, exitCode, killed, truncated, error } = outcome;
  return {
    success: exitCode === 0 && !killed,
    result: outcome.result ?? stdout.replace(/\n$/, ''),
    stdout,
    stderr,
    exitCode,
    killed,
    ...(truncated && { truncated }),
    ...(error !== null && { error }),
  };
}
