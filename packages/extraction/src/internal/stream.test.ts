import { describe, expect, test } from '@jest/globals';
import { seededRandom } from '../../../../test/support/random.ts';
import { compileCss } from './css.ts';
import { ExtractionError } from './errors.ts';
import { compileJob, extract, extractPage, type QuerySpec, streamedPage, withoutStream } from './job.ts';
import { type ExtractionLimits, resolveLimits } from './limits.ts';
import { streamValues } from './stream.ts';
import { compileXPath } from './xpath.ts';

const TAGS = [
  'div',
  'p',
  'li',
  'ul',
  'a',
  'span',
  'b',
  'table',
  'tr',
  'td',
  'script',
  'br',
  'img',
  'form',
  'option',
];
const TEXTS = [
  '',
  ' ',
  'x',
  'Apple  pie',
  '\n  two\tlines \n',
  '&amp;',
  'a &lt; b',
  '&#0;nul',
  'tail ',
  '\u00a0',
];
const ATTRS = ['class', 'id', 'href', 'data-x', 'lang', 'type'];
const VALUES = ['', 'a', 'item', 'item sale', 'a-b', 'EN', 'x y z', '"q"'];

/** HTML that trips the parser's implied opens and closes, comments, entities, void and raw-text elements, and a cut-off end. */
function page(next: () => number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const parts: string[] = [next() < 0.5 ? '<!DOCTYPE html>' : ''];
  const open: string[] = [];
  const steps = 5 + Math.floor(next() * 60);
  for (let i = 0; i < steps; i++) {
    const roll = next();
    if (roll < 0.35) {
      const tag = pick(TAGS);
      const attrs = Array.from(
        { length: Math.floor(next() * 3) },
        () => ` ${pick(ATTRS)}="${pick(VALUES)}"`,
      ).join('');
      if (tag === 'script') parts.push(`<script${attrs}>var s = "<b>not a tag</b>";</script>`);
      else {
        parts.push(`<${tag}${attrs}>`);
        open.push(tag);
      }
    } else if (roll < 0.55 && open.length > 0) parts.push(`</${open.pop()}>`);
    else if (roll < 0.6)
      parts.push(`</${pick(TAGS)}>`); // a stray or early end tag
    else if (roll < 0.65) parts.push(`<!-- ${pick(TEXTS)} -->`);
    else parts.push(pick(TEXTS));
  }
  if (next() < 0.1) parts.push('<div class="cut'); // ends inside a tag
  return parts.join('');
}

const QUERIES: QuerySpec[][] = [
  [
    { name: 'h', type: 'css', query: 'div' },
    { name: 'l', type: 'css', query: 'li > a::attr(href)' },
    { name: 'p', type: 'xpath', query: '//span[@class="item"]' },
  ],
  [
    { name: 'own', type: 'css', query: 'p::text' },
    { name: 'any', type: 'css', query: 'ul li, td' },
    { name: 'ids', type: 'css', query: '[id]::attr(id)' },
  ],
  [
    { name: 'cls', type: 'css', query: 'div.item span, .sale' },
    { name: 'pre', type: 'css', query: '[class^="it"] b' },
    { name: 'lang', type: 'css', query: '[lang="en" i]::attr(lang)' },
    { name: 'all', type: 'css', query: 'body *::text' },
  ],
  [
    { name: 't', type: 'xpath', query: '//li//text()' },
    { name: 'c', type: 'xpath', query: '//p/text()' },
    { name: 'h', type: 'xpath', query: '//div//@href' },
    { name: 'x', type: 'xpath', query: '//*[contains(@class, "a")]/@data-x' },
  ],
  [
    { name: 'joined', type: 'css', query: 'li', join: true },
    { name: 'rows', type: 'xpath', query: '//td' },
    { name: 're', type: 'regex', query: 'a(p+)le' },
  ],
  [
    { name: 'top', type: 'xpath', query: '/div/p' },
    { name: 'star', type: 'xpath', query: '//ul/*' },
    { name: 'deep', type: 'css', query: 'div div div' },
  ],
];

const LIMITS: ExtractionLimits[] = [
  {},
  { maxRecords: 3 },
  { maxValueBytes: 8 },
  { maxTotalBytes: 40 },
  { maxRecords: 2, maxValueBytes: 12, maxTotalBytes: 30 },
];

/** The records of a page, or its error, as the caller sees them. */
function outcome(run: () => unknown): unknown {
  try {
    return { records: run() };
  } catch (error) {
    if (!(error instanceof ExtractionError)) throw error;
    return { error: error.message, limit: error.limit };
  }
}

describe('reading a page in one pass', () => {
  test('gives the records and errors the tree gives, on 250 generated pages for every query set and limit', () => {
    const next = seededRandom(20261125);
    const jobs = QUERIES.flatMap((queries) =>
      LIMITS.map((limits) => ({ queries, limits, job: compileJob(queries, limits) })),
    );
    let read = 0;
    let streamed = 0;
    for (let n = 0; n < 250; n++) {
      const html = page(next);
      for (const { queries, limits, job } of jobs) {
        const fast = outcome(() => extractPage(job, html).records);
        const tree = outcome(() => extractPage(withoutStream(job), html).records);
        if (JSON.stringify(fast) !== JSON.stringify(tree)) {
          throw new Error(`differs on page ${n} with ${JSON.stringify(queries)} ${JSON.stringify(limits)}:
${html}
one pass: ${JSON.stringify(fast)}
tree:     ${JSON.stringify(tree)}`);
        }
        read++;
        if (streamedPage(job, html)) streamed++;
      }
    }
    // Most are read in one pass (the rest give up, mostly on the tight limits).
    expect(streamed / read).toBeGreaterThan(0.6);
  });

  test('is taken for the selectors that look only upwards, and not for the others', () => {
    const upward = compileCss('ul > li.item a[href$=".pdf"], #top::text').upward;
    expect(upward?.map((part) => [part.compounds.length, part.child])).toEqual([
      [3, [false, true, false]],
      [1, [false]],
    ]);
    for (const query of ['li + li', 'li ~ li', 'li:first-child', 'div:has(a)', 'p:not(.x)', '> a'])
      expect(compileCss(query).upward).toBeNull();
    expect(compileXPath('//li[@class="a"]/a/@href').simple).not.toBeNull();
  });

  test('gives up on what the tree must settle: too many values, deeply nested matches', () => {
    const limits = resolveLimits({ maxRecords: 5 });
    const css = (query: string) => {
      const compiled = compileCss(query);
      return [{ kind: 'css' as const, css: compiled, upward: compiled.upward! }];
    };
    const queries = css('li');
    expect(streamValues(queries, '<li>1<li>2<li>3', limits)).toEqual([['1', '2', '3']]);
    expect(streamValues(queries, '<li>x</li>'.repeat(6), limits)).toEqual([['x', 'x', 'x', 'x', 'x', 'x']]);
    expect(streamValues(queries, '<li>x</li>'.repeat(7), limits)).toBeNull();
    expect(streamValues(css('div'), '<div>'.repeat(32), resolveLimits({}))).not.toBeNull();
    expect(streamValues(css('div'), '<div>'.repeat(33), resolveLimits({}))).toBeNull();
  });

  test('matches nested descendant steps as the tree does, each element once: no backtracking', () => {
    const nested = (depth: number) => `${'<div class="d">'.repeat(depth)}<b>end</b>${'</div>'.repeat(depth)}`;
    const selectors = [
      'div div div b',
      'div > div div > b',
      'x div div b',
      'div.d div:not(p) b',
      '* > * * b::text',
    ];
    for (const selector of selectors) {
      const job = compileJob([{ name: 'v', type: 'css', query: selector }]);
      expect([selector, extract(job, nested(6))]).toEqual([selector, extract(withoutStream(job), nested(6))]);
    }
    // Names as css-select compares them: lower case, so an SVG element kept in camel case never matches.
    const svg = '<svg><clipPath id="c"><rect id="r"/></clipPath></svg><DIV id="d"><b>x</b></DIV>';
    for (const selector of [
      'DIV > B',
      'svg clippath rect::attr(id)',
      'clipPath::attr(id)',
      'svg > *::attr(id)',
    ]) {
      const job = compileJob([{ name: 'v', type: 'css', query: selector }]);
      expect(streamedPage(job, svg)).toBe(true);
      expect([selector, extract(job, svg)]).toEqual([selector, extract(withoutStream(job), svg)]);
    }
    // On the tree css-select tries every chain of ancestors: 200 nested divs and six steps that
    // never match would take years, past the 1 s limit; read in one pass it is one match per element.
    const hostile = compileJob([{ name: 'v', type: 'css', query: 'x div div div div div div' }], {
      timeLimitMs: 1000,
    });
    expect(streamedPage(hostile, nested(200))).toBe(true);
    expect(extract(hostile, nested(200))).toEqual([]);
  });
});
