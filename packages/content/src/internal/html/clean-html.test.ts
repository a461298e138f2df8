import { describe, expect, test } from '@jest/globals';
import { htmlDocument } from './index.ts';

const PAGE = {
  sourceUrl: 'https://example.com/a/',
  url: 'https://example.com/a/page',
  statusCode: 200,
  contentType: 'text/html',
};

function clean(body: string, head = ''): string {
  const html = `<html><head>${head}</head><body>${body}</body></html>`;
  return htmlDocument(html, PAGE, {
    formats: ['html'],
    onlyMainContent: false,
    includeTags: [],
    excludeTags: [],
  }).html!;
}

describe('clean HTML', () => {
  test('is the body content, without the body element or the head', () => {
    expect(clean('<p class="intro" id="i">Hello <b>there</b></p>', '<title>t</title>')).toBe(
      '<p class="intro" id="i">Hello <b>there</b></p>',
    );
  });

  test('has no script, style, comment, template, noscript, svg or iframe', () => {
    expect(
      clean(
        '<p>a</p><script>x()</script><style>p{}</style><!-- c --><template>t</template><noscript>n</noscript><svg><rect/></svg><iframe src="/f"></iframe>',
      ),
    ).toBe('<p>a</p>');
  });

  test('has no hidden element', () => {
    expect(
      clean(
        '<p>a</p><p hidden>b</p><div style="display:none">c</div><input type="hidden" name="t" value="1">',
      ),
    ).toBe('<p>a</p>');
  });

  test('has no event handler or style attribute', () => {
    expect(
      clean('<button onclick="go()" ONMOUSEOVER="x()" style="color:red" type="button">Go</button>'),
    ).toBe('<button type="button">Go</button>');
  });

  test('has no javascript: URL (the link stays, without its href)', () => {
    expect(
      clean(
        '<a href="javascript:alert(1)">a</a><a href=" jav&#x09;ascript:alert(1)">b</a><form action="javascript:x()"></form>',
      ),
    ).toBe('<a>a</a><a>b</a><form></form>');
  });

  test('makes href, src, srcset, poster and action absolute', () => {
    expect(
      clean(
        '<a href="../b?q=1">l</a><img src="i.png" srcset="s.png 1x, /l.png 2x"><video poster="p.jpg"></video><form action="/send"></form>',
      ),
    ).toBe(
      '<a href="https://example.com/b?q=1">l</a><img src="https://example.com/a/i.png" srcset="https://example.com/a/s.png 1x, https://example.com/l.png 2x"><form action="https://example.com/send"></form>',
    );
  });

  test('resolves against <base href>', () => {
    expect(clean('<a href="x">x</a>', '<base href="https://cdn.example.net/root/">')).toBe(
      '<a href="https://cdn.example.net/root/x">x</a>',
    );
  });

  test('escapes text and attribute values', () => {
    expect(clean('<p title="a &quot;b&quot; &amp; c">1 &lt; 2 &amp;&amp; 3 &gt; 2</p>')).toBe(
      '<p title="a &quot;b&quot; &amp; c">1 &lt; 2 &amp;&amp; 3 &gt; 2</p>',
    );
  });

  test('leaves out attribute names that could break the markup', () => {
    expect(clean('<p a"b="1" data-ok="2">x</p>')).toBe('<p data-ok="2">x</p>');
  });

  test('keeps the content newline after <pre>', () => {
    expect(clean('<pre>\n\nline</pre>')).toBe('<pre>\n\n\nline</pre>');
  });

  test('a page without body is written without its html element or head', () => {
    const html = '<html><head><title>t</title></head><p>a</p></html>';
    const options = { formats: ['html' as const], onlyMainContent: false, includeTags: [], excludeTags: [] };
    expect(htmlDocument(html, PAGE, options).html).toBe('<p>a</p>');
  });
});
