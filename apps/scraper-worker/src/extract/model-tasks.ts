// The language model's side of the extraction threads (docs/api.md §24): the page's text as the
// model reads it, an answer checked against the job's schema, and model output added to a
// packed document. Off the worker's event loop, within the thread's time and memory limits: a
// schema's patterns run on text the page shaped.
import {
  type ContentOptions,
  htmlDocument,
  type PackedDocument,
  type PageDocument,
  type PageInfo,
  packDocument,
  unpackDocument,
} from '@scrapejobs/content';
import { compileExtractSchema, cutToTokens, type ExtractSchema } from '@scrapejobs/llm';

/** The page's text for the model: its markdown with the job's content settings, cut to `maxTokens`. */
export interface ModelInputSpec {
  maxTokens: number;
  content: Omit<ContentOptions, 'formats'>;
}

/** The text the model reads, its tokens, and whether it was cut to LLM_MAX_INPUT_TOKENS. */
export interface ModelInput {
  text: string;
  tokens: number;
  cut: boolean;
}

/** Checks a parsed answer against the job's schema (compiled once per `key`, a run id). */
export interface CheckTask {
  key: string;
  schema: Record<string, unknown>;
  value: Record<string, unknown>;
}

/** Output of the model (and a page's comparison with its previous scrape) to add to a packed document. */
export interface AmendTask {
  document: PackedDocument;
  fields: Pick<PageDocument, 'summary' | 'json' | 'warning' | 'change_tracking'>;
}

/** The markdown of an HTML page as the model reads it: the document's when it has one, else made here. */
export function htmlModelInput(
  spec: ModelInputSpec,
  html: string,
  page: PageInfo,
  document: PageDocument | undefined,
): ModelInput {
  const markdown =
    document?.markdown ?? htmlDocument(html, page, { ...spec.content, formats: ['markdown'] }).markdown;
  return cutToTokens(markdown ?? '', spec.maxTokens);
}

/** Plain text (a PDF's, a text file's) as the model reads it. */
export const textModelInput = (spec: ModelInputSpec, text: string): ModelInput =>
  cutToTokens(text, spec.maxTokens);

const CACHED_SCHEMAS = 16;
const schemas = new Map<string, ExtractSchema>();

/** Null when the value is valid, else what is wrong with it. */
export function checkTask(task: CheckTask): string | null {
  let schema = schemas.get(task.key);
  if (schema) schemas.delete(task.key);
  else schema = compileExtractSchema(task.schema);
  schemas.set(task.key, schema);
  if (schemas.size > CACHED_SCHEMAS) schemas.delete(schemas.keys().next().value!);
  return schema.check(task.value);
}

/** The document with the fields added (a warning after the one it has), packed again. */
export function amendTask(task: AmendTask): PackedDocument {
  const document = unpackDocument(task.document.data);
  const warning = [document.warning, task.fields.warning].filter(Boolean).join('; ');
  return packDocument({ ...document, ...task.fields, ...(warning && { warning }) });
}
