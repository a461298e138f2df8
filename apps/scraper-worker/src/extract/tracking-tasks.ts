// The extraction threads' side of Firecrawl's changeTracking (docs/api.md §24): a page's markdown
// compared with its previous scrape's, off the worker's event loop and within the thread's limits
// (a diff of two 5 MiB pages is bounded in time, and both documents are unpacked here).
import {
  compareMarkdown,
  type PackedDocument,
  type PageChangeTracking,
  packDocument,
  unpackDocument,
} from '@scrapejobs/content';
import { cutToTokens } from '@scrapejobs/llm';
import type { ModelInput } from './model-tasks.ts';

/** A page's document to compare with the previous scrape's. */
export interface TrackTask {
  /** The page's document, packed (its bytes move to the thread). */
  document: PackedDocument;
  /** The previous scrape of the page: when, and its packed document; null when there is none. */
  previous: { scrapedAt: Date; document: Uint8Array } | null;
  /** `git-diff` mode: a changed page's document gets the diff. */
  gitDiff: boolean;
  /** `json` mode: a changed page gives both markdowns cut to this many tokens for the model; else null. */
  modelTokens: number | null;
}

/** The page's document with its `change_tracking`, and for `json` mode what the model reads of both versions. */
export interface TrackedDocument {
  document: PackedDocument;
  tracking: PageChangeTracking;
  texts?: { previous: ModelInput; current: ModelInput };
}

export function trackTask(task: TrackTask): TrackedDocument {
  const document = unpackDocument(task.document.data);
  const current = document.markdown ?? '';
  const previous = task.previous && {
    scrapedAt: task.previous.scrapedAt,
    markdown: unpackDocument(task.previous.document).markdown ?? '',
  };
  const tracking = compareMarkdown(previous, current, task.gitDiff);
  const packed = packDocument({ ...document, change_tracking: tracking });
  if (tracking.change_status !== 'changed' || task.modelTokens === null || previous === null)
    return { document: packed, tracking };
  return {
    document: packed,
    tracking,
    texts: {
      previous: cutToTokens(previous.markdown, task.modelTokens),
      current: cutToTokens(current, task.modelTokens),
    },
  };
}
