import { describe, expect, test } from '@jest/globals';
import { compileJob, ExtractionError, extract, type QuerySpec } from './index.ts';

const PAGE = `<!DOCTYPE html>
<html><head><title>  Shop
   listing </title></head>
<body>
  <h1 id="top">Our   <em>fine</em>
     products</h1>
  <!-- a comment -->
  <ul>
    <li class="item" data-id="1"><a href="/p/1">Apple</a> <span class="price">1.50</span></li>
    <li class="item" data-id="2"><a href="/p/2">Pear</a> <span class="price">2.25</span></li>
    <li class="item" data-id="3"><a>Plum</a></li>
  </ul>
  <p class="note">Own text <b>bold</b> tail</p>
</body></html>`;

function run(queries: QuerySpec[], html = PAGE) {
  return extract(compileJob(queries), html);
}

function catchError(task: () => unknown): ExtractionError {
  try {
    task();
  } catch (error) {
    if (error instanceof ExtractionError) return error;
    throw error;
  }
  throw new Error('expected an ExtractionError');
}

function values(type: QuerySpec['type'], query: string, html = PAGE): (string | null)[] {
  return run([{ name: 'v', type, query }], html).map((record) => record.v ?? null);
}

describe('css queries', () => {
  test('give each element text, trimmed with inner white space collapsed', () => {
    expect(values('css', 'h1')).toEqual(['Our fine products']);
    expect(values('css', 'li.item a')).toEqual(['Apple', 'Pear', 'Plum']);
  });

  test('::text gives only the element own text nodes, joined and collapsed', () => {
    expect(values('css', 'p.note::text')).toEqual(['Own text tail']);
    expect(values('css', 'h1::text')).toEqual(['Our products']);
  });

  test('::text after a space applies to every descendant element', () => {
    expect(values('css', 'p.note ::text')).toEqual(['bold']);
  });

  test('::attr(name) gives raw attribute values and skips elements without it', () => {
    expect(values('css', 'li a::attr(href)')).toEqual(['/p/1', '/p/2']);
    expect(values('css', 'li::attr(data-id)')).toEqual(['1', '2', '3']);
    expect(values('css', 'li::attr( "DATA-ID" )')).toEqual(['1', '2', '3']);
  });

  test('element text includes script text but not comments', () => {
    expect(values('css', 'div', '<div>a<script>b</script><!--c-->d</div>')).toEqual(['abd']);
  });

  test('pseudo-classes such as :nth-child and :has work', () => {
    expect(values('css', 'li:nth-child(2) a')).toEqual(['Pear']);
    expect(values('css', 'li:has(span) > a')).toEqual(['Apple', 'Pear']);
  });
});

describe('xpath queries', () => {
  test('element nodes give their string value, trimmed and collapsed', () => {
    expect(values('xpath', '//h1')).toEqual(['Our fine products']);
    expect(values('xpath', '//title')).toEqual(['Shop listing']);
    expect(values('xpath', '//li/a')).toEqual(['Apple', 'Pear', 'Plum']);
  });

  test('attribute nodes give their value', () => {
    expect(values('xpath', '//a/@href')).toEqual(['/p/1', '/p/2']);
    expect(values('xpath', '//li[@data-id="2"]/@*')).toEqual(['item', '2']);
  });

  test('text and comment nodes give their collapsed text', () => {
    expect(values('xpath', '//p[@class="note"]/text()')).toEqual(['Own text', 'tail']);
    expect(values('xpath', '//comment()')).toEqual(['a comment']);
  });

  test('atomic results give their XPath string form', () => {
    expect(values('xpath', 'count(//li)')).toEqual(['3']);
    expect(values('xpath', 'sum(//span[@class="price"]) * 2')).toEqual(['7.5']);
    expect(values('xpath', 'exists(//h1)')).toEqual(['true']);
    expect(values('xpath', '1e21')).toEqual(['1E21']); // fontoxpath's canonical double form
    expect(values('xpath', 'string-join(//li/@data-id, "-")')).toEqual(['1-2-3']);
    expect(values('xpath', 'xs:date("2026-11-21")')).toEqual(['2026-11-21']);
    expect(values('xpath', '(1, "a", true())')).toEqual(['1', 'a', 'true']);
  });

  test('axes, predicates and document order work on the parsed tree', () => {
    expect(values('xpath', '//a[@href="/p/2"]/../@data-id')).toEqual(['2']);
    expect(values('xpath', '//li[1]/following-sibling::li/a')).toEqual(['Pear', 'Plum']);
    expect(values('xpath', '//span/ancestor::li/@data-id')).toEqual(['1', '2']);
    expect(values('xpath', '(//li)[last()]/a')).toEqual(['Plum']);
    expect(values('xpath', '//span | //h1')).toEqual(['Our fine products', '1.50', '2.25']);
    expect(values('xpath', 'name(/*)')).toEqual(['html']);
  });

  test('the doctype is invisible and the root holds the html element', () => {
    expect(values('xpath', 'count(/node()[not(self::text())])')).toEqual(['1']);
    expect(values('xpath', 'count(/*)')).toEqual(['1']);
    expect(values('xpath', '/html/body/ul/li[2]/a')).toEqual(['Pear']);
  });

  test('maps and arrays come back as JSON', () => {
    expect(values('xpath', 'array { 1, 2 }')).toEqual(['[1,2]']);
  });

  test('a dynamic error on a page fails that page with ExtractionError', () => {
    const job = compileJob([{ name: 'one', type: 'xpath', query: 'exactly-one(//nothing)' }]);
    expect(() => extract(job, PAGE)).toThrow(ExtractionError);
    expect(() => extract(job, PAGE)).toThrow(/xpath query "one" failed on this page: FORG0005/);
    expect(catchError(() => extract(job, PAGE)).limit).toBeUndefined();
  });
});

describe('regex queries', () => {
  test('without a group the value is the whole match, every match', () => {
    expect(values('regex', 'data-id="\\d"')).toEqual(['data-id="1"', 'data-id="2"', 'data-id="3"']);
  });

  test('with a group the value is group 1', () => {
    expect(values('regex', 'href="([^"]+)"')).toEqual(['/p/1', '/p/2']);
    expect(values('regex', '<(?:li) class="(?<c>\\w+)" data-id="(\\d)"')).toEqual(['item', 'item', 'item']);
  });

  test('matches the raw HTML, comments and markup included', () => {
    expect(values('regex', '<!-- (.*?) -->')).toEqual(['a comment']);
  });

  test('/body/flags applies the i, s and m flags', () => {
    expect(values('regex', '/<LI CLASS="ITEM" DATA-ID="(\\d)"/i')).toEqual(['1', '2', '3']);
    expect(values('regex', '/<title>(.*?)<\\/title>/s')).toEqual(['  Shop\n   listing ']);
    expect(values('regex', '/^\\s*<h1 id="(\\w+)"/m')).toEqual(['top']);
    expect(values('regex', '/<title>(.*?)<\\/title>/')).toEqual([]);
  });

  test('a bare pattern containing slashes is not mistaken for flags', () => {
    expect(values('regex', 'href="/p/(\\d)"')).toEqual(['1', '2']);
  });

  test('empty matches do not loop forever', () => {
    expect(values('regex', 'x*', 'ab')).toEqual(['', '', '']);
    expect(values('regex', '/(?:)/u', '😀')).toEqual(['', '']);
  });

  test('a catastrophic backtracking pattern is stopped with a clear error, never hangs', () => {
    const job = compileJob([{ name: 'evil', type: 'regex', query: '(a+)+$' }], { timeLimitMs: 100 });
    const started = performance.now();
    let error: unknown;
    try {
      extract(job, `${'a'.repeat(50)}!`);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ExtractionError);
    expect((error as ExtractionError).code).toBe('EXTRACTION_ERROR');
    expect((error as ExtractionError).limit).toBe('time');
    expect((error as ExtractionError).message).toBe(
      'extraction exceeded its time limit of 100 ms (regex query "evil" was running)',
    );
    expect(performance.now() - started).toBeLessThan(2000);
    // The engine is usable again right after a stopped evaluation.
    expect(values('regex', 'a(b)', 'xab')).toEqual(['b']);
  });

  test('the default page limit also stops a hostile pattern within about five seconds', () => {
    const job = compileJob([{ name: 'evil', type: 'regex', query: '/(x+x+)+y/' }]);
    const started = performance.now();
    expect(() => extract(job, 'x'.repeat(5000))).toThrow(
      'extraction exceeded its time limit of 5000 ms (regex query "evil" was running)',
    );
    expect(performance.now() - started).toBeLessThan(7000);
  });
});

describe('a hostile XPath', () => {
  test('is stopped by the page time limit', () => {
    const job = compileJob([{ name: 'slow', type: 'xpath', query: 'count(//node() ! (1 to 1000000000))' }], {
      timeLimitMs: 100,
    });
    expect(() => extract(job, PAGE)).toThrow(
      'extraction exceeded its time limit of 100 ms (xpath query "slow" was running)',
    );
  });
});

describe('malformed HTML', () => {
  const BROKEN = `<div class="a"><p>one<p>two <b>bold <i>both</b> after</i>
    <li>x<li>y</ul></span><img src="i.png"><a href='/q'>link</div><div class=b>open to the end`;

  test('still yields values for css, xpath and regex', () => {
    expect(values('css', 'p')).not.toEqual([]);
    // As in browsers, the stray </ul> is ignored, so the second item runs on to the link.
    expect(values('css', 'li', BROKEN)).toEqual(['x', 'ylink']);
    expect(values('css', 'img::attr(src)', BROKEN)).toEqual(['i.png']);
    expect(values('xpath', '//a/@href', BROKEN)).toEqual(['/q']);
    expect(values('xpath', '//div[@class="b"]', BROKEN)).toEqual(['open to the end']);
    expect(values('regex', "href='([^']*)'", BROKEN)).toEqual(['/q']);
  });

  test('text at the top level and no html element are fine for XPath', () => {
    expect(values('xpath', '/text()', 'loose <b>bold</b> text')).toEqual(['loose', 'text']);
    expect(values('xpath', 'string(/)', 'loose <b>bold</b> text')).toEqual(['loose bold text']);
  });

  test('a processing instruction is a comment, as in browsers, and not part of the text', () => {
    const html = '<div><?php echo 1 ?>before<b>x</b></div>';
    expect(values('xpath', '//div/comment()', html)).toEqual(['?php echo 1 ?']);
    expect(values('xpath', '//div', html)).toEqual(['beforex']);
    expect(values('css', 'div', html)).toEqual(['beforex']);
  });

  test('entities are decoded in text and attributes', () => {
    expect(values('css', 'a', '<a title="&quot;x&quot;">Fish &amp; chips&nbsp;&#233;</a>')).toEqual([
      'Fish & chips é',
    ]);
    expect(values('xpath', '//a/@title', '<a title="&quot;x&quot;">y</a>')).toEqual(['"x"']);
  });

  test('an empty page gives no record', () => {
    expect(run([{ name: 'a', type: 'css', query: 'a' }], '')).toEqual([]);
  });
});

describe('records from a page', () => {
  const queries: QuerySpec[] = [
    { name: 'name', type: 'css', query: 'li a' },
    { name: 'price', type: 'xpath', query: '//span[@class="price"]' },
    { name: 'title', type: 'css', query: 'title', join: true },
    { name: 'ids', type: 'regex', query: 'data-id="(\\d)"', join: true },
  ];

  test('row i holds the i-th match of each query, null where one has fewer, joined values repeat', () => {
    expect(run(queries)).toEqual([
      { name: 'Apple', price: '1.50', title: 'Shop listing', ids: '1 2 3' },
      { name: 'Pear', price: '2.25', title: 'Shop listing', ids: '1 2 3' },
      { name: 'Plum', price: null, title: 'Shop listing', ids: '1 2 3' },
    ]);
  });

  test('keys follow the job order of queries', () => {
    expect(Object.keys(run(queries)[0] ?? {})).toEqual(['name', 'price', 'title', 'ids']);
  });

  test('a page where no query matches gives no record', () => {
    expect(run(queries, '<html><body><p>nothing here</p></body></html>')).toEqual([]);
  });

  test('only joined queries give one record', () => {
    const joined: QuerySpec[] = [
      { name: 'names', type: 'css', query: 'li a', join: true },
      { name: 'missing', type: 'css', query: 'table', join: true },
    ];
    expect(run(joined)).toEqual([{ names: 'Apple Pear Plum', missing: null }]);
  });

  test('a joined match with no row matches still gives one record', () => {
    expect(run(queries, '<title>Only a title</title>')).toEqual([
      { name: null, price: null, title: 'Only a title', ids: null },
    ]);
  });

  test('the same compiled job serves many pages', () => {
    const job = compileJob(queries);
    expect(extract(job, PAGE)).toHaveLength(3);
    expect(extract(job, '<li data-id="7"><a>Fig</a></li>')).toEqual([
      { name: 'Fig', price: null, title: null, ids: '7' },
    ]);
  });
});
