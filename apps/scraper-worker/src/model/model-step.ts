import type { ContentOptions, PageInfo } from '@scrapejobs/content';
import type { RunFailure, RunSettings } from '@scrapejobs/domain';
import { ExtractionError } from '@scrapejobs/extraction';
import { NO_MODEL_MESSAGE } from '@scrapejobs/llm';
import type { ExtractTask, PageExtraction, PageExtractor } from '../extract/extractor.ts';
import type { ModelWork, PageModel } from './page-model.ts';

/** The language model's part in a run's pages (docs/api.md §24), for a job that asks it something. */
export interface ModelStep {
  pageModel: PageModel | null;
  /** What the extraction thread gives the model: the page's markdown, cut to LLM_MAX_INPUT_TOKENS. */
  input(page: PageInfo, content: ContentOptions | null): ExtractTask['model'];
  /**
   * The page's extraction with the model's output: a job with extract gets its one record (none
   * when the model gave no usable object), a kept document gains summary, json and warning.
   */
  apply(
    userId: string,
    runId: string,
    extracted: PageExtraction,
    signal: AbortSignal,
  ): Promise<{ extraction: PageExtraction; warning: RunFailure | null }>;
}

/** The model step of a run, or null when its job asks the model nothing. */
export function modelStep(
  settings: RunSettings,
  pageModel: PageModel | null,
  extractor: PageExtractor,
): ModelStep | null {
  const work: ModelWork = { extract: settings.extract, summary: settings.formats.includes('summary') };
  if (!work.extract && !work.summary) return null;
  return {
    pageModel,
    input: (page, content) =>
      pageModel
        ? {
            page,
            maxTokens: pageModel.maxInputTokens,
            content: {
              onlyMainContent: content?.onlyMainContent ?? settings.content?.only_main_content ?? true,
              includeTags: content?.includeTags ?? settings.content?.include_tags ?? [],
              excludeTags: content?.excludeTags ?? settings.content?.exclude_tags ?? [],
            },
          }
        : undefined,
    async apply(userId, runId, extracted, signal) {
      // The operator removed the model after the job was made.
      if (!pageModel || !extracted.modelInput) throw new ExtractionError(NO_MODEL_MESSAGE);
      const output = await pageModel.apply(userId, runId, work, extracted.modelInput, signal);
      let extraction: PageExtraction = { ...extracted };
      if (work.extract)
        extraction = output.record
          ? { ...extraction, records: 1, json: JSON.stringify([output.record]) }
          : { ...extraction, records: 0, json: '[]' };
      if (extracted.document && Object.keys(output.fields).length > 0)
        extraction.document = await extractor.amendDocument(
          userId,
          { document: extracted.document, fields: output.fields },
          signal,
        );
      return { extraction, warning: output.warning };
    },
  };
}
