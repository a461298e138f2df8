import { type AnyNode, type Element, isTag, isText } from 'domhandler';
import { nextInside, nextOutside } from './dom.ts';
import { longestRun } from './markdown-text.ts';

const LANGUAGE_CLASS =
  /(?:^|\s)(?:language|lang|highlight-source|highlight)-([A-Za-z0-9_+#.-]{1,32})(?:\s|$)/;
const LANGUAGE_NAME = /^[A-Za-z0-9_+#.-]{1,32}$/;

/** The lines of a fenced code block for a `<pre>` (none when it is blank). */
export function codeBlock(pre: Element, skip: (element: Element) => boolean): string[] {
  let code = preText(pre, skip).replace(/\r\n?/g, '\n');
  // A newline right after <pre> is not content (the HTML parser drops it).
  if (code.startsWith('\n')) code = code.slice(1);
  code = code.trimEnd();
  if (code.trim() === '') return [];
  const fence = '`'.repeat(Math.max(3, longestRun(code, '`') + 1));
  return [`${fence}${languageOf(pre)}`, ...code.split('\n'), fence];
}

/** The text of a `<pre>` as shown: text as is, `<br>` a newline, hidden parts left out. */
function preText(pre: Element, skip: (element: Element) => boolean): string {
  const parts: string[] = [];
  for (let node: AnyNode | null = pre; node !== null; ) {
    if (isText(node)) parts.push(node.data);
    else if (isTag(node) && node !== pre) {
      if (skip(node)) {
        node = nextOutside(node, pre);
        continue;
      }
      if (node.name === 'br') parts.push('\n');
    }
    node = nextInside(node, pre);
  }
  return parts.join('');
}

/**
 * The language a code block names: `data-lang` / `data-language`, or a `language-x` / `lang-x`
 * class, on the `<pre>`, the `<code>` in it or the `<pre>`'s parent (GitHub's
 * `highlight-source-x`); '' when none does.
 */
function languageOf(pre: Element): string {
  const code = pre.children.find((child): child is Element => isTag(child) && child.name === 'code');
  const parent = pre.parent !== null && isTag(pre.parent) ? pre.parent : undefined;
  for (const element of [code, pre, parent]) {
    if (element === undefined) continue;
    const named = element.attribs['data-lang'] ?? element.attribs['data-language'];
    if (named !== undefined && LANGUAGE_NAME.test(named.trim())) return named.trim().toLowerCase();
    const match = LANGUAGE_CLASS.exec(element.attribs.class ?? '');
    if (match !== null) return match[1]!.toLowerCase();
  }
  return '';
}
