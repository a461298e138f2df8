import { describe, expect, test } from '@jest/globals';
import { htmlDocument } from './index.ts';

const PAGE = {
  sourceUrl: 'https://example.com/docs/page',
  url: 'https://example.com/docs/page',
  statusCode: 200,
  contentType: 'text/html',
};

/** The whole body's markdown (no main-content step), so each rule is seen alone. */
function md(body: string, head = ''): string {
  const html = `<html><head>${head}</head><body>${body}</body></html>`;
  const options = {
    formats: ['markdown' as const],
    onlyMainContent: false,
    includeTags: [],
    excludeTags: [],
  };
  return htmlDocument(html, PAGE, options).markdown!;
}

describe('markdown: blocks', () => {
  test('headings are ATX, one line each', () => {
    expect(md('<h1>Title</h1><h3>Sub\n  title<br>two</h3><h6>six</h6>')).toBe(
      '# Title\n\n### Sub title two\n\n###### six',
    );
  });

  test('an empty heading is left out', () => {
    expect(md('<h2> </h2><p>text</p>')).toBe('text');
  });

  test('a heading ending in a # after a space keeps it escaped', () => {
    expect(md('<h2>Learn C #</h2><h2>C#</h2><h3>##</h3>')).toBe('## Learn C \\#\n\n## C#\n\n### \\##');
  });

  test('paragraphs are apart by a blank line, text between blocks is a paragraph of its own', () => {
    expect(md('<p>one</p>loose text<div>two</div>')).toBe('one\n\nloose text\n\ntwo');
  });

  test('white space collapses as in a browser', () => {
    expect(md('<p>  a\n\n   b\t c  <span> d </span> e </p>')).toBe('a b c d e');
  });

  test('<br> is a hard break, two of them a new paragraph', () => {
    expect(md('<p>one<br>two<br><br>three<br></p>')).toBe('one\\\ntwo\n\nthree');
  });

  test('<hr> is a thematic break', () => {
    expect(md('<p>a</p><hr><p>b</p>')).toBe('a\n\n---\n\nb');
  });

  test('blockquotes, nested', () => {
    expect(md('<blockquote><p>a</p><blockquote><p>b</p></blockquote><p>c</p></blockquote>')).toBe(
      '> a\n>\n> > b\n>\n> c',
    );
  });

  test('a note of documentation is a quote', () => {
    expect(md('<div class="admonition note"><p>Title</p><p>Body</p></div>')).toBe('> Title\n>\n> Body');
  });
});

describe('markdown: lists', () => {
  test('bullet lists, nested, stay tight', () => {
    expect(md('<ul><li>a</li><li>b<ul><li>b1</li><li>b2</li></ul></li><li>c</li></ul>')).toBe(
      '- a\n- b\n  - b1\n  - b2\n- c',
    );
  });

  test('ordered lists keep their start, and items their value', () => {
    expect(md('<ol start="7"><li>seven</li><li>eight</li><li value="20">twenty</li><li>next</li></ol>')).toBe(
      '7. seven\n8. eight\n20. twenty\n21. next',
    );
  });

  test('a reversed list counts down from its length', () => {
    expect(md('<ol reversed><li>c</li><li>b</li><li>a</li></ol>')).toBe('3. c\n2. b\n1. a');
  });

  test('items wrapping their text in paragraphs stay one line each', () => {
    expect(md('<ul><li><p>one</p></li><li><p>two</p></li></ul>')).toBe('- one\n- two');
  });

  test('an item with two paragraphs indents the second under its marker', () => {
    expect(md('<ol><li><p>first</p><p>more</p></li><li>second</li></ol>')).toBe(
      '1. first\n\n   more\n2. second',
    );
  });

  test('a code block inside an item is indented under it', () => {
    expect(md('<ul><li>run<pre>npm test\nnpm run lint</pre></li></ul>')).toBe(
      '- run\n\n  ```\n  npm test\n  npm run lint\n  ```',
    );
  });

  test('empty items are left out', () => {
    expect(md('<ul><li> </li><li>a</li></ul>')).toBe('- a');
  });

  test('text that reads like a list or heading is escaped at the start of a line', () => {
    expect(md('<p>1. not a list</p><p># not a heading</p><p>- nor an item</p><p>&gt; nor a quote</p>')).toBe(
      '1\\. not a list\n\n\\# not a heading\n\n\\- nor an item\n\n\\> nor a quote',
    );
  });
});

describe('markdown: code', () => {
  test('a code block is fenced with the language a class names', () => {
    expect(md('<pre><code class="hljs language-typescript">const a = 1;\n  return a;\n</code></pre>')).toBe(
      '```typescript\nconst a = 1;\n  return a;\n```',
    );
  });

  test('the language may come from lang-x on the pre, or data-lang', () => {
    expect(md('<pre class="lang-py">x = 1</pre>')).toBe('```py\nx = 1\n```');
    expect(md('<pre data-lang="rust"><code>fn main() {}</code></pre>')).toBe('```rust\nfn main() {}\n```');
  });

  test('a block holding backticks gets a longer fence', () => {
    expect(md('<pre>```\ncode\n```</pre>')).toBe('````\n```\ncode\n```\n````');
  });

  test('highlighting markup, <br> and entities inside pre become plain text, white space kept', () => {
    expect(md('<pre><span class="k">if</span>  a &lt; b<br>\tgo()</pre>')).toBe(
      '```\nif  a < b\n\tgo()\n```',
    );
  });

  test('the newline right after <pre> is not content', () => {
    expect(md('<pre>\nline</pre>')).toBe('```\nline\n```');
  });

  test('inline code is fenced with a backtick run it does not contain', () => {
    expect(md('<p>use <code>a</code>, <code>a`b</code>, <code>``</code> and <code>`x</code></p>')).toBe(
      'use `a`, ``a`b``, ` `` ` and `` `x ``',
    );
  });

  test('kbd and samp are code too', () => {
    expect(md('<p>press <kbd>Ctrl</kbd></p>')).toBe('press `Ctrl`');
  });
});

describe('markdown: inline', () => {
  test('emphasis, strong and strike-through; white space moves outside the markers', () => {
    expect(md('<p>a<em> b </em>c <strong>d</strong> <i>e</i><b>f</b> <del>g</del></p>')).toBe(
      'a *b* c **d** *e***f** ~~g~~',
    );
  });

  test('empty emphasis is left out, nested emphasis of one kind is written once', () => {
    expect(md('<p>a <em> </em>b <b><strong>c</strong></b></p>')).toBe('a b **c**');
  });

  test('links are absolute, against the page URL', () => {
    expect(md('<p><a href="../guide?x=1#top">Guide</a> <a href="//cdn.example.com/a">CDN</a></p>')).toBe(
      '[Guide](https://example.com/guide?x=1#top) [CDN](https://cdn.example.com/a)',
    );
  });

  test('links resolve against <base href>', () => {
    expect(md('<a href="p/1">one</a>', '<base href="https://other.example/shop/">')).toBe(
      '[one](https://other.example/shop/p/1)',
    );
  });

  test('javascript: links keep their text only', () => {
    expect(md('<p><a href="javascript:void(0)">Open</a> <a href=" JavaScript:alert(1)">menu</a></p>')).toBe(
      'Open menu',
    );
  });

  test("a heading's permalink is left out, a link to another page with the same sign is not", () => {
    expect(md('<h2 id="setup">Setup <a href="#setup">#</a></h2><p>Text <a href="#n1">¶</a></p>')).toBe(
      '## Setup\n\nText',
    );
    expect(md('<p><a href="/tags/x">#</a></p>')).toBe('[#](https://example.com/tags/x)');
  });

  test('a link without text takes its aria-label, else is left out', () => {
    expect(md('<p><a href="/x" aria-label="Home"><i class="icon"></i></a><a href="/y"></a></p>')).toBe(
      '[Home](https://example.com/x)',
    );
  });

  test('a destination with parentheses or spaces is written in angle brackets', () => {
    expect(md('<a href="/wiki/Foo_(bar)">Foo</a>')).toBe('[Foo](<https://example.com/wiki/Foo_(bar)>)');
  });

  test('images are absolute, with their alt text; lazy ones use data-src', () => {
    expect(
      md('<img src="/a.png" alt="An [a]"><img src="data:image/gif;base64,R0l" data-src="b.png" alt="b">'),
    ).toBe('![An \\[a\\]](https://example.com/a.png)![b](https://example.com/docs/b.png)');
  });

  test('an image may come from srcset; tracking pixels and data: images are left out', () => {
    expect(md('<img srcset="/s.png 1x, /l.png 2x" alt="s"><img src="/p.gif" width="1" height="1">')).toBe(
      '![s](https://example.com/s.png)',
    );
    expect(md('<p>x<img src="data:image/png;base64,AAAA"></p>')).toBe('x');
  });

  test('a linked image', () => {
    expect(md('<a href="/big.png"><img src="/small.png" alt="pic"></a>')).toBe(
      '[![pic](https://example.com/small.png)](https://example.com/big.png)',
    );
  });

  test('a link around blocks is written as its blocks', () => {
    expect(md('<a href="/post"><h3>Title</h3><p>Summary</p></a>')).toBe('### Title\n\nSummary');
  });
});

describe('markdown: escaping', () => {
  test('markdown characters in text are escaped where they could be syntax', () => {
    expect(
      md('<p>*stars* [link](x) `tick` a_b_c _under_ 2 * 3 &lt;div&gt; a < b &amp;amp; x\\y \\*</p>'),
    ).toBe('\\*stars\\* \\[link\\](x) \\`tick\\` a_b_c \\_under\\_ 2 * 3 \\<div> a < b \\&amp; x\\y \\\\\\*');
  });

  test('tildes that could strike through are escaped', () => {
    expect(md('<p>~~old~~ and ~ 5</p>')).toBe('\\~\\~old\\~\\~ and ~ 5');
  });

  test('a line of dashes or equals signs is no underline', () => {
    expect(md('<p>Title<br>===</p><p>---</p>')).toBe('Title\\\n\\===\n\n\\---');
  });
});

describe('markdown: tables', () => {
  test('a table with header cells is a GFM table', () => {
    expect(
      md('<table><tr><th>Name</th><th>Size</th></tr><tr><td>a</td><td>1 <b>kB</b></td></tr></table>'),
    ).toBe('| Name | Size |\n| --- | --- |\n| a | 1 **kB** |');
  });

  test('pipes in cells are escaped, line breaks and blocks flattened', () => {
    expect(
      md(
        '<table><tr><th>A</th><th>B</th></tr><tr><td>x | y</td><td><p>one</p><p>two<br>three</p></td></tr></table>',
      ),
    ).toBe('| A | B |\n| --- | --- |\n| x \\| y | one two three |');
  });

  test('colspan and rowspan are followed by empty cells', () => {
    const html =
      '<table><thead><tr><th colspan="2">AB</th><th>C</th></tr></thead>' +
      '<tbody><tr><td rowspan="2">1</td><td>2</td><td>3</td></tr><tr><td>5</td><td>6</td></tr></tbody></table>';
    expect(md(html)).toBe('| AB |  | C |\n| --- | --- | --- |\n| 1 | 2 | 3 |\n|  | 5 | 6 |');
  });

  test('the caption comes before the table', () => {
    expect(md('<table><caption>Prices</caption><tr><th>a</th><th>b</th></tr></table>')).toBe(
      'Prices\n\n| a | b |\n| --- | --- |',
    );
  });

  test('a table without header cells is a GFM table when it is a regular grid of inline cells', () => {
    expect(
      md('<table><tr><td>Weight</td><td>2 kg</td></tr><tr><td>Colour</td><td><i>green</i></td></tr></table>'),
    ).toBe('| Weight | 2 kg |\n| --- | --- |\n| Colour | *green* |');
  });

  test('a table without header cells and rows of different widths is written as its content', () => {
    expect(md('<table><tr><td>logo</td></tr><tr><td>left</td><td>right</td></tr></table>')).toBe(
      'logo\n\nleft\n\nright',
    );
  });

  test('a one-column table is written as its content', () => {
    expect(md('<table><tr><td>only</td></tr><tr><td>cells</td></tr></table>')).toBe('only\n\ncells');
  });

  test('a layout table (no header cell, blocks in cells) is written as its content', () => {
    expect(md('<table><tr><td><h2>Menu</h2><p>Left</p></td><td><p>Right</p></td></tr></table>')).toBe(
      '## Menu\n\nLeft\n\nRight',
    );
  });

  test('a table inside a table makes the outer one layout', () => {
    expect(
      md('<table><tr><th>x</th><td><table><tr><th>a</th><th>b</th></tr></table></td></tr></table>'),
    ).toBe('x\n\n| a | b |\n| --- | --- |');
  });

  test('cells without a row make one', () => {
    expect(md('<table><th>a</th><th>b</th><tr><td>1</td><td>2</td></tr></table>')).toBe(
      '| a | b |\n| --- | --- |\n| 1 | 2 |',
    );
  });

  test('a table with text or blocks outside its cells is written as its content', () => {
    expect(md('<table><tr><th>a</th><th>b</th></tr>stray<tr><td>1</td><td>2</td></tr></table>')).toBe(
      'a\n\nb\n\nstray\n\n1\n\n2',
    );
  });

  test('a role=presentation table is layout', () => {
    expect(md('<table role="presentation"><tr><th>a</th><th>b</th></tr></table>')).toBe('a\n\nb');
  });
});

describe('markdown: what is not shown', () => {
  test('scripts, styles, noscript, templates, comments, svg, canvas, iframes leave nothing', () => {
    expect(
      md(
        '<p>a</p><script>x()</script><style>p{}</style><noscript>enable js</noscript><template><p>t</p></template>' +
          '<!-- comment --><svg><text>chart</text></svg><canvas>c</canvas><iframe src="/f">frame</iframe><p>b</p>',
      ),
    ).toBe('a\n\nb');
  });

  test('hidden elements leave nothing', () => {
    expect(
      md(
        '<p>shown</p><p hidden>h1</p><p aria-hidden="true">h2</p><p style="color: red; DISPLAY : none">h3</p>' +
          '<p style="visibility:hidden !important">h4</p><input type="hidden" value="h5"><dialog><p>h6</p></dialog>',
      ),
    ).toBe('shown');
  });

  test('hidden="until-found" is content', () => {
    expect(md('<div hidden="until-found">found</div>')).toBe('found');
  });

  test('the head is never content', () => {
    expect(md('<p>body</p>', '<title>Title</title><meta name="x" content="y">')).toBe('body');
  });
});
