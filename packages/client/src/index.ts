export { ScrapeJobs } from './internal/client.ts';
export {
  ApiError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ScrapeJobsError,
  ServiceUnavailableError,
  ValidationError,
  WaitTimeoutError,
  type WebhookVerificationCode,
  WebhookVerificationError,
} from './internal/errors.ts';
export type { Jobs } from './internal/jobs.ts';
export type {
  DownloadDone,
  DownloadOptions,
  DownloadProgress,
  DownloadStream,
  Results,
} from './internal/results.ts';
export type { Runs, WaitOptions } from './internal/runs.ts';
export type { ClientOptions, RetryEvent, RetryOptions } from './internal/transport.ts';
export type * from './internal/types.ts';
export { type VerifyWebhookOptions, verifyWebhook, type WebhookHeaders } from './internal/verify.ts';
export type { Webhooks } from './internal/webhooks.ts';
