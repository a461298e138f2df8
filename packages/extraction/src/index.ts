export { decodeHtml } from './internal/decode.ts';
export { ExtractionError, type ExtractionLimitName } from './internal/errors.ts';
export { countGlob, expandGlob, type GlobResult } from './internal/glob-api.ts';
export {
  type CompiledJob,
  type CompileOptions,
  type CompileResult,
  compileJob,
  compileQuery,
  DEFAULT_COMPILE_TIME_LIMIT_MS,
  extract,
  type QuerySpec,
  type QueryType,
  tooExpensiveToCompile,
} from './internal/job.ts';
export { DEFAULT_EXTRACTION_LIMITS, type ExtractionLimits } from './internal/limits.ts';
export type { ExtractedRecord as Record } from './internal/records.ts';
