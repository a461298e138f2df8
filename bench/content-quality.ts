/**
 * Main-content quality on real pages: for each `<dir>/<name>/source.html` with the `expected.html`
 * Mozilla Readability's tests keep beside it (what Readability kept of the page), how much of that
 * text each candidate keeps. Bag of words, lowercased: precision (the share of a candidate's words
 * that are in the expected text), recall (the share of the expected words it keeps) and F1, per
 * page and averaged over pages, and the pages where a candidate keeps (nearly) nothing (recall
 * under 20%). Every candidate's output and the expected HTML are turned into words by the same
 * function (bench/content.ts has the pipelines).
 *
 * Readability wrote the expected texts, so Readability's pipelines have a home advantage here:
 * their figures say how far another Readability version or DOM moves them, not that they are right.
 *
 * Run: `pnpm exec node bench/content-quality.ts [--pages DIR] [--worst 10] [--json-out FILE]`.
 * Prints a JSON summary, then Markdown tables.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseHTML } from 'linkedom';
import { DEFAULT_PAGES, loadPages, ours, readabilityJsdom, readabilityLinkedom } from './content.ts';
import { log, machineInfo, parseOptions, printTable, round2, writeJsonOut } from './support.ts';

// ---------------------------------------------------------------- text and words

/** Elements whose text no reader sees. */
const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'SVG', 'svg', 'IFRAME', 'OBJECT']);
/** Elements that run on within a line: no word break around them (every other element breaks). */
const INLINE = new Set(
  'A ABBR B BDI BDO CITE CODE DATA DFN EM FONT I KBD MARK Q S SAMP SMALL SPAN STRONG SUB SUP TIME U VAR'.split(
    ' ',
  ),
);

interface DomNode {
  nodeType: number;
  nodeName: string;
  nodeValue: string | null;
  childNodes: ArrayLike<DomNode>;
}

function collectText(node: DomNode, out: string[]): void {
  if (node.nodeType === 3) {
    out.push(node.nodeValue ?? '');
    return;
  }
  if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) return;
  if (SKIP.has(node.nodeName)) return;
  const block = node.nodeType === 1 && !INLINE.has(node.nodeName.toUpperCase());
  if (block) out.push(' ');
  for (let i = 0; i < node.childNodes.length; i++) collectText(node.childNodes[i]!, out);
  if (block) out.push(' ');
}

/** The text of an HTML document or fragment as a reader sees it: no scripts or styles, blocks apart. */
export function htmlText(html: string): string {
  // A fragment goes into a body of its own, so that linkedom parses it as HTML.
  const whole = /<html[\s>]/i.test(html) ? html : `<!DOCTYPE html><html><body>${html}</body></html>`;
  const { document } = parseHTML(whole);
  const out: string[] = [];
  collectText((document.body ?? document.documentElement) as unknown as DomNode, out);
  return out.join('');
}

/** The words of markdown as text: no link targets, images, emphasis or table and heading marks. */
export function markdownText(markdown: string): string {
  return markdown
    .replace(/!\[[^\]]*\]\([^)]*\)/g, ' ') // images: their alt text is not text of the page
    .replace(/\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, '] ') // link targets
    .replace(/<https?:[^>\s]+>/g, ' ') // autolinks
    .replace(/^\s*\[[^\]]+\]:\s*\S+.*$/gm, ' '); // reference definitions
}

// Han, kana and Hangul words are not spaced: each character counts as a word.
const WORD = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|[\p{L}\p{N}]+/gu;

/** A bag of words: each lowercased word with its count. */
export function bagOfWords(text: string): Map<string, number> {
  const bag = new Map<string, number>();
  for (const [word] of text.toLowerCase().matchAll(WORD)) bag.set(word, (bag.get(word) ?? 0) + 1);
  return bag;
}

const size = (bag: Map<string, number>) => {
  let n = 0;
  for (const c of bag.values()) n += c;
  return n;
};

/** Precision, recall and F1 of `got` against `expected`, each word counted as often as both have it. */
export function score(got: Map<string, number>, expected: Map<string, number>) {
  let overlap = 0;
  for (const [word, c] of got) overlap += Math.min(c, expected.get(word) ?? 0);
  const [g, e] = [size(got), size(expected)];
  const precision = g ? overlap / g : 0;
  const recall = e ? overlap / e : 0;
  const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
  return { words: g, precision, recall, f1 };
}

// ---------------------------------------------------------------- candidates

/** A candidate gives the text it keeps of a page. */
interface Candidate {
  name: string;
  text: (html: string, url: string) => string;
}

const candidates: Candidate[] = [
  { name: 'ours (html)', text: (html, url) => htmlText(ours(html, url, true, ['html']).html ?? '') },
  { name: 'ours (markdown)', text: (html, url) => markdownText(ours(html, url, true).markdown ?? '') },
  { name: 'readability + jsdom', text: (html, url) => htmlText(readabilityJsdom(html, url)?.content ?? '') },
  { name: 'readability + linkedom', text: (html) => htmlText(readabilityLinkedom(html)?.content ?? '') },
  {
    name: 'ours, whole body (html)',
    text: (html, url) => htmlText(ours(html, url, false, ['html']).html ?? ''),
  },
  { name: 'whole body (floor)', text: (html) => htmlText(html) },
];
const OURS = 'ours (html)';
const NEAR_EMPTY_RECALL = 0.2;

interface PageScore {
  page: string;
  expectedWords: number;
  scores: Record<string, { words: number; precision: number; recall: number; f1: number; error?: string }>;
}

function scorePage(name: string, html: string, url: string, expectedHtml: string): PageScore {
  const expected = bagOfWords(htmlText(expectedHtml));
  const scores: PageScore['scores'] = {};
  for (const c of candidates) {
    try {
      const s = score(bagOfWords(c.text(html, url)), expected);
      scores[c.name] = {
        words: s.words,
        precision: round2(s.precision),
        recall: round2(s.recall),
        f1: round2(s.f1),
      };
    } catch (err) {
      scores[c.name] = { words: 0, precision: 0, recall: 0, f1: 0, error: (err as Error).message };
    }
  }
  return { page: name, expectedWords: size(expected), scores };
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length
    ? s.length % 2
      ? s[(s.length - 1) / 2]!
      : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
    : 0;
};

async function main(): Promise<boolean> {
  const args = parseOptions({ pages: DEFAULT_PAGES, worst: '10', 'json-out': undefined });
  const dir = resolve(args.pages);
  const pages = loadPages(dir).filter((p) => existsSync(join(dir, p.name, 'expected.html')));
  if (pages.length === 0) {
    log(`no <name>/source.html with expected.html in ${dir}`);
    return false;
  }
  const perPage: PageScore[] = [];
  for (const p of pages) {
    log(p.name);
    perPage.push(scorePage(p.name, p.html, p.url, readFileSync(join(dir, p.name, 'expected.html'), 'utf8')));
    // A turn of the event loop lets V8 drop what jsdom's WeakRefs kept alive (bench/content.ts).
    await new Promise((resolve) => setImmediate(resolve));
  }
  const summary = candidates.map((c) => {
    const s = perPage.map((p) => p.scores[c.name]!);
    return {
      candidate: c.name,
      pages: s.length,
      precision: round2(mean(s.map((x) => x.precision))),
      recall: round2(mean(s.map((x) => x.recall))),
      f1: round2(mean(s.map((x) => x.f1))),
      medianF1: round2(median(s.map((x) => x.f1))),
      nearEmpty: s.filter((x) => x.recall < NEAR_EMPTY_RECALL).length,
      f1Under05: s.filter((x) => x.f1 < 0.5).length,
      errors: s.filter((x) => x.error).length,
    };
  });
  const worst = [...perPage]
    .sort((a, b) => a.scores[OURS]!.f1 - b.scores[OURS]!.f1)
    .slice(0, Number(args.worst));
  const report = {
    machine: machineInfo(''),
    corpus: { dir, pages: pages.length },
    nearEmptyRecall: NEAR_EMPTY_RECALL,
    summary,
    perPage,
  };
  writeJsonOut(args['json-out'], report);
  console.log(JSON.stringify(report, null, 2));
  console.log('');
  printTable(
    [
      'candidate',
      'pages',
      'precision',
      'recall',
      'F1 (mean)',
      'F1 (median)',
      'F1 < 0.5',
      'near-empty (recall < 20%)',
    ],
    'lrrrrrrr',
    summary.map((s) => [
      s.candidate,
      s.pages,
      s.precision,
      s.recall,
      s.f1,
      s.medianF1,
      s.f1Under05,
      s.nearEmpty,
    ]),
  );
  console.log('');
  const shown = [
    'ours (html)',
    'ours (markdown)',
    'readability + jsdom',
    'readability + linkedom',
    'whole body (floor)',
  ];
  printTable(
    ['page', 'expected words', ...shown.map((n) => `${n} P / R / F1`)],
    `lr${'r'.repeat(shown.length)}`,
    worst.map((p) => [
      p.page,
      p.expectedWords,
      ...shown.map((n) => {
        const s = p.scores[n]!;
        return s.error ? `error: ${s.error}` : `${s.precision} / ${s.recall} / ${s.f1}`;
      }),
    ]),
  );
  return true;
}

if (import.meta.main) process.exitCode = (await main()) ? 0 : 1;
