import { rankLinks } from './rank.ts';

const link = (url: string, title?: string, description?: string) => ({ url, title, description });
const urls = (links: readonly { url: string }[]) => links.map((l) => l.url);

describe('rankLinks', () => {
  const links = [
    link('https://example.com/'),
    link('https://example.com/about', 'About us'),
    link('https://example.com/blog/pricing-changes', 'Blog'),
    link('https://example.com/plans', 'Pricing plans'),
    link('https://example.com/pricing', 'Plans'),
    link('https://example.com/contact', 'Contact', 'Ask us about pricing'),
  ];

  it('keeps the order without a search', async () => {
    expect(await rankLinks(links, null)).toEqual(links);
    expect(await rankLinks(links, '  ')).toEqual(links);
  });

  it('puts links whose path or title holds the search first, then partial matches, the rest in order', async () => {
    expect(urls(await rankLinks(links, 'pricing'))).toEqual([
      // Path matches count more than title matches.
      'https://example.com/blog/pricing-changes',
      'https://example.com/pricing',
      'https://example.com/plans',
      'https://example.com/contact',
      'https://example.com/',
      'https://example.com/about',
    ]);
  });

  it('ranks an exact phrase above links holding its words apart', async () => {
    const ranked = await rankLinks(
      [
        link('https://example.com/plans/pricing', 'Pricing of plans'),
        link('https://example.com/x', 'Our pricing plans'),
        link('https://example.com/pricing-plans'),
      ],
      'Pricing Plans',
    );
    expect(urls(ranked)).toEqual([
      'https://example.com/pricing-plans',
      'https://example.com/x',
      'https://example.com/plans/pricing',
    ]);
  });

  it('ranks more of the search’s words above fewer', async () => {
    const ranked = await rankLinks(
      [
        link('https://example.com/docs'),
        link('https://example.com/docs/api/auth'),
        link('https://example.com/api'),
      ],
      'api auth docs',
    );
    expect(urls(ranked)).toEqual([
      'https://example.com/docs/api/auth',
      'https://example.com/docs',
      'https://example.com/api',
    ]);
  });

  it('matches words by their start, case-insensitively, decoding the path', async () => {
    const ranked = await rankLinks(
      [
        link('https://example.com/a'),
        link('https://example.com/Caf%C3%A9s/list'),
        link('https://example.com/blogs'),
      ],
      'BLOG café',
    );
    expect(urls(ranked)).toEqual([
      'https://example.com/Caf%C3%A9s/list',
      'https://example.com/blogs',
      'https://example.com/a',
    ]);
  });

  it('is stable among equal links and does not change its input', async () => {
    const same = [
      link('https://example.com/docs/1'),
      link('https://example.com/docs/2'),
      link('https://example.com/docs/3'),
    ];
    const copy = [...same];
    expect(await rankLinks(same, 'docs')).toEqual(same);
    expect(same).toEqual(copy);
  });

  it('lets other work run while it ranks a big map', async () => {
    const many = Array.from({ length: 5_000 }, (_, i) => link(`https://example.com/page/${i}`));
    let turns = 0;
    const tick = () => {
      turns += 1;
      if (!done) setImmediate(tick);
    };
    let done = false;
    setImmediate(tick);
    const ranked = await rankLinks(many, 'page 4999 '.repeat(100));
    done = true;
    expect(ranked[0]).toEqual(link('https://example.com/page/4999'));
    expect(turns).toBeGreaterThan(1);
  });
});
