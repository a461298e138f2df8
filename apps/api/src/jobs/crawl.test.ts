import { type ApiFixture, apiFixture } from '../../../../test/support/api.ts';
import { type Client, validJob } from '../../../../test/support/client.ts';

// The job field `crawl` (docs/api.md §11) through the API: stored, returned, validated, snapshotted.

let f: ApiFixture;
let alice: Client;

beforeAll(async () => {
  f = await apiFixture();
  alice = await f.keyClient('crawler@example.com');
});

afterAll(async () => {
  await f.close();
});

const FOLLOW = [{ type: 'css', query: 'a.next::attr(href)' }];
const DEFAULTS = {
  max_depth: 3,
  max_pages: 1000,
  same_origin: true,
  include: [],
  exclude: [],
  respect_robots_txt: true,
  sitemap: false,
};

async function createJob(over: Record<string, unknown> = {}) {
  const res = await alice.post('/jobs', validJob(over));
  expect(res.status).toBe(201);
  return res.body as Record<string, unknown> & { job_id: string };
}

describe('the crawl field', () => {
  it('is null when not given, on create and in the detail', async () => {
    const job = await createJob();
    expect(job.crawl).toBeNull();
    expect((await alice.get(`/jobs/${job.job_id}`)).body.crawl).toBeNull();
  });

  it('is stored on create and returned with its defaults filled in', async () => {
    const job = await createJob({ crawl: { follow: FOLLOW } });
    expect(job.crawl).toEqual({ follow: FOLLOW, ...DEFAULTS });
    expect((await alice.get(`/jobs/${job.job_id}`)).body.crawl).toEqual({ follow: FOLLOW, ...DEFAULTS });
  });

  it('keeps every setting given, each follow query type included', async () => {
    const crawl = {
      follow: [
        { type: 'css', query: 'a::attr(href)' },
        { type: 'xpath', query: '//a[@rel="next"]/@href' },
        { type: 'regex', query: '/href="([^"]+)"/i' },
      ],
      max_depth: 0,
      max_pages: 100_000,
      same_origin: false,
      include: ['/products/', '^https://shop\\.example/'],
      exclude: ['\\?sort='],
      respect_robots_txt: false,
      sitemap: true,
    };
    const job = await createJob({ crawl });
    expect(job.crawl).toEqual(crawl);
  });

  it('is replaced whole by PUT (defaults filled again), kept when omitted, cleared by null', async () => {
    const job = await createJob({ crawl: { follow: FOLLOW, max_depth: 7, sitemap: true } });
    expect(job.crawl).toEqual({ follow: FOLLOW, ...DEFAULTS, max_depth: 7, sitemap: true });

    const follow = [{ type: 'xpath', query: '//a/@href' }];
    const put = await alice.put(`/jobs/${job.job_id}`, { crawl: { follow, max_pages: 10 } });
    expect(put.status).toBe(200);
    expect(put.body.crawl).toEqual({ follow, ...DEFAULTS, max_pages: 10 });

    const renamed = await alice.put(`/jobs/${job.job_id}`, { name: 'Renamed' });
    expect(renamed.body.crawl).toEqual({ follow, ...DEFAULTS, max_pages: 10 });

    const cleared = await alice.put(`/jobs/${job.job_id}`, { crawl: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.crawl).toBeNull();
    expect((await alice.get(`/jobs/${job.job_id}`)).body.crawl).toBeNull();
  });

  it('is set, changed and cleared by PATCH, and a detail sent back whole keeps it', async () => {
    const job = await createJob();
    const set = await alice.patch(`/jobs/${job.job_id}`, { crawl: { follow: FOLLOW, exclude: ['logout'] } });
    expect(set.status).toBe(200);
    expect(set.body.crawl).toEqual({ follow: FOLLOW, ...DEFAULTS, exclude: ['logout'] });

    const resent = await alice.put(`/jobs/${job.job_id}`, set.body);
    expect(resent.status).toBe(200);
    expect(resent.body.crawl).toEqual(set.body.crawl);

    const cleared = await alice.patch(`/jobs/${job.job_id}`, { crawl: null });
    expect(cleared.body.crawl).toBeNull();
  });

  it('is copied into the run settings when a run starts; a later change applies from the next run', async () => {
    const job = await createJob({ crawl: { follow: FOLLOW, max_pages: 50 } });
    const run = (await alice.post(`/jobs/${job.job_id}/run`)).body;
    expect(run.status).toBe('running');
    await alice.patch(`/jobs/${job.job_id}`, { crawl: null });
    const stored = await f.tdb.db.run.findUniqueOrThrow({ where: { id: run.run_id } });
    expect(stored.settings).toEqual({
      source: 'https://example.com/items',
      queries: [{ name: 'title', type: 'css', query: 'h1', join: false }],
      rate_limit: 10,
      render_config: null,
      proxy_config: null,
      crawl: { follow: FOLLOW, ...DEFAULTS, max_pages: 50 },
      request: null,
      formats: [],
      content: null,
      track_content: false,
      urls: null,
      refetch: 'conditional',
      extract: null,
      page_tracking: null,
    });
  });

  it('is null in the run settings of a job without a crawl', async () => {
    const job = await createJob();
    const run = (await alice.post(`/jobs/${job.job_id}/run`)).body;
    const stored = await f.tdb.db.run.findUniqueOrThrow({ where: { id: run.run_id } });
    expect(stored.settings).toEqual(expect.objectContaining({ crawl: null }));
  });
});

describe('crawl validation (docs/api.md §11, 400 at the field path)', () => {
  const crawl = (over: Record<string, unknown>) => validJob({ crawl: { follow: FOLLOW, ...over } });
  const follow = (...queries: Record<string, unknown>[]) => validJob({ crawl: { follow: queries } });

  const invalid: [string, unknown, string, RegExp][] = [
    ['crawl not an object', validJob({ crawl: 'deep' }), 'crawl', /must be an object/],
    ['follow missing', validJob({ crawl: {} }), 'crawl.follow', /is required/],
    ['follow empty', crawl({ follow: [] }), 'crawl.follow', /at least 1 item/],
    [
      'eleven follow queries',
      crawl({ follow: Array.from({ length: 11 }, () => FOLLOW[0]) }),
      'crawl.follow',
      /at most 10 items/,
    ],
    ['follow query type unknown', follow({ type: 'json', query: 'a' }), 'crawl.follow[0].type', /one of/],
    ['follow query empty', follow({ type: 'css', query: '' }), 'crawl.follow[0].query', /at least 1/],
    [
      'follow query over 2000 characters',
      follow({ type: 'css', query: 'a'.repeat(2001) }),
      'crawl.follow[0].query',
      /at most 2000/,
    ],
    [
      'invalid css follow query',
      follow(FOLLOW[0]!, { type: 'css', query: 'a[' }),
      'crawl.follow[1].query',
      /^invalid css: /,
    ],
    [
      'xpath syntax error',
      follow({ type: 'xpath', query: '//a[' }),
      'crawl.follow[0].query',
      /^invalid xpath: /,
    ],
    [
      'invalid regex',
      follow({ type: 'regex', query: '(unclosed' }),
      'crawl.follow[0].query',
      /^invalid regex: /,
    ],
    [
      'a name on a follow query',
      follow({ name: 'next', type: 'css', query: 'a' }),
      'crawl.follow[0].name',
      /^unknown field$/,
    ],
    ['max_depth 51', crawl({ max_depth: 51 }), 'crawl.max_depth', /at most 50/],
    ['max_depth negative', crawl({ max_depth: -1 }), 'crawl.max_depth', /at least 0/],
    ['max_depth fractional', crawl({ max_depth: 1.5 }), 'crawl.max_depth', /integer/],
    ['max_pages 0', crawl({ max_pages: 0 }), 'crawl.max_pages', /at least 1/],
    ['max_pages 100001', crawl({ max_pages: 100_001 }), 'crawl.max_pages', /at most 100000/],
    ['max_pages a string', crawl({ max_pages: '10' }), 'crawl.max_pages', /must be a number|integer/],
    ['same_origin not boolean', crawl({ same_origin: 'yes' }), 'crawl.same_origin', /boolean/],
    [
      'respect_robots_txt not boolean',
      crawl({ respect_robots_txt: 1 }),
      'crawl.respect_robots_txt',
      /boolean/,
    ],
    ['sitemap not boolean', crawl({ sitemap: null }), 'crawl.sitemap', /boolean/],
    [
      'include not a regular expression',
      crawl({ include: ['/ok/', '(unclosed'] }),
      'crawl.include[1]',
      /^invalid regular expression: .*/,
    ],
    [
      'exclude not a regular expression',
      crawl({ exclude: ['[z-a]'] }),
      'crawl.exclude[0]',
      /^invalid regular expression: /,
    ],
    [
      '51 include patterns',
      crawl({ include: Array.from({ length: 51 }, (_, i) => `p${i}`) }),
      'crawl.include',
      /at most 50 items/,
    ],
    [
      '51 exclude patterns',
      crawl({ exclude: Array.from({ length: 51 }, () => 'x') }),
      'crawl.exclude',
      /at most 50/,
    ],
    [
      'include pattern over 500 characters',
      crawl({ include: ['a'.repeat(501)] }),
      'crawl.include[0]',
      /at most 500/,
    ],
    ['include pattern empty', crawl({ include: [''] }), 'crawl.include[0]', /at least 1/],
    ['include pattern not a string', crawl({ include: [5] }), 'crawl.include[0]', /string/],
    ['unknown crawl field', crawl({ depth: 2 }), 'crawl.depth', /^unknown field$/],
    [
      'a field named __proto__',
      validJob({ crawl: JSON.parse('{"follow":[{"type":"css","query":"a"}],"__proto__":1}') }),
      'crawl.__proto__',
      /^unknown field$/,
    ],
  ];

  it.each(invalid)('rejects %s on create', async (_name, body, path, text) => {
    const res = await alice.post('/jobs', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(Object.keys(res.body.details)).toEqual([path]);
    expect(res.body.details[path]).toMatch(text);
  });

  it.each(invalid)('rejects %s on PUT and PATCH, leaving the job as it was', async (_name, body, path) => {
    const job = await createJob({ crawl: { follow: FOLLOW } });
    const { crawl: bad } = body as { crawl: unknown };
    for (const method of ['put', 'patch'] as const) {
      const res = await alice[method](`/jobs/${job.job_id}`, { crawl: bad });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.details)).toEqual([path]);
    }
    expect((await alice.get(`/jobs/${job.job_id}`)).body.crawl).toEqual(job.crawl);
  });

  it('reports crawl violations with every other violation at once', async () => {
    const res = await alice.post('/jobs', {
      ...validJob({ queries: [{ name: 'q', type: 'xpath', query: '//[' }] }),
      crawl: {
        follow: [
          { type: 'css', query: 'a::attr(href)' },
          { type: 'xpath', query: '//a[' },
        ],
        max_pages: 0,
        include: ['('],
        exclude: ['ok', '+'],
        typo: true,
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({
      'queries[0].query': expect.stringMatching(/^invalid xpath: /),
      'crawl.follow[1].query': expect.stringMatching(/^invalid xpath: /),
      'crawl.max_pages': 'must be at least 1',
      'crawl.include[0]': expect.stringMatching(/^invalid regular expression: /),
      'crawl.exclude[1]': expect.stringMatching(/^invalid regular expression: .*Nothing to repeat/),
      'crawl.typo': 'unknown field',
    });
  });

  it('refuses a follow query too expensive to compile at its path', async () => {
    const res = await alice.post(
      '/jobs',
      validJob({ crawl: { follow: [{ type: 'xpath', query: 'count((1 to 100000000)[. mod 7 = 0])' }] } }),
    );
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({
      'crawl.follow[0].query': 'too expensive to compile (took longer than 1000 ms)',
    });
  });
});
