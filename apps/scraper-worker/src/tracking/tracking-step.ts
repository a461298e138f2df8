import { fieldChanges, type PageChangeTracking } from '@scrapejobs/content';
import type { PageTracking, RunFailure, TrackedPages } from '@scrapejobs/domain';
import { ExtractionError } from '@scrapejobs/extraction';
import { NO_MODEL_MESSAGE } from '@scrapejobs/llm';
import type { PageExtraction, PageExtractor } from '../extract/extractor.ts';
import type { ModelInput } from '../extract/model-tasks.ts';
import type { PageModel } from '../model/page-model.ts';

/** A page of a run, as the tracking step sees it. */
export interface TrackedUrl {
  seq: number;
  /** The URL as asked: a page's scrapes are found by it. */
  url: string;
}

/** Firecrawl's changeTracking for a run's pages (docs/api.md §24), for a job that asks for it. */
export interface TrackingStep {
  /**
   * The page's extraction with its document's `change_tracking`: compared with the account's
   * previous scrape of the URL under the job's tag, and noted as the latest scrape. In `json` mode
   * a changed page's fields are extracted from both versions; a warning says when they could not be.
   */
  apply(
    userId: string,
    runId: string,
    page: TrackedUrl,
    extracted: PageExtraction,
    signal: AbortSignal,
  ): Promise<{ extraction: PageExtraction; warning: RunFailure | null }>;
}

export interface TrackingDeps {
  pages: TrackedPages;
  extractor: PageExtractor;
  pageModel: PageModel | null;
}

/** The tracking step of a run, or null when its job does not track pages. */
export function trackingStep(tracking: PageTracking | null, deps: TrackingDeps): TrackingStep | null {
  if (!tracking) return null;
  const json = tracking.modes.includes('json');
  return {
    async apply(userId, runId, page, extracted, signal) {
      const { document } = extracted;
      // A job with changeTracking keeps markdown, so every page it fetched has a document.
      if (!document) return { extraction: extracted, warning: null };
      // The operator removed the model after the job was made.
      if (json && !deps.pageModel) throw new ExtractionError(NO_MODEL_MESSAGE);
      const previous = await deps.pages.record({
        runId,
        seq: page.seq,
        tag: tracking.tag,
        url: page.url,
        at: new Date(),
      });
      const tracked = await deps.extractor.track(
        userId,
        {
          document,
          previous,
          gitDiff: tracking.modes.includes('git-diff'),
          modelTokens: json ? (deps.pageModel?.maxInputTokens ?? null) : null,
        },
        signal,
      );
      if (!tracked.texts || !deps.pageModel)
        return { extraction: { ...extracted, document: tracked.document }, warning: null };
      const compared = await compareFields(deps.pageModel, userId, runId, tracking, tracked.texts, signal);
      const changeTracking: PageChangeTracking = {
        ...tracked.tracking,
        ...('json' in compared && { json: compared.json }),
      };
      const warning = 'warning' in compared ? compared.warning : null;
      const amended = await deps.extractor.amendDocument(
        userId,
        {
          document: tracked.document,
          fields: { change_tracking: changeTracking, ...(warning && { warning: warning.message }) },
        },
        signal,
      );
      return { extraction: { ...extracted, document: amended }, warning };
    },
  };
}

/**
 * `json` mode on a changed page: an object of each version by the job's schema and prompt, and
 * the fields that differ; a warning (the page keeps its status and diff) when either call failed.
 */
async function compareFields(
  pageModel: PageModel,
  userId: string,
  runId: string,
  tracking: PageTracking,
  texts: { previous: ModelInput; current: ModelInput },
  signal: AbortSignal,
): Promise<{ json: PageChangeTracking['json'] } | { warning: RunFailure }> {
  const key = `${runId} changeTracking`;
  const warn = (failed: { code: string; message: string }) => ({
    warning: { code: failed.code, message: `changeTracking json: ${failed.message}` },
  });
  const previous = await pageModel.object(userId, key, tracking, texts.previous.text, signal);
  if (!previous.ok) return warn(previous);
  const current = await pageModel.object(userId, key, tracking, texts.current.text, signal);
  if (!current.ok) return warn(current);
  return { json: fieldChanges(previous.value, current.value) };
}
