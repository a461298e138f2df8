import { html, raw } from './html.ts';

describe('html templates', () => {
  it('escapes every interpolated value for text and attributes', () => {
    const name = `<script>alert("x")</script>' & \``;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &#96;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &#96;</p>',
    );
  });

  it('nests templates and arrays without escaping twice, and drops null, undefined and false', () => {
    const items = ['a<b', 'c'].map((s) => html`<li>${s}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value).toBe(
      '<ul><li>a&lt;b</li><li>c</li></ul>0',
    );
    expect(html`${raw('<br>')}`.value).toBe('<br>');
  });
});
