/**
 * The target site of bench/firecrawl.ts, in its own process so that serving pages does not compete
 * with the benchmark's own event loop. Pages are built once per path, then served from memory with
 * Content-Length and keep-alive:
 *
 *   - `GET /article/<n>`: an article page of about 25 KB (head metadata, navigation, an article of
 *     sections with paragraphs, a list, a table and code, an aside of related links, a footer).
 *   - `GET /catalog/<n>`: the ~80 KB catalogue page of bench/fleet-site.ts (400 list items).
 *   - `GET /` and `GET /page/<n>`, n < CRAWL_PAGES (default 10,000): a site to crawl, `/` being page
 *     0. Each is an article of about 12 KB whose "next" navigation links to its ten children
 *     `/page/<10n+1>` … `/page/<10n+10>` (those below CRAWL_PAGES), so every page is within four
 *     links of `/`; it also links to `/`, its parent and two other pages already linked elsewhere.
 *   - `GET /__stats`: the request counts; everything else (robots.txt too) is 404.
 *
 * Run: `node bench/firecrawl-site.ts [port]`; prints `listening <port>` once ready.
 */
import { createServer } from 'node:http';
import { catalogPage, listenSite } from './fleet-site.ts';

/** Links from a crawl page to pages one level further down. */
export const FAN_OUT = 10;

const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but ' +
  'have an they you were her she there been one all we their has would when if so no will more can ' +
  'about said up out what some time into them than its only other new also could people these two ' +
  'may first then do any like my now over such our man me even most made after well because through ' +
  'system service crawler page content network storage latency request worker queue database index'
).split(' ');

/** A deterministic generator of words, sentences and paragraphs for page `seed`. */
function textOf(seed: number) {
  let state = (seed * 2654435761 + 1013904223) >>> 0;
  const next = () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state;
  };
  const word = () => WORDS[next() % WORDS.length]!;
  const sentence = () => {
    const n = 8 + (next() % 14);
    const words = Array.from({ length: n }, word);
    const first = words[0]!;
    words[0] = first[0]!.toUpperCase() + first.slice(1);
    return `${words.join(' ')}.`;
  };
  const paragraph = (sentences: number) => Array.from({ length: sentences }, sentence).join(' ');
  return { word, sentence, paragraph, next };
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

/**
 * An article page: `sections` sections of three paragraphs (one with an inline link and emphasis),
 * most with a list, a table or code; `navLinks` go in a "next" navigation after the article, and
 * `linkTo` makes the inline and related links.
 */
export function articlePage(
  n: number,
  {
    sections = 20,
    path = `/article/${n}`,
    navLinks = [] as string[],
    linkTo = (k: number) => `/article/${k % 1000}`,
  } = {},
): string {
  const t = textOf(n);
  const title = `Notes on ${t.word()} ${t.word()} and ${t.word()}, part ${n}`;
  const description = t.sentence();
  const body: string[] = [];
  for (let s = 1; s <= sections; s++) {
    body.push(`<h2 id="s${s}">${s}. ${escapeHtml(t.sentence().slice(0, 40))}</h2>`);
    body.push(`<p>${t.paragraph(4)}</p>`);
    body.push(
      `<p>${t.paragraph(2)} See <a href="${linkTo(n + s)}">the ${t.word()} article</a> and ` +
        `<em>${t.word()} ${t.word()}</em> for <strong>${t.word()}</strong>. ${t.paragraph(2)}</p>`,
    );
    body.push(`<p>${t.paragraph(3)}</p>`);
    if (s % 4 === 1)
      body.push(`<ul>${Array.from({ length: 5 }, () => `<li>${t.sentence()}</li>`).join('')}</ul>`);
    if (s % 4 === 2)
      body.push(
        `<table><thead><tr><th>Name</th><th>Value</th><th>Note</th></tr></thead><tbody>${Array.from(
          { length: 5 },
          (_, i) => `<tr><td>${t.word()} ${i}</td><td>${t.next() % 1000}</td><td>${t.word()}</td></tr>`,
        ).join('')}</tbody></table>`,
      );
    if (s % 4 === 3)
      body.push(
        `<pre><code class="language-js">const ${t.word()}Count = ${t.next() % 100};\nfor (let i = 0; i &lt; 10; i++) console.log(i);</code></pre>`,
      );
  }
  const related = Array.from(
    { length: 8 },
    (_, i) => `<li><a href="${linkTo(n * 7 + i)}">${t.word()} ${t.word()} ${t.word()}</a></li>`,
  ).join('');
  const next = navLinks.length
    ? `<nav class="next">${navLinks.map((href) => `<a href="${href}">${href}</a>`).join(' ')}</nav>`
    : '';
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="description" content="${escapeHtml(description)}">
<meta property="og:title" content="${escapeHtml(title)}"><meta property="og:type" content="article">
<meta property="og:url" content="${path}"><link rel="canonical" href="${path}">
<style>body { font-family: sans-serif; max-width: 40em } nav a { margin: 0 .3em }</style></head>
<body><header><a href="/">Home</a><nav class="site"><a href="/">Topics</a> <a href="/">Archive</a></nav></header>
<main><article><h1>${escapeHtml(title)}</h1><p class="byline">By ${t.word()} ${t.word()}, ${1 + (n % 28)} March 2026</p>
${body.join('\n')}
</article>${next}</main>
<aside><h3>Related</h3><ul>${related}</ul></aside>
<footer><p>© 2026 The ${t.word()} journal. ${t.sentence()}</p></footer></body></html>`;
}

/** The path of crawl page `n`: `/` for the first. */
export const crawlPath = (n: number) => (n === 0 ? '/' : `/page/${n}`);

/** Crawl page `n` of a site of `total`: its children, the root, its parent and two pages further on. */
export function crawlPage(n: number, total: number): string {
  const links = new Set<number>([0]);
  if (n > 0) links.add(Math.floor((n - 1) / FAN_OUT));
  for (let k = 1; k <= FAN_OUT; k++) if (FAN_OUT * n + k < total) links.add(FAN_OUT * n + k);
  links.add((n * 7919 + 13) % total);
  links.add((n * 104729 + 7) % total);
  return articlePage(n, {
    sections: 10,
    path: crawlPath(n),
    navLinks: [...links].map(crawlPath),
    linkTo: (k) => crawlPath(k % total),
  });
}

if (import.meta.main) {
  const crawlPages = Number(process.env.CRAWL_PAGES ?? 10_000);
  const cache = new Map<string, Buffer>();
  let pages = 0;
  let notFound = 0;
  const build = (path: string): string | null => {
    if (path === '/') return crawlPage(0, crawlPages);
    const m = path.match(/^\/(article|catalog|page)\/(\d+)$/);
    if (!m) return null;
    const n = Number(m[2]);
    if (m[1] === 'article') return articlePage(n);
    if (m[1] === 'catalog') return catalogPage('c', n);
    return n > 0 && n < crawlPages ? crawlPage(n, crawlPages) : null;
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/__stats') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ pages, not_found: notFound }));
      return;
    }
    let body = cache.get(path);
    if (!body) {
      const html = build(path);
      if (html === null) {
        notFound++;
        res.statusCode = 404;
        res.end('not found');
        return;
      }
      body = Buffer.from(html);
      cache.set(path, body);
    }
    pages++;
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': body.length });
    res.end(body);
  });
  listenSite(server);
}
