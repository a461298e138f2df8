// An extraction thread: a job's queries (and a crawl's link queries) on one page, or a sitemap,
// bounded in time by the extraction library and in heap by the pool that runs this thread (it is
// terminated past either).
import { workerData } from 'node:worker_threads';
import {
  type BodyKind,
  bodyKind,
  htmlDocument,
  type PageDocument,
  packDocument,
  pageDiff,
  pdfDocument,
  textDocument,
} from '@scrapejobs/content';
import { LinkFilter, normalizeUrl, readSitemap } from '@scrapejobs/crawl';
import {
  type CompiledJob,
  type CompiledLinks,
  compileJob,
  compileLinks,
  decodeHtml,
  extractPage,
  extractText,
} from '@scrapejobs/extraction';
import { serveTasks } from '@scrapejobs/sandbox';
import type {
  ExtractTask,
  PageExtraction,
  SitemapTask,
  SitemapUrls,
  ThreadSettings,
  ThreadTask,
  ThreadValue,
  UrlFilterSpec,
} from './extractor.ts';
import { amendTask, checkTask, htmlModelInput, type ModelInput, textModelInput } from './model-tasks.ts';
import { trackTask } from './tracking-tasks.ts';

const { timeLimitMs } = workerData as ThreadSettings;
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

async function extractTask(task: ExtractTask): Promise<PageExtraction> {
  const { links, page, document: spec } = task;
  const entry = compiledFor(task.key, () => ({
    job: compileJob(task.queries, { timeLimitMs }),
    links: links ? compileLinks(links.follow) : null,
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
  return withDocument(
    { records: records.length, json: JSON.stringify(records), links: found, ...withModelInput(modelInput) },
    document,
  );
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

function runTask(task: ThreadTask): ThreadValue | Promise<ThreadValue> {
  switch (task.type) {
    case 'page':
      return extractTask(task);
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
}

serveTasks<ThreadTask, ThreadValue>(
  runTask,
  // A document's bytes move to the worker's thread instead of being copied.
  (value) =>
    typeof value === 'object' && value !== null && 'document' in value && value.document
      ? [value.document.data.buffer as ArrayBuffer]
      : typeof value === 'object' && value !== null && 'markdownHash' in value
        ? [value.data.buffer as ArrayBuffer]
        : [],
);
