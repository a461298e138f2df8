import { describe, expect, test } from '@jest/globals';
import { parseHtml } from './dom.ts';
import { DEFAULT_EXTRACTION_LIMITS } from './limits.ts';
import { PageValues, type ValueSink } from './page.ts';
import { compileXPath, evaluateWithFontoxpath, evaluateWithSimplePath } from './xpath.ts';
import { parseSimplePath, selectSimplePath } from './xpath-simple.ts';

const PAGES = [
  `<!DOCTYPE html>
<html><head><title>Shop</title></head>
<body>
  <h1 id="top">Our   <em>fine</em>
     products</h1>
  <!-- a comment -->
  <ul class="list main">
    <li class="product" data-id="1"><a href="/p/1">Apple</a> <span class="price">1.50</span></li>
    <li class="product sale" data-id="2"><a href="/p/2" class="">Pear</a> <span class="price">2.25</span></li>
    <li class="product" data-id="3"><a>Plum</a><span class="price old">3</span></li>
    <li><a href="">Empty href</a><span class="Price">4</span></li>
  </ul>
  <p class="note">Own text <b>bold</b> tail</p>
</body></html>`,
  // Nested elements of one name: results must be in document order without duplicates.
  `<div class="a">one<div class="b">two<div class="a">three<span>x</span></div>four</div>five</div>
<div>six<p>seven<div class="a"><a href="/n">nested</a></div></p></div>`,
  // Upper-case source (htmlparser2 lower-cases names), attributes with odd values, no root element.
  `text before<DIV ID="Main" Class="Big">A<SPAN class="price">9</SPAN></DIV>
<span class="price" title='a "quoted" title'>10</span><span class="price ">11</span>
<a href="/x?a=1&amp;b=2">amp</a><a HREF="/upper">upper</a>text after`,
  // Script, style, comments, processing instructions, foreign content with CDATA.
  `<?xml-stylesheet href="a"?><div><script>var a = "<span class='price'>no</span>";</script>
<style>.price { color: red }</style><!-- <span class="price">commented</span> -->
<svg><text><![CDATA[svg text]]></text></svg><span class="price">yes</span></div>`,
  // Tables and lists without implied elements; empty and whitespace-only text.
  `<table><tr><td class="c"> </td><td class="c">  a  b  </td></tr><tr><td>x<br>y</td></tr></table>
<ul><li><ul><li>inner</li></ul></li><li>outer</li></ul><h1></h1><h1> </h1>`,
  '',
  '<p>only <em>text</em></p>',
];

const TRANSLATED = [
  '//span[@class="price"]',
  "//span[@class='price']",
  '//a/@href',
  '//h1/text()',
  '//li[@class="product"]/a',
  '//li[contains(@class, "product")]//a/@href',
  '//li[contains(@class,"product")]/a/text()',
  '//li[contains(@class, "")]',
  '//li[@data-id]',
  '//li[@data-id][@class="product"]/span',
  '//li[ @data-id = "2" ]',
  '//*[@class="price"]',
  '//*',
  '//ul/*',
  '//ul//*',
  '//ul//li',
  '//ul/li/ul/li',
  '//li//li',
  '//div',
  '//div//div',
  '//div/div',
  '//div[@class="a"]',
  '//div[@class="a"]//div[@class="a"]',
  '//div[@class="a"]/text()',
  '//div[@class="a"]//text()',
  '//div//text()',
  '//div//@class',
  '//div//@href',
  '//div/@class',
  '/html',
  '/html/body/h1',
  '/html/body//a/@href',
  '/div',
  '/div/div',
  '/span',
  '//p/text()',
  '//p//text()',
  '//td/text()',
  '//td',
  '//tr/td[@class="c"]',
  '//h1',
  '//SPAN',
  '//span[@CLASS="price"]',
  '//a/@HREF',
  '//a/@href',
  '//svg/text',
  '//svg//text()',
  '//script',
  '//script/text()',
  '//style',
  '//text',
  '//contains',
  '//span[contains(@class, "price")]',
  '//span[contains(@class, "Price")]',
  '//span[contains(@title, \'"quoted"\')]',
  '//span[@title=\'a "quoted" title\']',
  '//a[@href=""]',
  '//a[@class=""]',
  '//a[@href]/@href',
  '//*[@id="Main"]',
  '//*[@id="main"]',
  '//li[@class="product sale"]//text()',
  '//ul[@class="list main"]/li/a',
  '//em/text()',
  '//b',
  '//p[@class="note"]/b/text()',
];

const NOT_TRANSLATED = [
  '//li[1]',
  '//li[last()]',
  '//li[position() < 3]',
  '(//li)[1]',
  '//li | //a',
  '//a/@href | //a',
  'count(//li)',
  'string(//h1)',
  '//li/a[1]/@href',
  '//li[@class="a" and @id]',
  '//li[@class!="a"]',
  '//li[not(@class)]',
  '//li[contains(@class, "a" )]/..',
  '//li/following-sibling::li',
  'child::html',
  'html/body',
  './/a',
  '//@href',
  '//text()',
  '//node()',
  '//comment()',
  '//svg:rect',
  '//*:span',
  '//a/@*',
  '//a/@href/..',
  '//a/text()/..',
  '//li[@class="a""b"]',
  "//li[@class='it''s']",
  '//li[@class=price]',
  '//li[contains(@class)]',
  '//li[contains(text(), "a")]',
  '//li[@class="x"',
  '//li]',
  '/',
  '//',
  '',
  '   ',
  '//a/@href/text()',
  '//*/@xlink:href',
  '//li[@class = "\ud800"]',
];

/** The values `evaluate` gives a page with the default limits, or null when it declines. */
function collect(evaluate: (sink: ValueSink) => unknown): string[] | null {
  const page = new PageValues(DEFAULT_EXTRACTION_LIMITS);
  page.begin('xpath query "v"', false);
  if (evaluate(page) === false) return null;
  return page.finish()[0] ?? [];
}

function bothEngines(query: string, html: string): { fast: string[] | null; fonto: string[] } {
  const compiled = compileXPath(query);
  const root = parseHtml(html);
  const simple = parseSimplePath(query);
  if (!simple) throw new Error(`${query} was not translated`);
  return {
    fast: collect((sink) => evaluateWithSimplePath(simple, root, sink)),
    fonto: collect((sink) => evaluateWithFontoxpath(compiled, root, sink)) ?? [],
  };
}

describe('the XPath fast path', () => {
  test.each(TRANSLATED)('%s is translated and gives what fontoxpath gives on every page', (query) => {
    expect(parseSimplePath(query)).not.toBeNull();
    for (const html of PAGES) {
      const { fast, fonto } = bothEngines(query, html);
      expect({ html, values: fast }).toEqual({ html, values: fonto });
    }
  });

  test('the compared expressions select something on the sample pages', () => {
    const nonEmpty = TRANSLATED.filter((query) =>
      PAGES.some((html) => bothEngines(query, html).fonto.length),
    );
    expect(nonEmpty.length).toBeGreaterThan(TRANSLATED.length * 0.75);
  });

  test('gives values in document order without duplicates for nested matches', () => {
    expect(bothEngines('//div[@class="a"]//text()', PAGES[1]!).fast).toEqual([
      'one',
      'two',
      'three',
      'x',
      'four',
      'five',
      'nested',
    ]);
    expect(bothEngines('//div//div', PAGES[1]!).fast).toEqual(['twothreexfour', 'threex', 'nested']);
  });

  test.each(NOT_TRANSLATED)('%s is left to fontoxpath', (query) => {
    expect(parseSimplePath(query)).toBeNull();
  });

  test('falls back when the tree holds a CDATA node (never made from HTML)', () => {
    const root = parseHtml('<p>a</p>');
    const p = root.children[0] as unknown as { children: unknown[] };
    p.children.push({ type: 'cdata', children: [], parent: p });
    expect(selectSimplePath(parseSimplePath('//p/text()')!, root)).toBeNull();
  });
});

// Random paths over a small vocabulary, compared on random trees: a seeded generator, so a
// failure names a reproducible case.
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  return { next, pick };
}

const NAMES = ['div', 'p', 'a', 'span', 'li', 'ul'];
const CLASSES = ['x', 'y', 'x y', ''];

function randomPage(seed: number): string {
  const { next, pick } = generator(seed);
  const node = (depth: number): string => {
    if (depth > 4 || next() < 0.25) return pick(['t', ' ', 'u v', '<!--c-->', '']);
    const name = pick(NAMES);
    const attrs = [
      next() < 0.5 ? ` class="${pick(CLASSES)}"` : '',
      next() < 0.3 ? ` href="/${Math.floor(next() * 9)}"` : '',
    ].join('');
    const children = Array.from({ length: Math.floor(next() * 4) }, () => node(depth + 1)).join('');
    return `<${name}${attrs}>${children}</${name}>`;
  };
  return Array.from({ length: 3 }, () => node(0)).join('');
}

function randomQuery(seed: number): string {
  const { next, pick } = generator(seed);
  let query = '';
  const steps = 1 + Math.floor(next() * 3);
  for (let i = 0; i < steps; i++) {
    query += pick(['/', '//', '//']) + pick([...NAMES, '*']);
    if (next() < 0.3) query += pick(['[@class]', '[@href]']);
    if (next() < 0.3) query += `[@class="${pick(CLASSES)}"]`;
    if (next() < 0.2) query += `[contains(@class, "${pick(['x', 'y', ''])}")]`;
  }
  const end = next();
  if (end < 0.2) query += '/text()';
  else if (end < 0.35) query += '//text()';
  else if (end < 0.45) query += pick(['/@href', '//@href', '/@class']);
  return query;
}

test('random paths give what fontoxpath gives on random pages', () => {
  let compared = 0;
  let nonEmpty = 0;
  for (let i = 1; i <= 300; i++) {
    const query = randomQuery(i);
    const html = randomPage(i * 7919);
    const { fast, fonto } = bothEngines(query, html);
    expect({ query, html, values: fast }).toEqual({ query, html, values: fonto });
    compared++;
    if (fonto.length) nonEmpty++;
  }
  expect(compared).toBe(300);
  expect(nonEmpty).toBeGreaterThan(60);
});
