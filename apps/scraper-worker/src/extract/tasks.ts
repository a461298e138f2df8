// What an extraction thread or process does: a job's queries (and a crawl's link queries) on one
// page, or a sitemap, a diff, a model's answer or a tracked document, bounded in time by the
// extraction library and in heap by what runs it (a thread of the pool, or a process of its own).
import {
  type BodyKind,
  bodyKind,
  htmlDocument,
  type PageDocument,
  packDocument,
  pageDiff,
  pdfDocument,
  plainPageSignals,
  textDocument,
} from '@scrapejobs/content';
import { LinkFilter, normalizeUrl, readSitemap } from '@scrapejobs/crawl';
import {
  type CompiledJob,
  type CompiledLinks,
  compileJob,
  compileLinks,
  decodeHtml,
  type Record as ExtractedRecord,
  extractPage,
  extractText,
} from '@scrapejobs/extraction';
import type {
  ExtractTask,
  PageExtraction,
  RenderReason,
  SitemapTask,
  SitemapUrls,
  ThreadTask,
  ThreadValue,
  UrlFilterSpec,
} from './extractor.ts';
import { amendTask, checkTask, htmlModelInput, type ModelInput, textModelInput } from './model-tasks.ts';
import { trackTask } from './tracking-tasks.ts';

const CACHED_JOBS = 16;

interface Compiled {
  job: CompiledJob;
  links: CompiledLinks | null;
  filter: LinkFilter | null;
}

// Compiled queries and filters by task key, most recently used last.
const compiled = new Map<string, Compiled>();

function compiledFor(key: string, make: () => Compiled): Compiled {
  let entry = compiled.get(key);
  if (entry) compiled.delete(key);
  else entry = make();
  compiled.set(key, entry);
  if (compiled.size > CACHED_JOBS) compiled.delete(compiled.keys().next().value!);
  return entry;
}

const filterOf = (spec: UrlFilterSpec) => new LinkFilter(spec);

async function extractTask(task: ExtractTask, timeLimitMs: number): Promise<PageExtraction> {
  const { links, page, document: spec } = task;
  const entry = compiledFor(task.key, () => ({
    job: compileJob(task.queries, { timeLimitMs }),
    links: links ? compileLinks(links.follow, timeLimitMs) : null,
    filter: links ? filterOf(links.filter) : null,
  }));
  let html: string;
  let kind: BodyKind = 'html';
  if ('body' in page) {
    const body = Buffer.from(page.body.buffer, page.body.byteOffset, page.body.byteLength);
    kind = bodyKind(page.contentType, body);
    if (kind === 'pdf') return pdfTask(entry.job, task, body);
    html = decodeHtml(body, page.contentType);
  } else html = page.html;
  const { records, links: found } = extractPage(
    entry.job,
    html,
    links && entry.links && entry.filter
      ? {
          compiled: entry.links,
          baseUrl: links.baseUrl,
          accept: acceptWith(entry.filter),
        }
      : undefined,
  );
  const document =
    spec &&
    (kind === 'html'
      ? htmlDocument(html, spec, spec)
      : textDocument(kind === 'text' ? html : null, spec, spec));
  if (document && spec.javascriptReturns) document.javascript_returns = spec.javascriptReturns;
  const modelInput =
    task.model &&
    (kind === 'html'
      ? htmlModelInput(task.model, html, task.model.page, document)
      : textModelInput(task.model, kind === 'text' ? html : ''));
  const renderNeed = task.renderCheck && (kind === 'html' ? renderNeedOf(task, html, records) : null);
  return withDocument(
    {
      records: records.length,
      json: JSON.stringify(records),
      links: found,
      ...withModelInput(modelInput),
      ...(renderNeed !== undefined && { renderNeed }),
    },
    document,
  );
}

/**
 * Why a plainly fetched HTML page needs rendering (docs/api.md §23); null when it does not. With
 * a `full` check, a page that runs scripts also needs it when one of the job's queries finds nothing.
 */
function renderNeedOf(
  task: ExtractTask,
  html: string,
  records: readonly ExtractedRecord[],
): RenderReason | null {
  const { scripts, signal } = plainPageSignals(html);
  if (signal) return signal;
  const missing = task.queries.some((query) => !records.some((record) => record[query.name] != null));
  return task.renderCheck === 'full' && scripts && missing ? 'queries_empty' : null;
}

const withModelInput = (modelInput: ModelInput | undefined) => (modelInput ? { modelInput } : {});

/** A PDF: its text (regex queries apply to it) and, when asked, its document (docs/api.md §17). */
async function pdfTask(job: CompiledJob, task: ExtractTask, body: Buffer): Promise<PageExtraction> {
  const { document: spec } = task;
  const hasRegex = task.queries.some((query) => query.type === 'regex');
  if (!spec && !hasRegex && !task.model) return { records: 0, json: '[]', links: [] };
  const info = spec ?? { sourceUrl: '', url: '', statusCode: null, contentType: null };
  const { document, text } = await pdfDocument(body, info, spec?.formats ?? []);
  const records = hasRegex ? extractText(job, text) : [];
  const modelInput = task.model && textModelInput(task.model, text);
  return withDocument(
    { records: records.length, json: JSON.stringify(records), links: [], ...withModelInput(modelInput) },
    spec && document,
  );
}

const withDocument = (extraction: PageExtraction, document: PageDocument | undefined): PageExtraction =>
  document ? { ...extraction, document: packDocument(document) } : extraction;

const acceptWith =
  (filter: LinkFilter) =>
  (raw: string, base: string): string | null => {
    const url = normalizeUrl(raw, base);
    return url !== null && filter.accepts(url) ? url : null;
  };

function sitemapTask(task: SitemapTask): SitemapUrls {
  const { kind, urls } = readSitemap(task.body);
  const normalised = urls.flatMap((raw) => normalizeUrl(raw) ?? []);
  if (kind === 'index') return { kind, urls: [...new Set(normalised)] };
  const filter = compiledFor(`${task.key} sitemap`, () => ({
    job: compileJob([]),
    links: null,
    filter: filterOf(task.filter),
  })).filter!;
  return { kind, urls: [...new Set(normalised.filter((url) => filter.accepts(url)))] };
}

/** Runs tasks whose queries stop themselves after `timeLimitMs`. */
export const taskRunner =
  (timeLimitMs: number) =>
  (task: ThreadTask): ThreadValue | Promise<ThreadValue> => {
    switch (task.type) {
      case 'page':
        return extractTask(task, timeLimitMs);
      case 'sitemap':
        return sitemapTask(task);
      case 'diff':
        return pageDiff(task.before, task.after);
      case 'check':
        return checkTask(task);
      case 'amend':
        return amendTask(task);
      case 'track':
        return trackTask(task);
    }
  };

/** A value's buffers that move to the receiving thread instead of being copied. */
export function transferOf(value: ThreadValue): ArrayBuffer[] {
  if (typeof value !== 'object' || value === null) return [];
  if ('document' in value && value.document) return [value.document.data.buffer as ArrayBuffer];
  if ('markdownHash' in value) return [value.data.buffer as ArrayBuffer];
  return [];
}
