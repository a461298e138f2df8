// The rules of jobs, runs and their URLs, results, webhooks and keys, written once: the API, the
// console and both workers call these services and stores; apps keep only their transport.
export {
  type Account,
  AccountError,
  Accounts,
  normalizeEmail,
  passwordStamp,
} from './internal/accounts/accounts.ts';
export { verifyPassword } from './internal/accounts/password.ts';
export { type MonthUsage, type QueueUsage, UsageService } from './internal/accounts/usage.ts';
export {
  AppError,
  conflict,
  forbidden,
  notFound,
  unauthorized,
  unavailable,
  validationError,
} from './internal/errors.ts';
export {
  type CompatError,
  type CompatOptions,
  type CompatRun,
  CompatService,
} from './internal/jobs/compat.ts';
export { cronPattern, nextRunAt, type ScheduleUnit } from './internal/jobs/cron.ts';
export { toDetail, toListItem, toRunView } from './internal/jobs/presenter.ts';
export { type OpenedRequest, openRequest, type StoredRequest } from './internal/jobs/request.ts';
export { QueueScheduler, type Scheduler } from './internal/jobs/scheduler.ts';
export {
  type CompatJob,
  JobsService,
  type JobsServiceOptions,
  type RunAnnouncer,
  screenshotType,
  type TickOutcome,
} from './internal/jobs/service.ts';
export {
  KEY_CACHE_TTL_MS,
  KeyCache,
  type KeyChanges,
  redisKeyChanges,
  subscribedKeyCache,
} from './internal/keys/key-cache.ts';
export { KeysService, type KeyView, newToken, parseScopes } from './internal/keys/service.ts';
export {
  fieldNames,
  type Job,
  type Run,
  type RunFailure,
  type StoredExtract,
  toJob,
  toRun,
} from './internal/model.ts';
export { type OutboxKind, outboxEvent } from './internal/outbox.ts';
export { decodeCursor, encodeCursor, type Page, pageOf } from './internal/paging.ts';
export {
  hashToken,
  type Owner,
  type Principal,
  SCOPES,
  type Scope,
  TOKEN_FORMAT,
} from './internal/principal.ts';
export { toResultView } from './internal/results/presenter.ts';
export {
  type DocumentPage,
  type Download,
  type ResultPage,
  type ResultsOptions,
  ResultsService,
  type StoredResult,
} from './internal/results/service.ts';
export { type Analysis, type ChangeCounts, RunAnalysis } from './internal/runs/analysis.ts';
export type { RunChangesQuery } from './internal/runs/changes.ts';
export {
  type ClaimedUrl,
  Frontier,
  MAX_TAKE_OVERS,
  type PreviousFetch,
  type RunState,
  seedUrls,
  type UrlKindName,
} from './internal/runs/frontier.ts';
export {
  type RetentionOptions,
  RetentionSweep,
  type RetentionTable,
  type SweepResult,
} from './internal/runs/retention.ts';
export { fetchSettingsHash, type RunSettings } from './internal/runs/settings.ts';
export {
  ACCEPTED_BEYOND_MAX_PAGES,
  type Batch,
  type FoundUrl,
  type PageRows,
  type RunEnding,
  RunStore,
  type Screenshot,
  type StoredDocument,
  type UrlOutcome,
} from './internal/runs/store.ts';
export {
  type PageTracking,
  pageTrackingSchema,
  TRACKING_MODES,
  TrackedPages,
  type TrackedScrape,
  type TrackingMode,
} from './internal/runs/tracked-pages.ts';
export type { FetchValidators } from './internal/runs/unchanged.ts';
export type { RunUrlsQuery } from './internal/runs/urls.ts';
export {
  type AttemptRecord,
  DeliveryStore,
  type DeliveryWithWebhook,
} from './internal/webhooks/deliveries.ts';
export {
  type DeliveryEntry,
  type DeliveryEntryKind,
  entryId,
  readEntry,
} from './internal/webhooks/entries.ts';
export { type DeliveryQueue, OutboxFanOut, startFanOutLoop } from './internal/webhooks/fan-out.ts';
export { isFirecrawlTerminal, type JobWebhook, openFirecrawlSecret } from './internal/webhooks/firecrawl.ts';
export {
  type DeliveryRow,
  toDeliveryView,
  toWebhookView,
  type WebhookRow,
} from './internal/webhooks/presenter.ts';
export { pruneEvents } from './internal/webhooks/prune.ts';
export { type WebhookSettings, WebhooksService } from './internal/webhooks/service.ts';
export { LostDeliverySweep } from './internal/webhooks/sweep.ts';
