export { decodeHtml } from './internal/decode.ts';
export { ExtractionError, type ExtractionLimitName } from './internal/errors.ts';
export { countGlob, expandGlob, type GlobResult } from './internal/glob-api.ts';
export {
  type CompiledJob,
  compileJob,
  extract,
  extractPage,
  extractText,
  type PageExtraction,
  type QuerySpec,
} from './internal/job.ts';
export { DEFAULT_EXTRACTION_LIMITS, type ExtractionLimits, MAX_RECORDS_LIMIT } from './internal/limits.ts';
export { type CompiledLinks, compileLinks, type LinkOptions } from './internal/links.ts';
export {
  type CompileOptions,
  type CompileResult,
  compileQuery,
  DEFAULT_COMPILE_TIME_LIMIT_MS,
  type QueryType,
  tooExpensiveToCompile,
} from './internal/query.ts';
export type { ExtractedRecord as Record } from './internal/records.ts';
