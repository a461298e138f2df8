/**
 * Page content benchmark: HTML → markdown + metadata on one thread (no network, no database), ours
 * (`htmlDocument` of packages/content) beside the pipelines a Node user would write: Readability on
 * jsdom or linkedom with turndown (+ its GFM plugin for tables), and node-html-markdown alone.
 * Inputs: the ~80 KB catalogue page the other benches use (bench/fleet-site.ts), and real pages
 * (`<dir>/<name>/source.html`, e.g. Mozilla Readability's test pages, kept outside the repository).
 * Candidates take turns in slices (the first of each round rotates), after a warm-up of each.
 *
 * Run: `pnpm exec node bench/content.ts [--seconds 5] [--pages DIR] [--candidates ours,jsdom] [--json-out FILE]`.
 * Prints a JSON summary, then Markdown tables.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Readability } from '@mozilla/readability';
import { JSDOM } from 'jsdom';
import { parseHTML } from 'linkedom';
import { NodeHtmlMarkdown } from 'node-html-markdown';
import TurndownService from 'turndown';
import { htmlDocument } from '../packages/content/src/internal/html/index.ts';
import { catalogPage } from './fleet-site.ts';
import {
  log,
  machineInfo,
  parseOptions,
  printTable,
  round2,
  sampleAt,
  waitForQuiet,
  writeJsonOut,
} from './support.ts';

/** Where the real pages are unless `--pages` says otherwise (never inside the repository). */
export const DEFAULT_PAGES = '/work/corpus/readability';
/** The URL the real pages were saved from, as Readability's own tests give it. */
export const CORPUS_URL = 'http://fakehost/test/page.html';

/** One page to convert: its name, its HTML and the URL it was fetched from. */
export interface Page {
  name: string;
  html: string;
  url: string;
}

/** The pages of a corpus folder: every `<dir>/<name>/source.html`, by name. */
export function loadPages(dir: string): Page[] {
  const root = resolve(dir);
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, d.name, 'source.html')))
    .map((d) => d.name)
    .sort()
    .map((name) => ({ name, html: readFileSync(join(root, name, 'source.html'), 'utf8'), url: CORPUS_URL }));
}

// ---------------------------------------------------------------- the candidates

// turndown-plugin-gfm ships no types: its `gfm` is a turndown plugin.
const { gfm } = createRequire(import.meta.url)('turndown-plugin-gfm') as { gfm: TurndownService.Plugin };
/** turndown as the Readability pipelines use it: atx headings, fenced code, GFM tables. */
export const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
turndown.use(gfm);
const nhm = new NodeHtmlMarkdown();

/** What Readability keeps of a page (null when it finds no article), with the metadata it reads. */
export type ReadabilityArticle = ReturnType<Readability['parse']>;

/** Readability on a jsdom document, as its README shows (no scripts run), the window closed after. */
export function readabilityJsdom(html: string, url: string): ReadabilityArticle {
  const dom = new JSDOM(html, { url });
  try {
    return new Readability(dom.window.document).parse();
  } finally {
    // As jsdom asks: a window left open keeps its timers and listeners.
    dom.window.close();
  }
}

/** Readability on a linkedom document: a lighter DOM that Readability also runs on. */
export function readabilityLinkedom(html: string): ReadabilityArticle {
  const { document } = parseHTML(html);
  return new Readability(document as unknown as Document).parse();
}

/** Our document of a page: markdown and metadata (and `extra` formats), main content or whole body. */
export function ours(html: string, url: string, onlyMainContent: boolean, extra: 'html'[] = []) {
  return htmlDocument(
    html,
    { sourceUrl: url, url, statusCode: 200, contentType: 'text/html; charset=utf-8' },
    { formats: ['markdown', 'metadata', ...extra], onlyMainContent, includeTags: [], excludeTags: [] },
  );
}

/** A candidate converts a page into markdown (with metadata where it reads any) and returns it. */
interface Candidate {
  name: string;
  /** What it keeps: the main content or the whole page. */
  keeps: 'main content' | 'whole page';
  convert: (page: Page) => string;
}

const allCandidates: readonly Candidate[] = [
  {
    name: 'ours, onlyMainContent true',
    keeps: 'main content',
    convert: (p) => ours(p.html, p.url, true).markdown ?? '',
  },
  {
    name: 'readability + jsdom + turndown',
    keeps: 'main content',
    convert: (p) => {
      const article = readabilityJsdom(p.html, p.url);
      return article?.content ? turndown.turndown(article.content) : '';
    },
  },
  {
    name: 'readability + linkedom + turndown',
    keeps: 'main content',
    convert: (p) => {
      const article = readabilityLinkedom(p.html);
      return article?.content ? turndown.turndown(article.content) : '';
    },
  },
  {
    name: 'ours, onlyMainContent false',
    keeps: 'whole page',
    convert: (p) => ours(p.html, p.url, false).markdown ?? '',
  },
  {
    name: 'node-html-markdown alone',
    keeps: 'whole page',
    convert: (p) => nhm.translate(p.html),
  },
];
/** The candidates measured (`--candidates`: those whose names contain one of its comma-separated words). */
let candidates: readonly Candidate[] = allCandidates;
/** The pipeline the ratios are taken against. */
const BASELINE = 'readability + jsdom + turndown';
const TARGET_RATIO = 5;

// ---------------------------------------------------------------- measuring

interface Tally {
  samples: number[];
  ms: number;
  /** CPU time of this process (user and system) over the candidate's slices. */
  cpuMs: number;
  outputChars: number;
  empty: number;
}

/**
 * One turn of the event loop, untimed, after each page, as a worker would take. Without it the loop
 * is one long job, and V8 keeps every object a WeakRef was read from until the job ends: jsdom's
 * documents then pile up (about 3 MB a page) and slow the collector for every candidate.
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Converts every page once, timing each; adds to `tally` unless it is undefined (warm-up). */
async function pass(candidate: Candidate, pages: readonly Page[], tally?: Tally): Promise<number> {
  let elapsed = 0;
  for (const page of pages) {
    const before = performance.now();
    const markdown = candidate.convert(page);
    const ms = performance.now() - before;
    await nextTurn();
    elapsed += ms;
    if (!tally) continue;
    tally.samples.push(ms);
    tally.ms += ms;
    tally.outputChars += markdown.length;
    if (markdown.trim().length < 200) tally.empty++;
  }
  return elapsed;
}

/** Whole passes over `pages` until at least `ms` have gone by (one pass at least). */
async function runFor(
  candidate: Candidate,
  pages: readonly Page[],
  ms: number,
  tally?: Tally,
): Promise<void> {
  const cpu = process.cpuUsage();
  let elapsed = 0;
  do elapsed += await pass(candidate, pages, tally);
  while (elapsed < ms);
  if (!tally) return;
  const used = process.cpuUsage(cpu);
  tally.cpuMs += (used.user + used.system) / 1000;
}

// A collection between slices, so that one candidate's garbage is not collected in another's time.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

interface Row {
  input: string;
  candidate: string;
  keeps: Candidate['keeps'];
  pages: number;
  pagesPerSecond: number;
  msPerPage: { mean: number; p50: number; p99: number };
  /** Mean markdown length per page, to see that the candidates do comparable work. */
  markdownChars: number;
  /** Conversions that gave (nearly) nothing: under 200 characters of markdown. */
  nearEmpty: number;
  ratioToBaseline: number | null;
  /** CPU time per page: less sensitive than wall time to other work on the machine. */
  cpuMsPerPage: number;
  cpuRatioToBaseline: number | null;
}

/**
 * Each candidate converts `pages` in turns of `sliceMs` (whole passes) until it has been measured
 * for `measureMs`; candidates alternate, the first of each round rotating, after a warm-up of each.
 */
async function measureInput(
  input: string,
  pages: readonly Page[],
  measureMs: number,
  sliceMs: number,
): Promise<Row[]> {
  for (const c of candidates) await runFor(c, pages, Math.min(1000, measureMs / 3));
  const tallies = candidates.map((): Tally => ({ samples: [], ms: 0, cpuMs: 0, outputChars: 0, empty: 0 }));
  for (let round = 0; tallies.some((t) => t.ms < measureMs); round++) {
    for (let k = 0; k < candidates.length; k++) {
      const i = (round + k) % candidates.length;
      if (tallies[i]!.ms >= measureMs) continue;
      gc();
      await runFor(candidates[i]!, pages, sliceMs, tallies[i]);
    }
    log(`${input}: round ${round + 1}`);
  }
  const rows = candidates.map((c, i): Row => {
    const t = tallies[i]!;
    const sorted = [...t.samples].sort((a, b) => a - b);
    const pps = t.samples.length / (t.ms / 1000);
    return {
      input,
      candidate: c.name,
      keeps: c.keeps,
      pages: t.samples.length,
      pagesPerSecond: round2(pps),
      msPerPage: {
        mean: round2(1000 / pps),
        p50: round2(sampleAt(sorted, 0.5)),
        p99: round2(sampleAt(sorted, 0.99)),
      },
      markdownChars: Math.round(t.outputChars / t.samples.length),
      nearEmpty: t.empty,
      ratioToBaseline: null,
      cpuMsPerPage: round2(t.cpuMs / t.samples.length),
      cpuRatioToBaseline: null,
    };
  });
  const base = rows.find((r) => r.candidate === BASELINE);
  for (const r of rows) {
    r.ratioToBaseline = base ? round2(r.pagesPerSecond / base.pagesPerSecond) : null;
    r.cpuRatioToBaseline = base ? round2(base.cpuMsPerPage / r.cpuMsPerPage) : null;
  }
  gc();
  log(`${input}: heap ${Math.round(process.memoryUsage().heapUsed / 2 ** 20)} MiB after a collection`);
  return rows;
}

/** Per real page, the median ms of one conversion by each candidate: where ours is slowest. */
async function perPage(pages: readonly Page[], rounds: number) {
  const out: { page: string; kb: number; ms: Record<string, number> }[] = [];
  for (const page of pages) {
    const ms: Record<string, number> = {};
    for (const c of candidates) {
      const samples: number[] = [];
      for (let i = 0; i < rounds; i++) samples.push(await pass(c, [page]));
      ms[c.name] = round2(
        sampleAt(
          samples.sort((a, b) => a - b),
          0.5,
        ),
      );
    }
    out.push({ page: page.name, kb: round2(Buffer.byteLength(page.html) / 1024), ms });
  }
  return out;
}

async function main(): Promise<void> {
  const args = parseOptions({
    seconds: '5',
    slice: '500',
    pages: DEFAULT_PAGES,
    candidates: '',
    'json-out': undefined,
  });
  const wanted = args.candidates.split(',').filter(Boolean);
  if (wanted.length) candidates = allCandidates.filter((c) => wanted.some((w) => c.name.includes(w)));
  if (candidates.length === 0) throw new Error(`no candidate matches --candidates ${args.candidates}`);
  const measureMs = Number(args.seconds) * 1000;
  const sliceMs = Number(args.slice);
  const catalogue: Page = {
    name: 'catalogue',
    html: catalogPage('bench', 1),
    url: 'http://127.0.0.1/p/bench/1',
  };
  const real = loadPages(args.pages);
  const busyCoresAtStart = await waitForQuiet(0.3, 30_000);
  if (real.length === 0) log(`no pages in ${args.pages}: measuring the catalogue page only`);

  const rows = await measureInput(
    `catalogue page (${Math.round(catalogue.html.length / 1024)} KB)`,
    [catalogue],
    measureMs,
    sliceMs,
  );
  const realBytes = real.reduce((n, p) => n + Buffer.byteLength(p.html), 0);
  const realInput = `${real.length} pages of ${basename(resolve(args.pages))} (mean ${Math.round(realBytes / Math.max(1, real.length) / 1024)} KB)`;
  if (real.length) rows.push(...(await measureInput(realInput, real, measureMs, sliceMs)));
  const pages = real.length ? await perPage(real, 5) : [];

  const summary = {
    machine: machineInfo('one thread; other sessions may share the machine'),
    gcBetweenSlices: true,
    busyCoresAtStart,
    measureMs,
    sliceMs,
    corpus: { dir: resolve(args.pages), pages: real.length, bytes: realBytes },
    baseline: BASELINE,
    targetRatio: TARGET_RATIO,
    results: rows,
    perPage: pages,
  };
  writeJsonOut(args['json-out'], summary);
  console.log(JSON.stringify(summary, null, 2));
  console.log('');
  printTable(
    [
      'input',
      'candidate',
      'keeps',
      'pages/s',
      'ms/page p50',
      'ms/page p99',
      'CPU ms/page',
      'md chars/page',
      'near-empty',
      `× ${BASELINE}`,
      '× (CPU time)',
    ],
    'lllrrrrrrrr',
    rows.map((r) => [
      r.input,
      r.candidate,
      r.keeps,
      r.pagesPerSecond,
      r.msPerPage.p50,
      r.msPerPage.p99,
      r.cpuMsPerPage,
      r.markdownChars,
      `${r.nearEmpty}/${r.pages}`,
      r.candidate.startsWith('ours') && r.ratioToBaseline !== null
        ? `${r.ratioToBaseline} (≥ ${TARGET_RATIO} ${r.ratioToBaseline >= TARGET_RATIO ? 'met' : 'MISSED'})`
        : (r.ratioToBaseline ?? '—'),
      r.cpuRatioToBaseline ?? '—',
    ]),
  );
  const mine = candidates[0]!.name;
  if (pages.length && mine.startsWith('ours') && candidates.some((c) => c.name === BASELINE)) {
    console.log('');
    const slowest = [...pages].sort((a, b) => b.ms[mine]! / b.ms[BASELINE]! - a.ms[mine]! / a.ms[BASELINE]!);
    printTable(
      ['page', 'KB', ...candidates.map((c) => `${c.name} ms`), `${mine} × baseline`],
      `ll${'r'.repeat(candidates.length + 1)}`,
      slowest.map((p) => [
        p.page,
        p.kb,
        ...candidates.map((c) => p.ms[c.name]),
        round2(p.ms[BASELINE]! / p.ms[mine]!),
      ]),
    );
  }
}

if (import.meta.main) await main();
