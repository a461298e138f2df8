import { MAX_JSON_DEPTH } from '@scrapejobs/contracts';
import type { PageChangeTracking } from './tracking.ts';

/** The formats a document may hold (docs/api.md §17); `screenshot` is the renderer's, not a document's. */
export type DocumentFormat = 'markdown' | 'html' | 'raw_html' | 'links' | 'metadata';

/** Which parts of a page a document keeps (the job field `content`). */
export interface ContentOptions {
  formats: readonly DocumentFormat[];
  /** Keep only the main content (what a reader view keeps); else the whole body. */
  onlyMainContent: boolean;
  /** CSS selectors: only the elements they match are kept (before the main-content step). */
  includeTags: readonly string[];
  /** CSS selectors: the elements they match are removed. */
  excludeTags: readonly string[];
}

/** Where a page came from, for its metadata and for resolving its URLs. */
export interface PageInfo {
  /** The URL asked for. */
  sourceUrl: string;
  /** The URL it ended at after redirects: relative URLs resolve against it (or its <base href>). */
  url: string;
  statusCode: number | null;
  contentType: string | null;
}

export interface Metadata {
  title: string | null;
  description: string | null;
  language: string | null;
  canonical_url: string | null;
  keywords: string | null;
  robots: string | null;
  favicon: string | null;
  /** The og:* properties, keys without the prefix. */
  og: Record<string, string>;
  /** The twitter:* properties, keys without the prefix. */
  twitter: Record<string, string>;
  published_time: string | null;
  modified_time: string | null;
  /** The page's JSON-LD blocks parsed (≤ 20, ≤ 64 KiB each; an invalid block is skipped). */
  json_ld: unknown[];
  status_code: number | null;
  content_type: string | null;
  source_url: string;
  url: string;
  /** A PDF's own fields (title and author above them are the PDF's): pages, author, … */
  [key: string]: unknown;
}

/** One fetched URL's content, only the formats asked for; `truncated` names values cut at their limit. */
export interface PageDocument {
  markdown?: string;
  html?: string;
  raw_html?: string;
  links?: string[];
  metadata?: Metadata;
  /** Written by the operator's language model (docs/api.md §24), added after the document is made. */
  summary?: string;
  json?: Record<string, unknown>;
  /** Why the language model's output is missing or was given a cut page. */
  warning?: string;
  /** How the page compares with the account's previous scrape of it (Firecrawl's changeTracking). */
  change_tracking?: PageChangeTracking;
  /** The values of the render's execute_javascript steps (docs/api.md §14), in order. */
  javascript_returns?: { type: string; value: unknown }[];
  truncated: string[];
}

/** The limits of docs/api.md §17, in UTF-8 bytes or items. */
export const DOCUMENT_LIMITS = Object.freeze({
  markdownBytes: 5 * 1024 * 1024,
  htmlBytes: 5 * 1024 * 1024,
  rawHtmlBytes: 10 * 1024 * 1024,
  links: 10_000,
  jsonLdBlocks: 20,
  jsonLdBytes: 64 * 1024,
  jsonLdDepth: MAX_JSON_DEPTH,
  pdfBytes: 50 * 1024 * 1024,
  pdfPages: 2_000,
});
