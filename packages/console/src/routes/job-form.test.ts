import { emptyJobForm } from '../views/jobs.ts';
import { formErrors, toCreateBody } from './job-form.ts';

describe('job form', () => {
  it('builds the POST /jobs body, leaving out empty query rows and keeping the rows they came from', () => {
    const v = emptyJobForm();
    v.name = 'Shop';
    v.source = 'https://shop.test/p/[1-3]';
    v.rateLimit = '30';
    v.queries[1] = { name: 'title', type: 'css', query: 'h1', join: false };
    v.queries[2] = { name: 'body', type: 'xpath', query: '//p', join: true };
    v.schedule = true;
    v.minutes = '0, 30';
    v.hours = '';
    v.days = '1,x';
    v.timezone = 'Europe/Paris';
    const { body, rows } = toCreateBody(v);
    expect(body).toEqual({
      name: 'Shop',
      source: 'https://shop.test/p/[1-3]',
      rate_limit: 30,
      queries: [
        { name: 'title', type: 'css', query: 'h1', join: false },
        { name: 'body', type: 'xpath', query: '//p', join: true },
      ],
      formats: [],
      content: null,
      extract: null,
      scheduling: { minutes: [0, 30], days: [1, 'x'], timezone: 'Europe/Paris' },
      render_config: null,
      crawl: null,
      change_tracking: null,
    });
    expect(rows.queries).toEqual([1, 2]);
  });

  it('sends render_config with the mode chosen when rendering is ticked', () => {
    const v = emptyJobForm();
    v.source = 'https://shop.test/';
    v.queries[0] = { name: 'title', type: 'css', query: 'h1', join: false };
    expect(toCreateBody(v).body.render_config).toBeNull();
    v.render = true;
    expect(toCreateBody(v).body.render_config).toEqual({ enabled: true, mode: 'auto' });
    v.renderMode = 'always';
    expect(toCreateBody(v).body.render_config).toEqual({ enabled: true, mode: 'always' });
  });

  it('leaves rate_limit to its default when empty, and sends scheduling null when unticked', () => {
    const { body } = toCreateBody({ ...emptyJobForm(), rateLimit: '' });
    expect(body).not.toHaveProperty('rate_limit');
    expect(body.scheduling).toBeNull();
  });

  it('sends extract as parsed JSON and a prompt, and names a schema that is not JSON', () => {
    const v = emptyJobForm();
    v.extract = { schema: '{"type": "object", "properties": {"price": {"type": "number"}}}', prompt: '' };
    const ok = toCreateBody(v);
    expect(ok.body.extract).toEqual({
      schema: { type: 'object', properties: { price: { type: 'number' } } },
      prompt: null,
    });
    expect(ok.problems).toEqual({});
    v.extract = { schema: '{"type": ', prompt: 'the price' };
    const bad = toCreateBody(v);
    expect(bad.body.extract).toEqual({ schema: '{"type": ', prompt: 'the price' });
    expect(bad.problems['extract.schema']).toMatch(/^is not valid JSON: /);
  });

  it('names the form row of a query error', () => {
    expect(
      formErrors(
        { 'queries[0].query': 'invalid css', name: 'required', queries: 'too few' },
        { queries: [2], follow: [], include: [], exclude: [], includeTags: [], excludeTags: [], key: [] },
      ),
    ).toEqual({
      'query row 3: query': 'invalid css',
      name: 'required',
      queries: 'too few',
    });
  });

  it('builds the crawl from its fields, leaving out empty link rows and pattern lines', () => {
    const v = emptyJobForm();
    v.crawl = {
      enabled: true,
      follow: [
        { type: 'css', query: '' },
        { type: 'xpath', query: '//a/@href' },
        { type: 'css', query: 'a.next::attr(href)' },
      ],
      maxDepth: '2',
      maxPages: 'many',
      sameOrigin: false,
      robots: true,
      sitemap: true,
      include: '\n/products/\r\n  \n(bad\n',
      exclude: '',
    };
    const { body, rows } = toCreateBody(v);
    expect(body.crawl).toEqual({
      follow: [
        { type: 'xpath', query: '//a/@href' },
        { type: 'css', query: 'a.next::attr(href)' },
      ],
      max_depth: 2,
      max_pages: 'many',
      same_origin: false,
      respect_robots_txt: true,
      sitemap: true,
      include: ['/products/', '(bad'],
      exclude: [],
    });
    expect(rows).toEqual({
      queries: [],
      follow: [1, 2],
      include: [1, 3],
      exclude: [],
      includeTags: [],
      excludeTags: [],
      key: [],
    });
  });

  it('sends crawl null when unticked, and leaves empty limits to their defaults', () => {
    expect(toCreateBody(emptyJobForm()).body.crawl).toBeNull();
    const v = emptyJobForm();
    v.crawl = { ...v.crawl, enabled: true, maxDepth: '', maxPages: '' };
    const crawl = toCreateBody(v).body.crawl as Record<string, unknown>;
    expect(crawl).not.toHaveProperty('max_depth');
    expect(crawl).not.toHaveProperty('max_pages');
    expect(crawl.follow).toEqual([]);
  });

  it('names the link row and the pattern line of a crawl error', () => {
    expect(
      formErrors(
        {
          'crawl.follow[1].query': 'invalid xpath: …',
          'crawl.include[1]': 'invalid regular expression: …',
          'crawl.exclude[0]': 'must have at least 1 character',
          'crawl.max_pages': 'must be an integer',
        },
        {
          queries: [],
          follow: [0, 2],
          include: [1, 3],
          exclude: [4],
          includeTags: [],
          excludeTags: [],
          key: [],
        },
      ),
    ).toEqual({
      'link row 3: query': 'invalid xpath: …',
      'include line 4': 'invalid regular expression: …',
      'exclude line 5': 'must have at least 1 character',
      'crawl.max_pages': 'must be an integer',
    });
  });

  it('builds change_tracking from the key names, leaving out empty ones and keeping their places', () => {
    const v = emptyJobForm();
    v.tracking = { enabled: true, key: ' url, ,title ,', content: false };
    const { body, rows } = toCreateBody(v);
    expect(body.change_tracking).toEqual({ key: ['url', 'title'] });
    expect(rows.key).toEqual([0, 2]);
  });

  it('sends an empty key for the whole record, and change_tracking null when unticked', () => {
    const v = emptyJobForm();
    expect(toCreateBody(v).body.change_tracking).toBeNull();
    v.tracking = { enabled: true, key: '', content: false };
    expect(toCreateBody(v).body.change_tracking).toEqual({ key: [] });
  });

  it('names the place of a change-tracking key error in the comma list', () => {
    expect(
      formErrors(
        {
          'change_tracking.key[1]':
            '"price" is neither url, a query name of the job, nor a top-level property of its extract.schema',
        },
        { queries: [], follow: [], include: [], exclude: [], includeTags: [], excludeTags: [], key: [0, 2] },
      ),
    ).toEqual({
      'key name 3':
        '"price" is neither url, a query name of the job, nor a top-level property of its extract.schema',
    });
  });
  it('builds formats from the boxes ticked, and content from its fields, keeping each selector’s line', () => {
    const v = emptyJobForm();
    v.content = {
      formats: ['markdown', 'metadata', 'markdown'],
      onlyMainContent: false,
      includeTags: 'article\n\n  main .post  \r\n',
      excludeTags: '\n.ads',
    };
    const { body, rows } = toCreateBody(v);
    expect(body).toMatchObject({
      queries: [],
      formats: ['markdown', 'metadata'],
      content: { only_main_content: false, include_tags: ['article', 'main .post'], exclude_tags: ['.ads'] },
    });
    expect(rows).toMatchObject({ includeTags: [0, 2], excludeTags: [1] });
  });

  it('sends content null while it says what the defaults say, and no formats when none is ticked', () => {
    const { body } = toCreateBody(emptyJobForm());
    expect(body).toMatchObject({ formats: [], content: null });
    const v = emptyJobForm();
    v.content = { ...v.content, formats: ['links'], excludeTags: '\n' };
    expect(toCreateBody(v).body).toMatchObject({ formats: ['links'], content: null });
  });

  it('sends change_tracking.content only when its box is ticked', () => {
    const v = emptyJobForm();
    v.tracking = { enabled: true, key: 'url', content: true };
    expect(toCreateBody(v).body.change_tracking).toEqual({ key: ['url'], content: true });
    v.tracking.content = false;
    expect(toCreateBody(v).body.change_tracking).toEqual({ key: ['url'] });
  });

  it('names the line of a content selector error', () => {
    expect(
      formErrors(
        {
          'content.include_tags[1]': 'invalid CSS selector: …',
          'content.exclude_tags[0]': 'invalid CSS selector: …',
        },
        { queries: [], follow: [], include: [], exclude: [], includeTags: [0, 3], excludeTags: [2], key: [] },
      ),
    ).toEqual({
      'include selector line 4': 'invalid CSS selector: …',
      'exclude selector line 3': 'invalid CSS selector: …',
    });
  });
});
