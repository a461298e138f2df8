export type {
  ChangeSummary,
  ChangeTracking,
  ChangeTypeName,
  ChangeView,
  RunHealth,
} from './changes.ts';
export {
  CHANGE_TYPES,
  changeListSchema,
  changeSchema,
  changeTrackingSchema,
  HEALTH_CODES,
  healthSchema,
  listChangesQuerySchema,
  MAX_KEY_NAMES,
  runChangesSchema,
  unknownKeyNames,
} from './changes.ts';
export type { ErrorBody, ErrorStatus } from './errors.ts';
export { ERROR_CODES, errorBodySchema } from './errors.ts';
export { formatPath, issuesToDetails } from './issues.ts';
export type {
  Crawl,
  CreateJobInput,
  FollowQuery,
  JobDetail,
  JobListItem,
  JobStatusName,
  ProxyConfig,
  Query,
  RenderConfig,
  RunUrlView,
  RunView,
  Scheduling,
  UpdateJobInput,
  UrlStatusName,
} from './jobs.ts';
export {
  crawlSchema,
  createJobSchema,
  followQuerySchema,
  JOB_STATUSES,
  jobDetailSchema,
  jobListItemSchema,
  jobListSchema,
  listJobsQuerySchema,
  listRunsQuerySchema,
  listRunUrlsQuerySchema,
  proxyConfigSchema,
  QUERY_TYPES,
  querySchema,
  renderConfigSchema,
  runAcceptedSchema,
  runListSchema,
  runSchema,
  runUrlListSchema,
  runUrlSchema,
  SKIP_CODES,
  schedulingSchema,
  URL_STATUSES,
  updateJobSchema,
} from './jobs.ts';
export type { RenderAction, RequestCookie, RequestSettings } from './request.ts';
export { renderActionSchema, requestSchema, SECRET_MASK } from './request.ts';
export type { DownloadFormat, ResultList, ResultView } from './results.ts';
export {
  DOWNLOAD_FORMATS,
  downloadQuerySchema,
  listResultsQuerySchema,
  resultListSchema,
  resultSchema,
} from './results.ts';
export { unstorableText } from './text.ts';
export type {
  CreateWebhookInput,
  DeliveryStatusName,
  DeliveryView,
  FailureCode,
  OutboxData,
  WebhookEventName,
  WebhookView,
} from './webhooks.ts';
export {
  createWebhookSchema,
  deliveryListSchema,
  deliverySchema,
  encodeEnvelope,
  FAILURE_CODES,
  listDeliveriesQuerySchema,
  listWebhooksQuerySchema,
  RESEND_COMMAND,
  resendCommandSchema,
  TEST_EVENT,
  WEBHOOK_EVENTS,
  webhookListSchema,
  webhookSchema,
} from './webhooks.ts';
