import { Parser } from 'htmlparser2';
import { VOID } from './clean-html.ts';

/**
 * Why a page fetched without a browser needs one (docs/api.md §23), by the rules below, in the
 * order they are tried.
 */
export type RenderSignal = 'app_root' | 'noscript' | 'inline_state' | 'little_text';

export interface PlainPageSignals {
  /** The page runs scripts: without any, a browser would show nothing more than the plain HTML. */
  scripts: boolean;
  /** Characters of text outside the page's chrome (head, nav, header, footer, aside), spaces collapsed. */
  mainTextChars: number;
  /** Why the page needs rendering, or null when its plain HTML has its content. */
  signal: RenderSignal | null;
}

/** Below this much main text a page that runs scripts has "little or no" content of its own. */
export const LITTLE_TEXT_CHARS = 200;
/** Inline JSON of at least this size holds a page's data, not a setting or two. */
export const STATE_MIN_CHARS = 200;
/** The ids frameworks mount an application on (React, Vue, Next.js, Nuxt, Gatsby). */
const APP_ROOT_IDS = new Set(['root', 'app', '__next', '__nuxt', '___gatsby']);
/** Script types that hold data, not code. */
const DATA_TYPES = /^(application\/(ld\+)?json|importmap|speculationrules|text\/template)/i;
/** An inline script assigning a framework's state (`window.__STATE__ = {...}`, Redux, Apollo). */
const STATE_ASSIGNMENT =
  /\bwindow\s*(?:\.\s*__[A-Za-z0-9_]+__|\[\s*["']__[A-Za-z0-9_]+__["']\s*\])\s*=|__(?:INITIAL|PRELOADED|APOLLO)_STATE__\s*=/;
/** Ids of JSON scripts that carry a framework's page data. */
const STATE_IDS = new Set(['__NEXT_DATA__', '__NUXT_DATA__', '__APOLLO_STATE__']);
/** A `<noscript>` that asks the reader to turn JavaScript on. */
const ASKS_FOR_JS =
  /\b(enable|turn on|activate|allow|requires?|need|needs)\b[^.]{0,40}\bjavascript\b|\bjavascript\b[^.]{0,40}\b(required|disabled|is off|must be)\b/i;
/** Elements whose text is no page's content of its own. */
const CHROME = new Set(['head', 'title', 'nav', 'header', 'footer', 'aside', 'template', 'svg', 'style']);

/**
 * Whether a page fetched without a browser needs rendering, read in one streaming pass over its
 * HTML (docs/api.md §23). The rules, in order:
 * - a page that runs no script is never rendered: a browser would add nothing;
 * - `app_root`: an application root (`#root`, `#app`, `#__next`, …) is empty: the application
 *   mounts its content there, whatever text the page has around it;
 * - otherwise only a page with little main text (LITTLE_TEXT_CHARS) is rendered, and the reason
 *   named is the most telling of: `noscript` (a `<noscript>` asks for JavaScript), `inline_state`
 *   (its data is in inline JSON: `__NEXT_DATA__`, `window.__STATE__ = …`), `little_text`.
 */
export function plainPageSignals(html: string): PlainPageSignals {
  let scripts = false;
  let mainText = 0;
  let lastWasSpace = true;
  let chromeDepth = 0;
  let inScript: { data: boolean; state: boolean; length: number; text: string[] } | null = null;
  let noscript: string[] | null = null;
  let asksForJs = false;
  let state = false;
  // The open application root: how deep its elements go, and whether anything is inside it.
  let root: { depth: number; filled: boolean } | null = null;
  let emptyRoot = false;
  let depth = 0;

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        depth++;
        if (root) root.filled = true;
        if (CHROME.has(name)) chromeDepth++;
        if (name === 'script') {
          const type = attributes.type ?? '';
          const data = DATA_TYPES.test(type);
          if (!data) scripts = true;
          const json = /^application\/json/i.test(type);
          inScript = { data, state: json || STATE_IDS.has(attributes.id ?? ''), length: 0, text: [] };
        } else if (name === 'noscript') noscript = [];
        const id = attributes.id;
        if (!root && id !== undefined && APP_ROOT_IDS.has(id) && !VOID.has(name))
          root = { depth, filled: false };
      },
      ontext(text) {
        if (inScript) {
          inScript.length += text.length;
          // Enough of the code to tell a state assignment; a long script is not kept whole.
          if (inScript.text.length < 4) inScript.text.push(text.slice(0, 2000));
          return;
        }
        if (noscript) {
          noscript.push(text);
          return;
        }
        if (root && /\S/.test(text)) root.filled = true;
        if (chromeDepth > 0) return;
        for (let i = 0; i < text.length; i++) {
          const space = text.charCodeAt(i) <= 32;
          if (space && lastWasSpace) continue;
          lastWasSpace = space;
          mainText++;
        }
      },
      onclosetag(name) {
        if (root && depth === root.depth) {
          if (!root.filled) emptyRoot = true;
          root = null;
        }
        depth--;
        if (CHROME.has(name)) chromeDepth = Math.max(0, chromeDepth - 1);
        if (name === 'script' && inScript) {
          const big = inScript.length >= STATE_MIN_CHARS;
          const assigns = !inScript.data && STATE_ASSIGNMENT.test(inScript.text.join(''));
          if (big && (inScript.state || assigns)) state = true;
          inScript = null;
        } else if (name === 'noscript' && noscript) {
          if (ASKS_FOR_JS.test(noscript.join(' '))) asksForJs = true;
          noscript = null;
        }
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);

  const signal = !scripts
    ? null
    : emptyRoot
      ? 'app_root'
      : mainText >= LITTLE_TEXT_CHARS
        ? null
        : asksForJs
          ? 'noscript'
          : state
            ? 'inline_state'
            : 'little_text';
  return { scripts, mainTextChars: mainText, signal };
}
