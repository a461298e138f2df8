import { z } from 'zod';

export const ERROR_CODES = {
  400: 'validation_error',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  /** A synchronous scrape of the Firecrawl-compatible API that did not finish in its timeout (§18). */
  408: 'request_timeout',
  409: 'conflict',
  /** An interact session of the Firecrawl-compatible API that ended; the next call opens a new one (§18). */
  410: 'gone',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  500: 'internal_error',
  /** An endpoint of the Firecrawl-compatible API this service does not offer (§18). */
  501: 'not_implemented',
  /** The operator's search engine failed (docs/api.md §25). */
  502: 'bad_gateway',
  503: 'service_unavailable',
  /** The operator's search engine did not answer in time (docs/api.md §25). */
  504: 'gateway_timeout',
} as const;

export type ErrorStatus = keyof typeof ERROR_CODES;

/** The shape of every error body (docs/api.md §9). */
export const errorBodySchema = z.object({
  error: z.string(),
  message: z.string(),
  details: z.record(z.string(), z.string()).optional(),
  status: z.int().optional(),
  retry_after: z.int().optional(),
});

export type ErrorBody = z.infer<typeof errorBodySchema>;
