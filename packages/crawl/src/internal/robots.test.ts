import { describe, expect, test } from '@jest/globals';
import { MAX_CRAWL_DELAY_MS, parseRobots, type RobotsRules, robotsAllows } from '../index.ts';

const BOT = 'ScrapeJobsBot';

/** Paths on https://example.com that `robots` allows. */
function allowed(robots: string | RobotsRules, paths: string[], token = BOT): string[] {
  const rules = typeof robots === 'string' ? parseRobots(robots, token) : robots;
  return paths.filter((path) => robotsAllows(rules, `https://example.com${path}`));
}

describe('parseRobots groups', () => {
  const file = ['User-agent: *', 'Disallow: /', '', 'User-agent: ScrapeJobsBot', 'Disallow: /private'].join(
    '\n',
  );

  test('the group naming the crawler applies, not the * group', () => {
    expect(allowed(file, ['/', '/jobs', '/private/x'])).toEqual(['/', '/jobs']);
  });

  test('the * group applies to other crawlers', () => {
    expect(allowed(file, ['/', '/jobs'], 'OtherBot')).toEqual([]);
  });

  test('the product token matches case-insensitively and ignores a version', () => {
    const rules = parseRobots('User-agent: scrapejobsbot/2.1 (+https://x)\nDisallow: /a', 'SCRAPEJOBSBOT');
    expect(rules.rules).toEqual([{ allow: false, path: '/a' }]);
  });

  test('a longer token is another crawler', () => {
    expect(parseRobots('User-agent: ScrapeJobsBotX\nDisallow: /a', BOT).rules).toEqual([]);
  });

  test('several user-agent lines make one group', () => {
    const text =
      'User-agent: Googlebot\nUser-agent: ScrapeJobsBot\nUser-agent: Bingbot\nDisallow: /a\nAllow: /a/b';
    expect(parseRobots(text, BOT).rules).toEqual([
      { allow: false, path: '/a' },
      { allow: true, path: '/a/b' },
    ]);
  });

  test('a user-agent line after rules starts a new group', () => {
    const text = 'User-agent: ScrapeJobsBot\nDisallow: /a\nUser-agent: Other\nDisallow: /b';
    expect(allowed(text, ['/a', '/b'])).toEqual(['/b']);
  });

  test('the groups naming the same crawler are combined', () => {
    const text = [
      'User-agent: ScrapeJobsBot',
      'Disallow: /a',
      'User-agent: *',
      'Disallow: /c',
      'User-agent: scrapejobsbot',
      'Disallow: /b',
    ].join('\n');
    expect(allowed(text, ['/a', '/b', '/c'])).toEqual(['/c']);
  });

  test('the * groups are combined too', () => {
    const text =
      'User-agent: *\nDisallow: /a\n\nUser-agent: Other\nDisallow: /z\n\nUser-agent: *\nDisallow: /b';
    expect(allowed(text, ['/a', '/b', '/z'])).toEqual(['/z']);
  });

  test('a group naming the crawler with an empty disallow allows everything', () => {
    const text = 'User-agent: *\nDisallow: /\n\nUser-agent: ScrapeJobsBot\nDisallow:';
    expect(parseRobots(text, BOT).rules).toEqual([]);
    expect(allowed(text, ['/', '/x'])).toEqual(['/', '/x']);
  });

  test('no group for the crawler and no * group means no rules', () => {
    expect(parseRobots('User-agent: Other\nDisallow: /', BOT).rules).toEqual([]);
  });

  test('rules before any user-agent line are ignored', () => {
    expect(parseRobots('Disallow: /\nUser-agent: *\nDisallow: /a', BOT).rules).toEqual([
      { allow: false, path: '/a' },
    ]);
  });

  test('keys are case-insensitive; comments, BOM, CR/CRLF and white space are tolerated', () => {
    const text =
      '\uFEFF# hello\r\n  USER-AGENT :  *  # all\rdisALLOW:/a # no\r\n\tAllow :\t/a/b\t\n#Disallow: /c';
    expect(parseRobots(text, BOT).rules).toEqual([
      { allow: false, path: '/a' },
      { allow: true, path: '/a/b' },
    ]);
  });

  test('unknown lines (crawl-delay, host) do not end a group', () => {
    const text = 'User-agent: *\nCrawl-delay: 5\nHost: example.com\nDisallow: /a';
    expect(parseRobots(text, BOT).rules).toEqual([{ allow: false, path: '/a' }]);
  });

  test('Crawl-delay of the group that applies, in ms, capped; a bad value says nothing', () => {
    const text = [
      'User-agent: *',
      'Crawl-delay: 2.5',
      'Disallow: /a',
      '',
      'User-agent: other',
      'Crawl-delay: 9',
    ].join('\n');
    expect(parseRobots(text, BOT).crawlDelayMs).toBe(2500);
    expect(parseRobots(text, 'other').crawlDelayMs).toBe(9000);
    expect(
      parseRobots(`User-agent: ${BOT}\nCrawl-delay: 1\nUser-agent: *\nCrawl-delay: 7`, BOT).crawlDelayMs,
    ).toBe(1000);
    expect(parseRobots('User-agent: *\nCrawl-delay: 86400', BOT).crawlDelayMs).toBe(MAX_CRAWL_DELAY_MS);
    for (const bad of ['-1', 'soon', '0', ''])
      expect(parseRobots(`User-agent: *\nCrawl-delay: ${bad}`, BOT)).not.toHaveProperty('crawlDelayMs');
    expect(parseRobots('User-agent: nobody\nCrawl-delay: 3', BOT)).not.toHaveProperty('crawlDelayMs');
  });

  test('the result survives a round trip through JSON', () => {
    const rules = parseRobots(
      'User-agent: *\nDisallow: /*.pdf$\nAllow: /é\nSitemap: https://example.com/s.xml',
      BOT,
    );
    const copy = JSON.parse(JSON.stringify(rules)) as RobotsRules;
    expect(copy).toEqual(rules);
    expect(allowed(copy, ['/a.pdf', '/a.pdf?x'])).toEqual(['/a.pdf?x']);
  });
});

describe('robotsAllows', () => {
  test('the longest matching rule wins', () => {
    const text = 'User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c';
    expect(allowed(text, ['/', '/a', '/a/x', '/a/b', '/a/b/x', '/a/b/c/d'])).toEqual(['/', '/a/b', '/a/b/x']);
  });

  test('allow wins a tie', () => {
    expect(allowed('User-agent: *\nDisallow: /page\nAllow: /page', ['/page'])).toEqual(['/page']);
    expect(allowed('User-agent: *\nAllow: /page\nDisallow: /page', ['/page'])).toEqual(['/page']);
    // Equal length, different patterns, both matching.
    expect(allowed('User-agent: *\nDisallow: /a*c\nAllow: /ab*', ['/abc'])).toEqual(['/abc']);
  });

  test('no matching rule means allowed', () => {
    expect(allowed('User-agent: *\nDisallow: /private', ['/public'])).toEqual(['/public']);
  });

  test('rules match the start of the path and the query', () => {
    const text = 'User-agent: *\nDisallow: /search?\nDisallow: /list?sort=';
    expect(
      allowed(text, ['/search', '/search?q=1', '/x/search?q', '/list?page=2', '/list?sort=date']),
    ).toEqual(['/search', '/x/search?q', '/list?page=2']);
  });

  test('* matches any sequence and a trailing $ anchors the end', () => {
    const text =
      'User-agent: *\nDisallow: /*.pdf$\nDisallow: /private*/secret\nDisallow: /*?*sessionid=\nDisallow: /exact$';
    expect(
      allowed(text, [
        '/docs/a.pdf',
        '/docs/a.pdf?download=1',
        '/a.pdfx',
        '/private-zone/x/secret/y',
        '/privat/secret',
        '/p?a=1&sessionid=2',
        '/p?sessionid',
        '/exact',
        '/exact/',
        '/exactly',
      ]),
    ).toEqual(['/docs/a.pdf?download=1', '/a.pdfx', '/privat/secret', '/p?sessionid', '/exact/', '/exactly']);
  });

  test('a $ that does not end the rule is an ordinary character', () => {
    expect(allowed('User-agent: *\nDisallow: /a$b', ['/a$b', '/a'])).toEqual(['/a']);
  });

  test('Disallow: /$ blocks only the home page', () => {
    expect(allowed('User-agent: *\nDisallow: /$', ['/', '/?x=1', '/a'])).toEqual(['/?x=1', '/a']);
  });

  test('* alone and /* block everything but robots.txt', () => {
    expect(allowed('User-agent: *\nDisallow: *', ['/', '/a?b'])).toEqual([]);
    expect(allowed('User-agent: *\nDisallow: /*', ['/', '/a?b'])).toEqual([]);
  });

  test('/robots.txt is always allowed', () => {
    expect(allowed('User-agent: *\nDisallow: /\nDisallow: /robots.txt', ['/robots.txt', '/x'])).toEqual([
      '/robots.txt',
    ]);
  });

  test('non-ASCII rule paths match their UTF-8 percent-encoding in the URL', () => {
    const text = 'User-agent: *\nDisallow: /emplois/bäcker\nDisallow: /%E3%83%84';
    expect(
      allowed(text, ['/emplois/bäcker/1', '/emplois/b%C3%A4cker', '/emplois/b%c3%a4cker', '/ツ', '/ツx']),
    ).toEqual([]);
    expect(allowed(text, ['/emplois/backer'])).toEqual(['/emplois/backer']);
  });

  test('percent-encoded unreserved characters equal the characters themselves', () => {
    expect(allowed('User-agent: *\nDisallow: /foo/%62%61%7A', ['/foo/baz', '/foo/ba'])).toEqual(['/foo/ba']);
    expect(allowed('User-agent: *\nDisallow: /foo/baz', ['/foo/%62%61%7A', '/foo/%7e'])).toEqual([
      '/foo/%7e',
    ]);
  });

  test('characters URL encodes match in either form', () => {
    const text = "User-agent: *\nDisallow: /a b\nDisallow: /x%3Cy\nDisallow: /q?name=o'brien";
    expect(
      allowed(text, ['/a b', '/a%20b', '/x<y', '/x%3cy', "/q?name=o'brien", '/q?name=o%27brien']),
    ).toEqual([]);
  });

  test('an encoded reserved character is not the character itself', () => {
    expect(allowed('User-agent: *\nDisallow: /a%2Fb', ['/a/b', '/a%2fb'])).toEqual(['/a/b']);
  });

  test('a pathological wildcard rule is matched correctly without backtracking', () => {
    const text = 'User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*b';
    const as = `/${'a'.repeat(100_000)}`;
    expect(allowed(text, [as, `${as}b`, `${as}?q=b`, '/aaaaaaab'])).toEqual([as, '/aaaaaaab']);
    const anchored = 'User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*a$';
    expect(allowed(anchored, [`${as}b`, as])).toEqual([`${as}b`]);
  });

  test('an URL that does not parse is not allowed', () => {
    expect(robotsAllows({ rules: [], sitemaps: [] }, 'not a url')).toBe(false);
  });
});

describe('parseRobots against hostile files', () => {
  test('garbage gives no rules and does not throw', () => {
    const binary = String.fromCharCode(...Array.from({ length: 5000 }, (_, i) => (i * 7919) % 65_536));
    const html = '<!doctype html><html><body><p>User-agent: *</p>\n<p>Disallow: /</p></body></html>';
    for (const text of [binary, html, 'random words: no : rules ::::', '', '\uFEFF', ':\n:\n#']) {
      const rules = parseRobots(text, BOT);
      expect(rules.rules).toEqual([]);
      expect(robotsAllows(rules, 'https://example.com/a')).toBe(true);
    }
  });

  test('only the first 500 KiB are read', () => {
    const filler = '# padding padding padding padding padding padding\n'.repeat(
      Math.ceil((2 * 1024 * 1024) / 51),
    );
    const text = `User-agent: *\nDisallow: /early\n${filler}Disallow: /late\nSitemap: https://example.com/late.xml\n`;
    const rules = parseRobots(text, BOT);
    expect(rules).toEqual({ rules: [{ allow: false, path: '/early' }], sitemaps: [] });
  });

  test('one 2 MB line does not throw', () => {
    expect(parseRobots(`User-agent: *\nDisallow: /${'a'.repeat(2 * 1024 * 1024)}`, BOT).rules).toEqual([]);
  });

  test('at most 10,000 rules are kept', () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `Disallow:/p${i}`);
    const rules = parseRobots(`User-agent: *\n${lines.join('\n')}`, BOT).rules;
    expect(rules).toHaveLength(10_000);
    expect(rules[0]).toEqual({ allow: false, path: '/p0' });
    expect(rules[9_999]).toEqual({ allow: false, path: '/p9999' });
  });

  test('paths longer than 2048 characters and paths not starting with / or * are dropped', () => {
    const text = `User-agent: *\nDisallow: /${'a'.repeat(2048)}\nDisallow: /${'b'.repeat(2047)}\nDisallow: private\nAllow: *.html`;
    expect(parseRobots(text, BOT).rules.map((r) => r.path.slice(0, 2))).toEqual(['/b', '*.']);
  });
});

describe('parseRobots sitemaps', () => {
  test('Sitemap lines are collected from anywhere in the file', () => {
    const text = [
      'Sitemap: https://example.com/a.xml',
      'User-agent: Other',
      'sitemap:http://example.com/b.xml.gz # gzip',
      'Disallow: /',
      'SITEMAP: /relative.xml',
      'Sitemap: ftp://example.com/c.xml',
      'Sitemap: https://example.com/a.xml',
      'Sitemap: https://Example.com/d.xml#frag',
    ].join('\n');
    expect(parseRobots(text, BOT).sitemaps).toEqual([
      'https://example.com/a.xml',
      'http://example.com/b.xml.gz',
      'https://example.com/d.xml',
    ]);
  });

  test('at most 100 sitemaps are kept', () => {
    const text = Array.from({ length: 500 }, (_, i) => `Sitemap: https://example.com/s${i}.xml`).join('\n');
    const { sitemaps } = parseRobots(text, BOT);
    expect(sitemaps).toHaveLength(100);
    expect(sitemaps[99]).toBe('https://example.com/s99.xml');
  });
});
