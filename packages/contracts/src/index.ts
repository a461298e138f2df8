export type { ErrorBody, ErrorStatus } from './errors.ts';
export { ERROR_CODES, errorBodySchema } from './errors.ts';
export { formatPath, issuesToDetails } from './issues.ts';
export type {
  CreateJobInput,
  JobDetail,
  JobListItem,
  JobStatusName,
  ProxyConfig,
  Query,
  RenderConfig,
  RunView,
  Scheduling,
  UpdateJobInput,
} from './jobs.ts';
export {
  createJobSchema,
  JOB_STATUSES,
  jobDetailSchema,
  jobListItemSchema,
  jobListSchema,
  listJobsQuerySchema,
  listRunsQuerySchema,
  proxyConfigSchema,
  QUERY_TYPES,
  querySchema,
  renderConfigSchema,
  runAcceptedSchema,
  runListSchema,
  runSchema,
  schedulingSchema,
  updateJobSchema,
} from './jobs.ts';
