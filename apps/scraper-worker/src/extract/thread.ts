// An extraction thread: a job's queries (and a crawl's link queries) on one page, or a sitemap,
// bounded in time by the extraction library and in heap by the pool that runs this thread (it is
// terminated past either).
import { workerData } from 'node:worker_threads';
import { LinkFilter, normalizeUrl, readSitemap } from '@scrapejobs/crawl';
import {
  type CompiledJob,
  type CompiledLinks,
  compileJob,
  compileLinks,
  decodeHtml,
  extractPage,
} from '@scrapejobs/extraction';
import { serveTasks } from '@scrapejobs/sandbox';
import type {
  ExtractTask,
  PageExtraction,
  SitemapTask,
  SitemapUrls,
  ThreadSettings,
  ThreadTask,
  UrlFilterSpec,
} from './extractor.ts';

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

function extractTask(task: ExtractTask): PageExtraction {
  const { links } = task;
  const entry = compiledFor(task.key, () => ({
    job: compileJob(task.queries, { timeLimitMs }),
    links: links ? compileLinks(links.follow) : null,
    filter: links ? filterOf(links.filter) : null,
  }));
  const { page } = task;
  const html =
    'html' in page
      ? page.html
      : decodeHtml(
          Buffer.from(page.body.buffer, page.body.byteOffset, page.body.byteLength),
          page.contentType,
        );
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
  return { records: records.length, json: JSON.stringify(records), links: found };
}

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

serveTasks((task: ThreadTask): PageExtraction | SitemapUrls =>
  task.type === 'page' ? extractTask(task) : sitemapTask(task),
);
