import { describe, expect, test } from '@jest/globals';
import type { ContentOptions } from '../document.ts';
import { htmlDocument } from './index.ts';

const PAGE = {
  sourceUrl: 'https://example.com/',
  url: 'https://example.com/post',
  statusCode: 200,
  contentType: 'text/html',
};

function md(body: string, options: Partial<ContentOptions> = {}): string {
  const all: ContentOptions = {
    formats: ['markdown'],
    onlyMainContent: true,
    includeTags: [],
    excludeTags: [],
    ...options,
  };
  return htmlDocument(`<html><body>${body}</body></html>`, PAGE, all).markdown!;
}

const paragraph = (topic: string) =>
  `<p>This paragraph about ${topic} is long enough to be taken for content, with commas, clauses, and a full stop at its end.</p>`;
const ARTICLE = `<h1>The title</h1>${paragraph('rivers')}${paragraph('hills')}${paragraph('towns')}`;
const NAV = '<nav><a href="/a">Alpha section</a> <a href="/b">Beta section</a></nav>';

describe('main content', () => {
  test("keeps a catalogue's list of items, which is most of its content", () => {
    const items = Array.from(
      { length: 6 },
      (_, i) => `<li class="product"><a href="/p/${i}">Trail pack ${i}</a> <span>${i}9,95 €</span></li>`,
    ).join('');
    const out = md(
      `<header>${NAV}</header><main><h1>Backpacks</h1><ul>${items}</ul></main><footer>© shop</footer>`,
    );
    expect(out).toContain('# Backpacks');
    expect(out).toContain('- [Trail pack 0](https://example.com/p/0) 09,95 €');
    expect(out).toContain('- [Trail pack 5](https://example.com/p/5) 59,95 €');
    expect(out).not.toContain('Alpha section');
  });

  test('leaves out navigation, header, footer and aside', () => {
    const page =
      `<header><a href="/">Site name</a>${NAV}</header><div class="wrap"><article>${ARTICLE}</article>` +
      '<aside><p>Sidebar text that is long enough to be a paragraph of its own, almost.</p></aside></div>' +
      '<footer><p>Copyright and the address of the company, written at some length here.</p></footer>';
    const out = md(page);
    expect(out).toContain('# The title');
    expect(out).toContain('about rivers');
    expect(out).toContain('about towns');
    for (const gone of ['Site name', 'Alpha section', 'Sidebar text', 'Copyright'])
      expect(out).not.toContain(gone);
  });

  test('leaves out what is named like boilerplate: cookies, share bars, related lists, comments, ads', () => {
    const page =
      `<div id="cookie-notice"><p>We use cookies on this site to improve your experience of it, obviously.</p></div>` +
      `<div class="post">${ARTICLE}<div class="share-buttons"><a href="/s">Share this</a></div></div>` +
      `<div class="related-posts"><h3>Related</h3><p>Another article that is long enough to count as text, truly.</p></div>` +
      `<section id="comments"><p>A comment, which is long enough, with commas, to look like a paragraph.</p></section>` +
      `<div class="ad-container"><p>Buy our product today, it is long enough to be a paragraph too.</p></div>`;
    const out = md(page);
    expect(out).toContain('about hills');
    for (const gone of ['cookies', 'Share this', 'Another article', 'A comment', 'Buy our'])
      expect(out).not.toContain(gone);
  });

  test('the block of paragraphs wins over one longer run of text beside it', () => {
    const long = 'A single run of text that goes on without a pause and without structure '.repeat(8);
    const page = `<div class="box"><p>${long}</p></div><div class="story">${ARTICLE}</div>`;
    const out = md(page);
    expect(out).toContain('about rivers');
    expect(out).not.toContain('A single run');
  });

  test('grows to the parent that adds little to the content (a product title, price and specs)', () => {
    const page =
      `${NAV}<div class="product"><h1>Tent</h1><div class="price">199 €</div><div class="description">${ARTICLE}</div>` +
      '<table><tr><th>Weight</th><td>2 kg</td></tr><tr><th>Poles</th><td>2</td></tr></table></div>';
    const out = md(page);
    expect(out).toContain('# Tent\n\n199 €');
    expect(out).toContain('| Weight | 2 kg |');
    expect(out).not.toContain('Alpha');
  });

  test('takes <main> when it holds most of the text', () => {
    const page =
      `<div><p>Promo text outside main that reads like a paragraph, with commas, and so on.</p></div>` +
      `<main><h1>Main title</h1><p>short one</p><ul><li>item one of the main list</li><li>item two</li></ul>` +
      `${paragraph('main')}${paragraph('more')}${paragraph('most')}</main>`;
    const out = md(page);
    expect(out).toContain('# Main title');
    expect(out).toContain('short one');
    expect(out).toContain('- item two');
    expect(out).not.toContain('Promo text');
  });

  test('keeps the page h1 when the content is beside it', () => {
    const page = `<div class="title-area"><h1>Headline</h1></div><div class="body">${paragraph('a')}${paragraph('b')}</div>`;
    expect(md(page).startsWith('# Headline\n\n')).toBe(true);
  });

  test('leaves out link lists inside the content', () => {
    const page = `<article>${ARTICLE}<div><a href="/1">First other story</a> <a href="/2">Second other story</a></div></article>`;
    expect(md(page)).not.toContain('other story');
  });

  test('class names inside code are not judged', () => {
    const page = `<article>${ARTICLE}<pre><code><span class="comment">// keep me</span>\nrun()</code></pre></article>`;
    expect(md(page)).toContain('// keep me');
  });

  test('a section whose id comes from its heading is not judged by the id', () => {
    const page = `<article>${ARTICLE}<div class="section" id="sharing-with-others"><h2>Sharing</h2>${paragraph('sharing')}</div></article>`;
    expect(md(page)).toContain('about sharing');
  });

  test('content inside a wrapper named like boilerplate is found again without judging names', () => {
    const page = `<div class="layout-with-sidebar"><div class="story">${paragraph('a')}${paragraph('b')}</div></div>`;
    expect(md(page)).toContain('about b');
  });

  test('a page of short texts only keeps them, without its navigation', () => {
    expect(md(`${NAV}<div><h1>Shop</h1><p>Price: 10 €</p></div>`)).toBe('# Shop\n\nPrice: 10 €');
  });

  test('a page that is only navigation gives its text rather than nothing', () => {
    expect(md(NAV)).toBe('[Alpha section](https://example.com/a) [Beta section](https://example.com/b)');
  });

  test('a page of link lists only (a site map) gives its links rather than nothing', () => {
    const list = (n: number) =>
      `<ul><li><a href="/${n}/a">Page ${n} A</a></li><li><a href="/${n}/b">Page ${n} B</a></li></ul>`;
    const out = md(`<div>${list(1)}${list(2)}</div>`);
    expect(out).toContain('[Page 1 A](https://example.com/1/a)');
    expect(out).toContain('[Page 2 B](https://example.com/2/b)');
  });

  test('an empty body gives empty markdown', () => {
    expect(md('')).toBe('');
    expect(md('<div> </div>')).toBe('');
  });

  test('onlyMainContent false keeps the whole body', () => {
    const out = md(`${NAV}<article>${ARTICLE}</article>`, { onlyMainContent: false });
    expect(out).toContain('Alpha section');
    expect(out).toContain('about rivers');
  });
});

describe('include and exclude tags', () => {
  const page = `${NAV}<article>${ARTICLE}<div class="price">12 €</div><p class="note">Note</p></article>`;

  test('excludeTags removes what they match', () => {
    const out = md(page, { excludeTags: ['h1', 'p:first-of-type'] });
    expect(out).not.toContain('The title');
    expect(out).not.toContain('about rivers');
    expect(out).toContain('about hills');
  });

  test('includeTags keeps only what they match, in document order, before the main-content step', () => {
    expect(md(page, { includeTags: ['.note', 'h1', '.price'] })).toBe('# The title\n\n12 €\n\nNote');
  });

  test('includeTags keeps an element once when it is inside another match', () => {
    expect(md(page, { includeTags: ['article', 'h1'], onlyMainContent: false })).toMatch(
      /^# The title\n\n[^#]*$/,
    );
  });

  test('includeTags may take navigation, whose inside is still cleaned of form controls', () => {
    const out = md(`<nav><a href="/a">A</a><button>Menu</button></nav>${ARTICLE}`, { includeTags: ['nav'] });
    expect(out).toBe('[A](https://example.com/a)');
  });

  test('exclude wins over include', () => {
    expect(md(page, { includeTags: ['.price', '.note'], excludeTags: ['.price'] })).toBe('Note');
  });

  test('selectors that match nothing give empty markdown', () => {
    expect(md(page, { includeTags: ['.missing'] })).toBe('');
  });
});
