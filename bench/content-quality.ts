/**
 * Main-content quality: what each extractor keeps of a page, against what the page should give.
 * A corpus is a folder of `<name>/source.html` (and `url.txt`, the address it came from), each
 * page with one kind of expected output:
 *
 * - `expected.txt`: the article's text marked by a person. Scored by token F1 (bags of lowercased
 *   words) and shingle F1 (runs of four words), packages/content/src/testing/text-score.ts.
 * - `expected.json`: `{"with": [...], "without": [...]}`, snippets a person chose that the article
 *   holds and that it must not hold (trafilatura's evaluation data is written this way). Scored as
 *   trafilatura does: a snippet of `with` found is a true positive, one missed a false negative; a
 *   snippet of `without` found is a false positive.
 * - `expected.html`: what Mozilla Readability kept of the page (its test pages). Scored like
 *   `expected.txt`, but this measures agreement with Readability, not correctness.
 *
 * Every candidate's output is markdown, read as text by one function (no link targets or images).
 *
 * Run: `pnpm exec node bench/content-quality.ts [--pages DIR,DIR] [--worst 10] [--json-out FILE]`.
 * Prints a JSON summary, then Markdown tables.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { extractFromHtml } from '@extractus/article-extractor';
import { Defuddle } from 'defuddle/node';
import { JSDOM } from 'jsdom';
import {
  markdownText,
  type Score,
  shingleScore,
  tokenScore,
  words,
} from '../packages/content/src/testing/text-score.ts';
import { CORPUS_URL, ours, readabilityJsdom, turndown } from './content.ts';
import { log, machineInfo, parseOptions, printTable, ROOT, round2, writeJsonOut } from './support.ts';

/** The corpora measured unless `--pages` says otherwise: ours (in the repository), then public ones kept outside it. */
const DEFAULT_CORPORA = [
  join(ROOT, 'packages/content/src/internal/html/fixtures/reader'),
  '/work/corpus/trafilatura',
  '/work/corpus/readability',
];

type Kind = 'marked text' | 'marked snippets' | "Readability's output";

interface Page {
  name: string;
  html: string;
  url: string;
  kind: Kind;
  expected: string | { with: string[]; without: string[] };
}

function loadCorpus(dir: string): Page[] {
  if (!existsSync(dir)) return [];
  const pages: Page[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const at = (file: string) => join(dir, entry.name, file);
    if (!entry.isDirectory() || !existsSync(at('source.html'))) continue;
    const html = readFileSync(at('source.html'), 'utf8');
    const url = existsSync(at('url.txt')) ? readFileSync(at('url.txt'), 'utf8').trim() : CORPUS_URL;
    const page = { name: entry.name, html, url };
    if (existsSync(at('expected.txt')))
      pages.push({ ...page, kind: 'marked text', expected: readFileSync(at('expected.txt'), 'utf8') });
    else if (existsSync(at('expected.json')))
      pages.push({
        ...page,
        kind: 'marked snippets',
        expected: JSON.parse(readFileSync(at('expected.json'), 'utf8')),
      });
    else if (existsSync(at('expected.html')))
      pages.push({
        ...page,
        kind: "Readability's output",
        expected: markdownText(turndown.turndown(readFileSync(at('expected.html'), 'utf8'))),
      });
  }
  return pages.sort((a, b) => a.name.localeCompare(b.name));
}

// ---------------------------------------------------------------- candidates

/** A candidate gives the markdown it keeps of a page. */
interface Candidate {
  name: string;
  markdown: (page: Page) => Promise<string>;
}

const candidates: Candidate[] = [
  { name: 'ours', markdown: async (p) => ours(p.html, p.url, true).markdown ?? '' },
  {
    name: 'readability + jsdom + turndown',
    markdown: async (p) => {
      const article = readabilityJsdom(p.html, p.url);
      return article?.content ? turndown.turndown(article.content) : '';
    },
  },
  {
    name: 'defuddle 0.19 (jsdom)',
    markdown: async (p) => {
      const dom = new JSDOM(p.html, { url: p.url });
      try {
        return (await Defuddle(dom.window.document, p.url, { markdown: true })).content ?? '';
      } finally {
        dom.window.close();
      }
    },
  },
  {
    name: 'article-extractor 9 + turndown',
    markdown: async (p) => {
      const article = await extractFromHtml(p.html, p.url);
      return article?.content ? turndown.turndown(article.content) : '';
    },
  },
  {
    name: 'whole body (ours, not main content)',
    markdown: async (p) => ours(p.html, p.url, false).markdown ?? '',
  },
];
const OURS = 'ours';

// ---------------------------------------------------------------- scoring

interface Result {
  token: Score;
  shingle: Score;
  /** Snippets: [true positives, false negatives, false positives, true negatives]. */
  snippets?: [number, number, number, number];
  words: number;
  error?: string;
}

/** Text compared for snippets: white space runs made one space, as trafilatura compares. */
const squeeze = (text: string) => text.replace(/\s+/g, ' ').toLowerCase();

function scorePage(page: Page, markdown: string): Result {
  const text = markdownText(markdown);
  if (typeof page.expected === 'string')
    return {
      token: tokenScore(text, page.expected),
      shingle: shingleScore(text, page.expected),
      words: words(text).length,
    };
  const got = squeeze(text.replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1'));
  const found = (snippet: string) => got.includes(squeeze(snippet));
  const tp = page.expected.with.filter(found).length;
  const fp = page.expected.without.filter(found).length;
  const counts: Result['snippets'] = [
    tp,
    page.expected.with.length - tp,
    fp,
    page.expected.without.length - fp,
  ];
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = page.expected.with.length === 0 ? 1 : tp / page.expected.with.length;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  const score = { precision, recall, f1 };
  return { token: score, shingle: score, snippets: counts, words: words(text).length };
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

function summarize(kind: Kind, pages: readonly Page[], results: Map<string, Record<string, Result>>) {
  return candidates.map((c) => {
    const rs = pages.map((p) => results.get(p.name)![c.name]!);
    const row = {
      kind,
      candidate: c.name,
      pages: rs.length,
      token: {
        precision: round2(mean(rs.map((r) => r.token.precision))),
        recall: round2(mean(rs.map((r) => r.token.recall))),
        f1: round2(mean(rs.map((r) => r.token.f1))),
      },
      shingle: {
        precision: round2(mean(rs.map((r) => r.shingle.precision))),
        recall: round2(mean(rs.map((r) => r.shingle.recall))),
        f1: round2(mean(rs.map((r) => r.shingle.f1))),
      },
      under05: rs.filter((r) => r.token.f1 < 0.5).length,
      empty: rs.filter((r) => r.words === 0).length,
      errors: rs.filter((r) => r.error !== undefined).length,
      snippets: undefined as
        | undefined
        | { tp: number; fn: number; fp: number; tn: number; precision: number; recall: number; f1: number },
    };
    if (kind === 'marked snippets') {
      const [tp, fn, fp, tn] = rs.reduce(
        (sum, r) => sum.map((n, i) => n + r.snippets![i]!) as [number, number, number, number],
        [0, 0, 0, 0],
      );
      const precision = tp / Math.max(1, tp + fp);
      const recall = tp / Math.max(1, tp + fn);
      row.snippets = {
        tp,
        fn,
        fp,
        tn,
        precision: round2(precision),
        recall: round2(recall),
        f1: round2((2 * precision * recall) / Math.max(1e-9, precision + recall)),
      };
    }
    return row;
  });
}

async function main(): Promise<boolean> {
  const args = parseOptions({ pages: DEFAULT_CORPORA.join(','), worst: '10', 'json-out': undefined });
  const corpora = args.pages
    .split(',')
    .filter(Boolean)
    .map((dir) => resolve(dir));
  const report: Record<string, unknown>[] = [];
  for (const dir of corpora) {
    const pages = loadCorpus(dir);
    if (pages.length === 0) {
      log(`no pages with an expected output in ${dir}`);
      continue;
    }
    const results = new Map<string, Record<string, Result>>();
    for (const page of pages) {
      const row: Record<string, Result> = {};
      for (const c of candidates) {
        try {
          row[c.name] = scorePage(page, await c.markdown(page));
        } catch (err) {
          const zero = { precision: 0, recall: 0, f1: 0 };
          row[c.name] = { token: zero, shingle: zero, words: 0, error: (err as Error).message };
        }
        // A turn of the event loop lets V8 drop what jsdom's WeakRefs kept alive (bench/content.ts).
        await new Promise((next) => setImmediate(next));
      }
      results.set(page.name, row);
    }
    for (const kind of new Set(pages.map((p) => p.kind))) {
      const these = pages.filter((p) => p.kind === kind);
      const summary = summarize(kind, these, results);
      const perPage = these.map((p) => ({
        page: p.name,
        expectedWords: typeof p.expected === 'string' ? words(p.expected).length : undefined,
        scores: Object.fromEntries(
          Object.entries(results.get(p.name)!).map(([name, r]) => [
            name,
            {
              f1: round2(r.token.f1),
              shingleF1: round2(r.shingle.f1),
              p: round2(r.token.precision),
              r: round2(r.token.recall),
              snippets: r.snippets,
              error: r.error,
            },
          ]),
        ),
      }));
      report.push({ corpus: dir, kind, pages: these.length, summary, perPage });
      console.log(`\n### ${basename(dir)}: ${these.length} pages, expected output: ${kind}\n`);
      if (kind === 'marked snippets')
        printTable(
          ['candidate', 'pages', 'snippet precision', 'recall', 'F1', 'with missed', 'without kept', 'empty'],
          'lrrrrrrr',
          summary.map((s) => [
            s.candidate,
            s.pages,
            s.snippets!.precision,
            s.snippets!.recall,
            s.snippets!.f1,
            s.snippets!.fn,
            s.snippets!.fp,
            s.empty,
          ]),
        );
      else
        printTable(
          [
            'candidate',
            'pages',
            'token P',
            'token R',
            'token F1',
            'shingle P',
            'shingle R',
            'shingle F1',
            'F1 < 0.5',
            'empty',
          ],
          'lrrrrrrrrr',
          summary.map((s) => [
            s.candidate,
            s.pages,
            s.token.precision,
            s.token.recall,
            s.token.f1,
            s.shingle.precision,
            s.shingle.recall,
            s.shingle.f1,
            s.under05,
            s.empty,
          ]),
        );
      const worst = [...perPage]
        .sort((a, b) => a.scores[OURS]!.f1 - b.scores[OURS]!.f1)
        .slice(0, Number(args.worst));
      console.log('');
      printTable(
        ['page', ...candidates.slice(0, 4).map((c) => `${c.name} F1 (P / R)`)],
        `l${'r'.repeat(4)}`,
        worst.map((p) => [
          p.page,
          ...candidates.slice(0, 4).map((c) => {
            const s = p.scores[c.name]!;
            return s.error ? `error: ${s.error.slice(0, 40)}` : `${s.f1} (${s.p} / ${s.r})`;
          }),
        ]),
      );
    }
  }
  const out = { machine: machineInfo(''), corpora: report };
  writeJsonOut(args['json-out'], out);
  return report.length > 0;
}

if (import.meta.main) process.exitCode = (await main()) ? 0 : 1;
