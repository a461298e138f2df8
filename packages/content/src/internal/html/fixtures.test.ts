import { readFileSync } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import type { PageDocument } from '../document.ts';
import { htmlDocument } from './index.ts';

/** A fixture page's document with every format, main content only (as the API's default). */
function fixture(name: string, url: string, onlyMainContent = true): PageDocument {
  const html = readFileSync(new URL(`./fixtures/${name}.html`, import.meta.url), 'utf8');
  const page = { sourceUrl: url, url, statusCode: 200, contentType: 'text/html; charset=utf-8' };
  return htmlDocument(html, page, {
    formats: ['markdown', 'html', 'links', 'metadata'],
    onlyMainContent,
    includeTags: [],
    excludeTags: [],
  });
}

function expectAll(text: string, kept: readonly string[], dropped: readonly string[]): void {
  for (const part of kept) expect(text).toContain(part);
  for (const part of dropped) expect(text).not.toContain(part);
}

describe('fixture: documentation page', () => {
  const url = 'https://docs.quarry.example/guides/retries';
  const document = fixture('docs', url);

  test('the markdown keeps the article: title, headings, text, code, table and notes', () => {
    const markdown = document.markdown!;
    expect(markdown.startsWith('# Configuring retries\n\nA page that fails to load')).toBe(true);
    expectAll(
      markdown,
      [
        '## Attempts and backoff',
        '### Reading the report',
        'waits *base_delay*',
        '**five minutes**',
        "```ts\nconst job = await client.jobs.create({\n  url: 'https://shop.example/catalogue',",
        '// a 4xx answer is not retried\n```',
        '| Failure | Retried | Error code |\n| --- | --- | --- |\n| Connection reset or timeout | yes | `FETCH_TIMEOUT` |',
        '| HTTP 404 \\| 410 | no | `TARGET_GONE` |',
        '> note\n>\n> Retries count against',
        '1. Open the run in the console.\n2. Filter',
        '[runs API](https://docs.quarry.example/api/runs#report)',
      ],
      [
        'Skip to main content',
        'API reference',
        'Your first job',
        'Edit this page',
        'Previous',
        'Schedules and runs',
        'Copyright',
        'Copy',
        'Ctrl K',
        'Home',
        '[#]',
        'backoff#',
      ],
    );
  });

  test('the clean HTML holds the same content and none of the page chrome', () => {
    const html = document.html!;
    expectAll(
      html,
      [
        '<h1>Configuring retries</h1>',
        '<table>',
        '<code class="language-ts">',
        'href="https://docs.quarry.example/api/runs#report"',
      ],
      ['<script', '<style', '<nav', '<button', 'Edit this page', '<svg', 'aria-hidden'],
    );
  });

  test('metadata', () => {
    expect(document.metadata).toMatchObject({
      title: 'Configuring retries | Quarry Docs',
      description:
        'How a Quarry job retries failed pages: attempts, backoff and the errors that are not retried.',
      language: 'en-US',
      canonical_url: 'https://docs.quarry.example/guides/retries',
      keywords: 'quarry, retries, backoff, jobs',
      robots: 'index, follow',
      favicon: 'https://docs.quarry.example/img/favicon.svg',
      og: {
        type: 'article',
        title: 'Configuring retries',
        url: 'https://docs.quarry.example/guides/retries',
        image: 'https://docs.quarry.example/img/og/retries.png',
        site_name: 'Quarry Docs',
      },
      twitter: { card: 'summary_large_image', site: '@quarrydocs' },
      published_time: null,
      modified_time: '2025-03-04T09:30:00Z',
      status_code: 200,
      source_url: url,
      url,
    });
    expect(document.metadata!.json_ld.map((block) => (block as { '@type': string })['@type'])).toEqual([
      'TechArticle',
      'BreadcrumbList',
    ]);
  });

  test('links: the whole page, absolute, each once', () => {
    const links = document.links!;
    expect(links.slice(0, 4)).toEqual([
      'https://docs.quarry.example/guides/retries#main-content',
      'https://docs.quarry.example/',
      'https://docs.quarry.example/guides/',
      'https://docs.quarry.example/api/',
    ]);
    expectAll(
      links.join(' '),
      ['https://discord.example/quarry', 'https://docs.quarry.example/guides/schedules'],
      [],
    );
    expect(new Set(links).size).toBe(links.length);
    expect(links.filter((link) => link === 'https://github.com/quarry-example/quarry')).toHaveLength(1);
    expect(document.truncated).toEqual([]);
  });
});

describe('fixture: news article', () => {
  const url = 'https://www.coastalherald.example/news/2025/02/port-ellery-sea-wall';
  const document = fixture('news', url);

  test('the markdown keeps the article (headline, figure, paragraphs, quote), not its byline', () => {
    expectAll(
      document.markdown!,
      [
        '# Harbour town votes to rebuild its storm-hit sea wall',
        '![Waves breaking over the damaged sea wall at Port Ellery](https://cdn.coastalherald.example/img/2025/02/sea-wall-800.jpg)',
        'Waves over the damaged wall on 14 January. Photograph: Tom Okafor',
        "Port Ellery's council has voted to rebuild",
        '> We have patched this wall for forty years.',
        '> — Priya Natarajan, council leader',
        'Harbour Hall on 20 February at 7pm.',
      ],
      [
        'Maria Reyes',
        'cookies',
        'Accept all',
        'Sport',
        'Subscribe',
        'Share on',
        'Copy link',
        'Advertisement',
        'Related articles',
        'Storm surge floods',
        'Most read',
        'ferry timetable',
        'Holiday cottages',
        'About us',
        'All rights reserved',
        'pixel.gif',
      ],
    );
  });

  test('metadata: published and modified times come from the article:* metas', () => {
    expect(document.metadata).toMatchObject({
      title: 'Harbour town votes to rebuild its storm-hit sea wall | The Coastal Herald',
      description:
        "Councillors in Port Ellery backed a £14m plan to rebuild the sea wall after January's storm surge.",
      language: 'en-GB',
      canonical_url: url,
      keywords: 'Port Ellery, sea wall, storm, council',
      robots: 'max-image-preview:large',
      favicon: 'https://cdn.coastalherald.example/favicon-32.png',
      og: {
        title: 'Harbour town votes to rebuild its storm-hit sea wall',
        description: "A £14m plan wins the council's backing.",
        type: 'article',
        url,
        image: 'https://cdn.coastalherald.example/img/2025/02/sea-wall-1200.jpg',
      },
      twitter: {
        card: 'summary_large_image',
        title: 'Port Ellery backs sea wall rebuild',
        creator: '@mreyes_herald',
      },
      published_time: '2025-02-11T07:45:00+00:00',
      modified_time: '2025-02-11T12:10:00+00:00',
    });
    // The block that is not JSON is skipped, without naming it in `truncated`.
    expect(document.metadata!.json_ld).toHaveLength(1);
    expect(document.truncated).toEqual([]);
  });

  test('links keep the share and ad links of the whole page but no mailto: or javascript:', () => {
    const links = document.links!;
    expectAll(
      links.join(' '),
      [
        'https://www.facebook.com/sharer/sharer.php?u=',
        'https://ads.adnetwork.example/click?id=991',
        'https://www.coastalherald.example/terms',
      ],
      ['mailto:', 'javascript:'],
    );
    expect(links.filter((link) => link === 'https://www.coastalherald.example/privacy')).toHaveLength(1);
  });

  test('the whole body (onlyMainContent false) keeps the navigation and the cookie banner', () => {
    const markdown = fixture('news', url, false).markdown!;
    expectAll(
      markdown,
      ['We use cookies', '[Sport](https://www.coastalherald.example/sport/)', 'Most read'],
      ['pixel.gif'],
    );
  });
});

describe('fixture: product page', () => {
  const url = 'https://shop.example/de/p/trailblazer-40?color=green';
  const document = fixture('product', url);

  test('the markdown keeps the product: title, price, description and spec table', () => {
    expectAll(
      document.markdown!,
      [
        '# Trailblazer 40 L Wanderrucksack',
        '129,95 € ~~149,95 €~~ inkl. MwSt.',
        '## Beschreibung',
        'mit einem belüfteten Netzrücken',
        '- Regenhülle inklusive',
        'Technische Daten\n\n| Volumen | 40 l |\n| --- | --- |\n| Gewicht | 1,35 kg |',
        '![Trailblazer 40 L in Waldgrün, von vorne](https://cdn.shop.example/p/trailblazer-40/main.jpg)',
        // Lazy images and relative links resolve against <base href>.
        '[![Rückenansicht](https://cdn.shop.example/p/trailblazer-40/back-thumb.jpg)](https://shop.example/de/#img-2)',
      ],
      [
        'Kostenloser Versand',
        'Wanderrucksäcke',
        'Zelte',
        'Warenkorb',
        'Startseite',
        'In den Warenkorb',
        'S/M',
        'Kunden kauften auch',
        'Summit 22',
        'Newsletter',
        'Impressum',
        'data:image',
      ],
    );
  });

  test('metadata: canonical and favicon resolve against <base href>', () => {
    expect(document.metadata).toMatchObject({
      title: 'Trailblazer 40 L Wanderrucksack – Bergwerk Outdoor',
      description: 'Leichter 40-Liter-Rucksack mit Rückenbelüftung und Regenhülle.',
      language: 'de',
      canonical_url: 'https://shop.example/de/p/trailblazer-40',
      keywords: null,
      robots: null,
      favicon: 'https://shop.example/favicon-shop.png',
      og: { type: 'product', 'price:amount': '129.95', 'price:currency': 'EUR' },
      twitter: { card: 'product' },
      published_time: null,
      modified_time: null,
    });
    expect(document.metadata!.json_ld).toEqual([
      expect.objectContaining({ '@type': 'Product', sku: 'BW-TB40-GRN' }),
    ]);
  });

  test('links resolve against <base href>', () => {
    expect(document.links!.slice(0, 3)).toEqual([
      'https://shop.example/de/',
      'https://shop.example/de/c/rucksaecke',
      'https://shop.example/de/c/rucksaecke/wandern',
    ]);
    expect(document.links).toContain('https://shop.example/de/agb');
  });
});

describe('fixture: blog post', () => {
  const url = 'https://flourfieldnotes.example/2024/09/sourdough-at-altitude/';
  const document = fixture('blog', url);

  test('the markdown keeps the post and leaves out its dateline, comments, post navigation and sidebar widgets', () => {
    expectAll(
      document.markdown!,
      [
        '# Sourdough at altitude: what changed above 2,000 metres',
        '## Why it rises faster',
        '**less starter** (10% instead of 20%)',
        '![Open crumb of a rye loaf baked at altitude](https://flourfieldnotes.example/wp-content/uploads/2024/09/crumb-altitude.jpg)',
        '- Hydration: 72%, up from 68%',
        'I would love to hear what worked for you.',
      ],
      [
        'Posted on September 18, 2024',
        'Skip to content',
        'Bread, mostly',
        'Recipes',
        'Keeping a rye starter',
        'thoughts on',
        'Dolomites',
        'Leave a Reply',
        'Post Comment',
        'Archives',
        'October 2024',
        'Tags',
        'travel',
        'Proudly powered',
        'Posted in',
      ],
    );
  });

  test('metadata: dates from the JSON-LD @graph, description from og:description when the meta is empty', () => {
    expect(document.metadata).toMatchObject({
      title: 'Sourdough at altitude: what changed above 2,000 metres – Flour & Fieldnotes',
      description: 'Lower boiling point, faster rise: notes from a summer of baking in the mountains.',
      language: 'en',
      canonical_url: url,
      favicon: 'https://flourfieldnotes.example/wp-content/uploads/2023/01/cropped-icon-32x32.png',
      og: { locale: 'en_US', type: 'article', title: 'Sourdough at altitude' },
      twitter: { card: 'summary' },
      published_time: '2024-09-18T06:00:00+02:00',
      modified_time: '2024-10-02T21:14:00+02:00',
    });
  });

  test('links include the comments and widgets (the whole page), relative ones resolved', () => {
    expectAll(
      document.links!.join(' '),
      [
        'https://flourfieldnotes.example/2024/09/sourdough-at-altitude/?replytocom=88#respond',
        'https://flourfieldnotes.example/tag/travel/',
        'https://flourfieldnotes.example/2024/08/',
      ],
      [],
    );
  });
});
