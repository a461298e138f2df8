export { decodeHtml } from './internal/decode.ts';
export { ExtractionError } from './internal/errors.ts';
export { countGlob, expandGlob, type GlobResult } from './internal/glob-api.ts';
export {
  type CompiledJob,
  type CompileResult,
  compileJob,
  compileQuery,
  type ExtractionLimits,
  extract,
  type QuerySpec,
  type QueryType,
} from './internal/job.ts';
export type { ExtractedRecord as Record } from './internal/records.ts';
