import { type AttributeValues, pageAttributes, pageImages } from '@scrapejobs/content';
import type { DocumentView, FormatName } from '@scrapejobs/contracts';
import type { ActionOutputs, AttributeQuery, FirecrawlFormat, FirecrawlVersion } from './types.ts';

/** Firecrawl's Document, as much of it as this service fills. */
export interface FirecrawlDocument {
  markdown?: string;
  html?: string;
  rawHtml?: string;
  links?: string[];
  images?: string[];
  attributes?: AttributeValues[];
  screenshot?: string;
  json?: Record<string, unknown>;
  summary?: string;
  changeTracking?: ChangeTracking;
  /** Why the language model's output is missing (docs/api.md §24). */
  warning?: string;
  actions?: {
    screenshots: string[];
    scrapes: { url: string; html: string }[];
    javascriptReturns: { type: string; value: unknown }[];
    pdfs: string[];
  };
  metadata: Record<string, unknown>;
}

/** Firecrawl's changeTracking of a document: how the page compares with the account's previous scrape. */
export interface ChangeTracking {
  previousScrapeAt: string | null;
  changeStatus: 'new' | 'same' | 'changed' | 'removed';
  visibility: 'visible' | 'hidden';
  diff?: { text: string; json: unknown };
  json?: Record<string, unknown>;
}

export interface DocumentOptions {
  version: FirecrawlVersion;
  /** The formats asked for, in Firecrawl's names: only these appear. */
  formats: readonly FirecrawlFormat[];
  /** Where the page's screenshot is served, when it has one. */
  screenshotUrl: string | null;
  /** Why the page failed, when it did. */
  error?: string | undefined;
  /** The `screenshot`, `scrape` and `executeJavascript` actions asked for (ScrapeOptions.actionOutputs). */
  actions?: ActionOutputs | undefined;
  /** The attributes format's selectors. */
  attributes?: readonly AttributeQuery[] | undefined;
}

/** This service's formats in Firecrawl's names (metadata is always in a Firecrawl document). */
const FIRECRAWL_FORMAT: Partial<Record<FormatName, FirecrawlFormat>> = {
  markdown: 'markdown',
  html: 'html',
  raw_html: 'rawHtml',
  links: 'links',
  screenshot: 'screenshot',
  summary: 'summary',
};

/**
 * A job's formats (its extract the json format, its page tracking the changeTracking format) as
 * the Firecrawl formats a document of it shows.
 */
export const firecrawlFormats = (
  formats: readonly FormatName[],
  extract = false,
  tracking = false,
): FirecrawlFormat[] => [
  ...formats.flatMap((format) => FIRECRAWL_FORMAT[format] ?? []),
  ...(extract ? (['json'] as const) : []),
  ...(tracking ? (['changeTracking'] as const) : []),
];

/** A document's change_tracking in Firecrawl's names. */
function changeTracking(tracking: NonNullable<DocumentView['change_tracking']>): ChangeTracking {
  return {
    previousScrapeAt: tracking.previous_scrape_at,
    changeStatus: tracking.change_status,
    visibility: tracking.visibility,
    ...(tracking.diff && { diff: tracking.diff }),
    ...(tracking.json && { json: tracking.json }),
  };
}

/** og:* properties Firecrawl names itself (key without the prefix → Firecrawl's name). */
const OG_NAMES: Readonly<Record<string, string>> = {
  title: 'ogTitle',
  description: 'ogDescription',
  url: 'ogUrl',
  image: 'ogImage',
  audio: 'ogAudio',
  determiner: 'ogDeterminer',
  locale: 'ogLocale',
  site_name: 'ogSiteName',
  video: 'ogVideo',
};

/** Metadata fields of a document that have a Firecrawl name of their own, or none. */
const HANDLED = new Set([
  'title',
  'description',
  'language',
  'canonical_url',
  'keywords',
  'robots',
  'favicon',
  'og',
  'twitter',
  'published_time',
  'modified_time',
  'json_ld',
  'status_code',
  'content_type',
  'source_url',
  'url',
  'pages',
]);

type Metadata = NonNullable<DocumentView['metadata']>;

function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== null && value !== undefined) out[key] = value;
}

/**
 * The document's metadata in Firecrawl's names: the named og fields (ogTitle, ogSiteName, …)
 * and, as Firecrawl does, every og:* and twitter:* meta under its own name; a PDF's `pages`
 * as `numPages` and its other fields (author, …) as they are.
 */
function firecrawlMetadata(doc: DocumentView, error: string | undefined): Record<string, unknown> {
  const m: Partial<Metadata> = doc.metadata ?? {};
  const out: Record<string, unknown> = {};
  for (const key of ['title', 'description', 'language', 'keywords', 'robots', 'favicon'] as const)
    put(out, key, m[key]);
  const og = m.og ?? {};
  for (const [key, name] of Object.entries(OG_NAMES)) put(out, name, og[key]);
  put(out, 'ogLocaleAlternate', og['locale:alternate'] === undefined ? undefined : [og['locale:alternate']]);
  put(out, 'publishedTime', m.published_time);
  put(out, 'modifiedTime', m.modified_time);
  put(out, 'numPages', m.pages);
  for (const [key, value] of Object.entries(m)) if (!HANDLED.has(key)) put(out, key, value);
  for (const [key, value] of Object.entries(og)) out[`og:${key}`] = value;
  for (const [key, value] of Object.entries(m.twitter ?? {})) out[`twitter:${key}`] = value;
  out.sourceURL = m.source_url ?? doc.url;
  out.url = m.url ?? doc.url;
  put(out, 'statusCode', m.status_code ?? doc.status_code);
  put(out, 'contentType', m.content_type);
  out.proxyUsed = 'basic';
  put(out, 'error', error);
  return out;
}

/** A page's document (GET …/documents) as Firecrawl's Document: the asked formats and metadata. */
export function firecrawlDocument(doc: DocumentView, options: DocumentOptions): FirecrawlDocument {
  const out: FirecrawlDocument = { metadata: {} };
  const asked = new Set(options.formats);
  if (asked.has('markdown') && doc.markdown !== undefined) out.markdown = doc.markdown;
  if (asked.has('html') && doc.html !== undefined) out.html = doc.html;
  if (asked.has('rawHtml') && doc.raw_html !== undefined) out.rawHtml = doc.raw_html;
  if (asked.has('links') && doc.links !== undefined) out.links = doc.links;
  // Read from the page's HTML as it arrived (the job keeps it for them).
  const pageUrl = doc.metadata?.url ?? doc.url;
  if (asked.has('images') && doc.raw_html !== undefined) out.images = pageImages(doc.raw_html, pageUrl);
  if (asked.has('attributes') && doc.raw_html !== undefined)
    out.attributes = pageAttributes(doc.raw_html, options.attributes ?? []);
  if (asked.has('screenshot') && options.screenshotUrl !== null) out.screenshot = options.screenshotUrl;
  if (asked.has('json') && doc.json !== undefined) out.json = doc.json;
  if (asked.has('summary') && doc.summary !== undefined) out.summary = doc.summary;
  if (asked.has('changeTracking') && doc.change_tracking !== undefined)
    out.changeTracking = changeTracking(doc.change_tracking);
  if (doc.warning !== undefined) out.warning = doc.warning;
  const actions = options.actions;
  if (actions !== undefined && actions.screenshots + actions.scrapes + actions.scripts > 0) {
    // Both are taken after the last action (see planRender), so each is the page's final state.
    const shot = options.screenshotUrl;
    const html = doc.raw_html;
    out.actions = {
      screenshots: shot === null ? [] : Array.from({ length: actions.screenshots }, () => shot),
      scrapes:
        html === undefined ? [] : Array.from({ length: actions.scrapes }, () => ({ url: pageUrl, html })),
      javascriptReturns: doc.javascript_returns ?? [],
      pdfs: [],
    };
  }
  out.metadata = firecrawlMetadata(doc, options.error);
  return out;
}
