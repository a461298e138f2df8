import { describe, expect, test } from '@jest/globals';
import { type AnyNode, type Element, isTag } from 'domhandler';
import { textContent } from './dom.ts';
import { MAX_TREE_DEPTH, parseHtml } from './parse.ts';

const NONE = () => false;

/** The tree as `name(children)` and text, for comparing shapes. */
function shape(node: AnyNode): string {
  if (!isTag(node)) return 'data' in node ? JSON.stringify(node.data) : '';
  return `${node.name}(${node.children.map(shape).join(',')})`;
}

function body(html: string): string {
  return parseHtml(html).children.map(shape).join(',');
}

function depthOf(root: AnyNode): number {
  let deepest = 0;
  const stack: [AnyNode, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    deepest = Math.max(deepest, depth);
    if (isTag(node)) for (const child of node.children) stack.push([child, depth + 1]);
  }
  return deepest;
}

describe('parseHtml', () => {
  test('builds a domhandler tree, attributes lowercased, the first of a duplicate winning', () => {
    const root = parseHtml('<DIV Class="a" class="b" data-X=1>t&amp;x</DIV>');
    const div = root.children[0] as Element;
    expect(div.name).toBe('div');
    expect(div.attribs).toEqual({ class: 'a', 'data-x': '1' });
    expect(textContent(div, NONE)).toBe('t&x');
    expect(div.parent).toBe(root);
  });

  test('leaves out comments and doctypes, and joins the text around a comment', () => {
    expect(body('<!DOCTYPE html><p>a<!-- x -->b</p>')).toBe('p("ab")');
  });

  test('keeps script and style text raw', () => {
    expect(body('<script>if (a < b) {}</script><style>p > a {}</style>')).toBe(
      'script("if (a < b) {}"),style("p > a {}")',
    );
  });

  test('closes a paragraph at a block, across inline elements', () => {
    expect(body('<p>one<b>two<div>three</div>')).toBe('p("one",b("two")),div("three")');
  });

  test('closes list items and cells implied by the next one', () => {
    expect(body('<ul><li>a<p>b<li>c</ul>')).toBe('ul(li("a",p("b")),li("c"))');
    expect(body('<table><tr><td>1<td>2<tr><td>3</table>')).toBe('table(tr(td("1"),td("2")),tr(td("3")))');
  });

  test('a nested list stays in its item', () => {
    expect(body('<ul><li>a<ul><li>b</ul><li>c</ul>')).toBe('ul(li("a",ul(li("b"))),li("c"))');
  });

  test('</body> and </html> close nothing: what follows stays in the body', () => {
    const root = parseHtml('<html><body><p>a</p></body></html><p>late</p>');
    expect(shape(root.children[0]!)).toBe('html(body(p("a"),p("late")))');
  });

  test('an element that cannot be in <head> closes it', () => {
    expect(body('<head><title>t</title><div>x</div>')).toBe('head(title("t")),div("x")');
  });

  test('self-closing tags are honoured in SVG only', () => {
    expect(body('<svg><path d="M0"/><circle/></svg><div/>after')).toBe('svg(path(),circle()),div("after")');
  });

  test('unclosed and stray tags do not throw', () => {
    expect(body('<div><span><b>x</i></p></div></span>y')).toBe('div(span(b("x",p()))),"y"');
  });

  test('the tree is at most MAX_TREE_DEPTH deep however deep the page nests', () => {
    const n = 100_000;
    const root = parseHtml(`${'<div>'.repeat(n)}deep${'</div>'.repeat(n)}<p>after</p>`);
    expect(depthOf(root)).toBeLessThanOrEqual(MAX_TREE_DEPTH + 1);
    expect(textContent(root, NONE)).toBe('deepafter');
    expect(shape(root.children[root.children.length - 1]!)).toBe('p("after")');
  });

  test('deep nesting and stray end tags parse in linear time', () => {
    // CPU time of this process against a flat page of the same size: other processes on the
    // machine do not count, and a quadratic parse would be thousands of times the flat one.
    const cpuMs = (html: string) => {
      const started = process.cpuUsage();
      parseHtml(html);
      const used = process.cpuUsage(started);
      return (used.user + used.system) / 1000;
    };
    const n = 100_000;
    const flat = cpuMs(`${'<b></b>'.repeat(n)}x${'<br>'.repeat(n)}${'<s></s>'.repeat(n)}`);
    const nested = cpuMs(`${'<b><i>'.repeat(n / 2)}x${'</p>'.repeat(n)}${'<span>'.repeat(n)}`);
    expect(nested).toBeLessThan(20 * Math.max(flat, 10));
  });
});
