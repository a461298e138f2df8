import { describe, expect, test } from '@jest/globals';
import { htmlDocument } from './index.ts';

const PAGE = {
  sourceUrl: 'https://news.example/',
  url: 'https://news.example/a',
  statusCode: 200,
  contentType: 'text/html',
};

function md(body: string): string {
  const options = { formats: ['markdown' as const], onlyMainContent: true, includeTags: [], excludeTags: [] };
  return htmlDocument(`<html><body>${body}</body></html>`, PAGE, options).markdown!;
}

const p = (topic: string) =>
  `<p>This paragraph about ${topic} is long enough to be taken for content, with commas, clauses, and a full stop at its end.</p>`;
const BODY = `${p('rivers')}${p('hills')}${p('towns')}`;
/** A header with a headline, a standfirst and a byline: more than 200 characters without the body. */
const HEADER =
  '<div class="article-head"><h1>Council approves the harbour plan</h1>' +
  '<p class="dek">The plan, which the council debated for two years, will rebuild the harbour wall and add two flood gates at the slipways.</p>' +
  '<div class="by">By Ana Ruiz | Staff writer covering the council, the port and the county budget</div></div>';
const NAV = '<nav><a href="/a">Alpha section</a> <a href="/b">Beta section</a></nav>';

describe('rule: class and id names are read as words', () => {
  test('an article body in a fixed-sidebar layout is the body, not a sidebar', () => {
    const out = md(
      `${NAV}${HEADER}<div class="l-sidebar-fixed l-article-body-segment">${BODY}</div>` +
        '<div class="l-sidebar"><p>Most read today, in a list of stories that is long enough to score.</p></div>',
    );
    expect(out).toContain('about rivers');
    expect(out).toContain('about towns');
    expect(out).not.toContain('Most read');
  });

  test('the first page of a paginated body is not pagination; the page links are', () => {
    const out = md(
      `${HEADER}<div class="article-body pagination-first">${BODY}</div>` +
        '<div class="pagination"><span>1</span> <a href="/a/2">2</a> <a href="/a/3">3</a> <a href="/a/2">Next page</a></div>',
    );
    expect(out).toContain('about hills');
    expect(out).not.toContain('Next page');
  });

  test('within one name the boilerplate word wins (entry-meta, sidebar-content); a thing wins over content', () => {
    const out = md(
      `<article class="post">${BODY}<div class="entry-meta"><p>Filed under gardening, balconies and other things, by the editor.</p></div>` +
        '<div class="sidebar-content"><p>A box of links and notes that sits in the sidebar of every page here.</p></div>' +
        '<div class="article comments"><p>A reader comment that is long enough, with commas, to look like a paragraph.</p></div></article>',
    );
    expect(out).toContain('about towns');
    for (const gone of ['Filed under', 'A box of links', 'A reader comment']) expect(out).not.toContain(gone);
  });

  test('camelCase and BEM names are split (articleBody, article__body) and component names are read', () => {
    const out = md(
      `<div class="storyWrapper"><div class="articleBody">${BODY}</div>` +
        '<div data-component="byline-block"><span>Ana Ruiz</span><span>County desk</span></div></div>',
    );
    expect(out).toContain('about rivers');
    expect(out).not.toContain('County desk');
  });

  test('a heading is not cut for a layout word in its name (header-anchor)', () => {
    const out = md(
      `<div class="body">${p('one')}<h2 class="header-anchor-post">Second part</h2>${p('two')}</div>`,
    );
    expect(out).toContain('## Second part');
  });
});

describe('rule: text runs between blocks and <br> pairs are paragraphs', () => {
  test('an article of bare text runs in a div that also holds blocks is found, not only a footer paragraph', () => {
    const runs = [
      'Oberlauter. The works on the new bridge',
      'The old wooden bridge was closed',
      'The mayor said',
    ].map(
      (start) =>
        `${start} are described here at the length of a paragraph, with commas, clauses, and a stop.<br><br>`,
    );
    const out = md(
      `<div id="inhalt"><h1>A new bridge</h1><div class="bild"><img src="/b.jpg" alt=""></div>${runs.join('\n')}<b>Info:</b> a meeting is held on Thursday.</div>` +
        '<div id="fuss"><p>© Verlag GmbH, Marktplatz 3, 67700 Oberlauter. All rights reserved, reprint, copy and publication only with permission.</p></div>',
    );
    expect(out).toContain('# A new bridge');
    expect(out).toContain('The mayor said');
    expect(out).toContain('The works on the new bridge are described here');
  });
});

describe('rule: teasers and lists of teasers beside the article are cut', () => {
  const teaser = (n: number) =>
    `<li><time>10:0${n % 10}</time><a href="/n/${n}"><h3>Headline number ${n} of the breaking news list</h3></a>` +
    `<p>The teaser of story ${n}, two lines long, says what happened, where, and who said what about it.</p></li>`;
  const list = Array.from({ length: 14 }, (_, n) => teaser(n)).join('');

  test('a short article beside a long list of teasers is the article', () => {
    const out = md(
      `<main><div class="col-8"><article><h1>Libraries open late</h1>${BODY}</article></div>` +
        `<div class="col-4"><section class="latest"><h2>Breaking</h2><ul>${list}</ul></section></div></main>`,
    );
    expect(out).toContain('about towns');
    expect(out).not.toContain('Headline number');
    expect(out).not.toContain('The teaser of story');
  });

  test('an index of teasers, with nothing else, keeps them all (a catalogue keeps its items)', () => {
    const out = md(`${NAV}<main><h1>Latest posts</h1><ul>${list}</ul></main>`);
    expect(out).toContain('# Latest posts');
    expect(out).toContain('Headline number 0 of the breaking news list');
    expect(out).toContain('The teaser of story 13');
  });
});

describe('rule: photo galleries keep each caption once, without their controls', () => {
  test('thumbnails, full-screen copies, counters and Close / Back to gallery are left out', () => {
    const captions = [
      'The cottages from the landing stage, at dawn.',
      'The kitchen with its rebuilt iron range.',
    ];
    const slides = captions
      .map((c, i) => `<div class="slide"><img src="/g/${i}.jpg" alt=""><p>${c}</p></div>`)
      .join('');
    const thumbs = captions.map(
      (c, i) => `<li><a href="#s${i}"><img src="/g/${i}-t.jpg" alt=""><span>${c}</span></a></li>`,
    );
    const full = captions
      .map((c, i) => `<div class="item"><img src="/g/${i}-l.jpg" alt=""><p>${c}</p></div>`)
      .join('');
    const out = md(
      `<article><h1>Inside the lighthouse cottages</h1>${p('the cottages')}<div class="gallery"><div class="count">1 / 2</div>${slides}` +
        `<a href="#">Previous</a> <a href="#">Next</a><ul class="strip">${thumbs.join('')}</ul></div>${p('bookings')}` +
        `<div class="box"><div class="bar"><a href="#">Back to Gallery</a> <a href="#">Close</a></div>${full}</div></article>`,
    );
    for (const caption of captions) expect(out.split(caption).length - 1).toBe(1);
    expect(out).toContain('about bookings');
    for (const gone of ['1 / 2', 'Previous', 'Next', 'Back to Gallery', 'Close', '-l.jpg'])
      expect(out).not.toContain(gone);
  });
});

describe('rule: bylines, datelines and "Updated" lines are left out', () => {
  test('lines of who wrote it and when go; a paragraph that starts with "By" stays', () => {
    const out = md(
      '<article><h1>Senate panel advances the bill</h1><div><div>By JANE DOE and LI WEI</div>' +
        '<div><span>Updated 3:45 PM EST, March 5, 2024</span></div><p class="when">14/05/2024 - 11:20</p>' +
        '<p>Words by Harriet Vane 12 February 2024 9 min read</p></div>' +
        `<p>By the end of the decade the leases were gone, replaced by computers, and the shop had to find new customers.</p>${BODY}</article>`,
    );
    expect(out).toContain('By the end of the decade');
    for (const gone of ['JANE DOE', 'Updated', '11:20', 'Harriet Vane']) expect(out).not.toContain(gone);
  });

  test('numbers and dates inside a sentence stay', () => {
    const out = md(
      `<article><h1>Jobs</h1><p>Unemployment rose to <strong>5.2</strong> percent on <time>April 18, 2024</time>, the office said, after <b>12</b> months.</p>${BODY}</article>`,
    );
    expect(out).toContain('**5.2** percent on April 18, 2024, the office said, after **12** months');
  });

  test('a name beside a cut time is a byline too', () => {
    const out = md(
      `<article><h1>Title</h1><p class="meta">Priya Raman · <time>April 18, 2024</time></p>${BODY}</article>`,
    );
    expect(out).not.toContain('Priya Raman');
  });
});

describe('rule: share, newsletter and cookie boxes are left out', () => {
  test('a box with an e-mail field inside the body, a share bar and a cookie notice go; the body stays', () => {
    const out = md(
      '<div id="cmp"><p>Ce site utilise des cookies pour mesurer l’audience.</p><a href="#">Accepter</a></div>' +
        `<article><h1>Les cantines passent au bio</h1><div class="outils"><a href="https://twitter.com/intent/tweet">Tweeter</a> <a href="https://www.facebook.com/sharer">Partager</a></div>` +
        `${p('one')}<div class="encart"><p>Recevez chaque matin l’essentiel de l’actualité.</p><form><input type="email" name="email"><button>S’inscrire</button></form></div>${p('two')}</article>`,
    );
    expect(out).toContain('about one');
    expect(out).toContain('about two');
    for (const gone of ['Recevez', 'Tweeter', 'Partager']) expect(out).not.toContain(gone);
  });
});

describe('rule: what the page hides is left out', () => {
  test('hidden, aria-hidden, display:none and the hiding classes go; classes shown again on wide screens stay', () => {
    const hidden = [
      '<p hidden>attribute hidden</p>',
      '<p aria-hidden="true">aria hidden</p>',
      '<p style="display: none">inline none</p>',
      '<span class="sr-only">screen reader only</span>',
      '<span class="visually-hidden">visually hidden</span>',
      '<div class="d-none">bootstrap none</div>',
      '<div class="hidden">hidden class</div>',
    ];
    const out = md(
      `<article><h1>Build times</h1>${hidden.join('')}<p class="d-none d-lg-block">Shown from large screens on, as the lead.</p>` +
        `<p class="hidden md:block">Shown from medium screens on, the second lead.</p>${BODY}</article>`,
    );
    expect(out).toContain('Shown from large screens on');
    expect(out).toContain('Shown from medium screens on');
    for (const gone of [
      'attribute hidden',
      'aria hidden',
      'inline none',
      'screen reader',
      'visually hidden',
      'bootstrap none',
      'hidden class',
    ])
      expect(out).not.toContain(gone);
  });

  test('a hiding class on <body> hides nothing (pages that reveal themselves with a script)', () => {
    expect(
      htmlDocument(`<html><body class="hidden">${BODY}</body></html>`, PAGE, {
        formats: ['markdown'],
        onlyMainContent: true,
        includeTags: [],
        excludeTags: [],
      }).markdown,
    ).toContain('about hills');
  });
});

describe('rule: widgets inside the content are cut, judged inner ones first', () => {
  test('a box of related links with a line of text goes, while the body with its links stays', () => {
    const linked = `<p>The report, published by <a href="/r">the county</a>, says rivers rose, roads closed, and towns flooded, as forecast.</p>`;
    const out = md(
      `<article><h1>Floods</h1>${BODY}<div class="box"><h4>Related internet links</h4><a href="/x">Flood maps</a> <a href="/y">Road closures</a></div>${linked}</article>`,
    );
    expect(out).toContain('[the county](https://news.example/r)');
    expect(out).not.toContain('Flood maps');
  });
});

describe('rule: what a reader counts is kept', () => {
  test('headline, a body split around an ad into sibling blocks, lists, tables, code, quotes and in-body images', () => {
    const out = md(
      `<div class="article"><h1>Sponge cities</h1><div class="article__content">${p('first')}<ul><li>green roofs</li><li>swales</li></ul></div>` +
        '<div class="ad-container"><span>Anzeige</span></div>' +
        `<div class="article__content">${p('second')}<figure><img src="/m.jpg" alt="A swale"><figcaption>A swale in Leipzig.</figcaption></figure>` +
        '<table><tr><th>City</th><th>Since</th></tr><tr><td>Berlin</td><td>2018</td></tr></table>' +
        `<blockquote><p>We cannot dig up every street.</p></blockquote><pre><code>rain = keep(water)</code></pre>${p('third')}</div></div>`,
    );
    for (const kept of [
      '# Sponge cities',
      'about first',
      'about second',
      'about third',
      '- green roofs',
      '| Berlin | 2018 |',
      '> We cannot dig up every street.',
      'rain = keep(water)',
      '![A swale](https://news.example/m.jpg)',
      'A swale in Leipzig.',
    ])
      expect(out).toContain(kept);
    expect(out).not.toContain('Anzeige');
  });

  test('a page whose only text sits in boilerplate is never empty', () => {
    expect(
      md('<div class="sidebar"><p>The only text on this page, in a box named like a sidebar.</p></div>'),
    ).toContain('The only text');
  });
});
