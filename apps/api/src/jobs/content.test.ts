import { validJob } from '../../../../test/support/client.ts';
import { type Fixture, startFixture } from '../../../../test/support/results.ts';

let f: Fixture;

beforeAll(async () => {
  f = await startFixture();
});

afterAll(async () => {
  await f.close();
});

describe('job fields formats and content (docs/api.md §17)', () => {
  it('creates a job of formats without queries, content defaults filled in', async () => {
    const res = await f.alice.post(
      '/jobs',
      validJob({ queries: [], formats: ['markdown', 'metadata'], content: { exclude_tags: ['.ad'] } }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      queries: [],
      formats: ['markdown', 'metadata'],
      content: { only_main_content: true, include_tags: [], exclude_tags: ['.ad'] },
    });
    const detail = await f.alice.get(`/jobs/${res.body.job_id}`);
    expect(detail.body.formats).toEqual(['markdown', 'metadata']);
  });

  it('defaults to no formats and no content', async () => {
    const res = await f.alice.post('/jobs', validJob());
    expect(res.body).toMatchObject({ formats: [], content: null });
  });

  it('turns rendering and its screenshot on for the screenshot format', async () => {
    const res = await f.alice.post('/jobs', validJob({ formats: ['screenshot'] }));
    expect(res.status).toBe(201);
    expect(res.body.render_config).toMatchObject({ enabled: true, screenshot: true, wait_strategy: 'load' });
  });

  it('tracks page content when change_tracking.content is set', async () => {
    const res = await f.alice.post(
      '/jobs',
      validJob({ formats: ['markdown'], change_tracking: { key: ['url'], content: true } }),
    );
    expect(res.body.change_tracking).toEqual({ key: ['url'], content: true });
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['neither queries nor formats', { queries: [] }, 'queries'],
    ['an unknown format', { formats: ['pdf'] }, 'formats[0]'],
    ['a format twice', { formats: ['markdown', 'markdown'] }, 'formats'],
    ['an unknown content field', { formats: ['markdown'], content: { main: true } }, 'content.main'],
    ['a content flag not a boolean', { content: { only_main_content: 'yes' } }, 'content.only_main_content'],
    [
      'a selector that does not compile',
      { content: { include_tags: ['article', 'div[['] } },
      'content.include_tags[1]',
    ],
    [
      'an excluded selector that does not compile',
      { content: { exclude_tags: ['>>>'] } },
      'content.exclude_tags[0]',
    ],
    ['an empty selector', { content: { exclude_tags: [''] } }, 'content.exclude_tags[0]'],
    ['51 selectors', { content: { include_tags: Array(51).fill('p') } }, 'content.include_tags'],
    [
      'a change_tracking.content not a boolean',
      { change_tracking: { content: 1 } },
      'change_tracking.content',
    ],
  ];

  it.each(invalid)('rejects %s with a 400 at %#', async (_name, over, path) => {
    const res = await f.alice.post('/jobs', validJob(over));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(res.body.details).toHaveProperty([path], expect.any(String));
  });

  it('keeps a job with queries or formats on update', async () => {
    const created = await f.alice.post('/jobs', validJob());
    const id = created.body.job_id as string;
    const empty = await f.alice.patch(`/jobs/${id}`, { queries: [] });
    expect(empty.status).toBe(400);
    expect(empty.body.details).toHaveProperty(['queries']);
    const formats = await f.alice.patch(`/jobs/${id}`, { queries: [], formats: ['links'] });
    expect(formats.status).toBe(200);
    expect(formats.body).toMatchObject({ queries: [], formats: ['links'] });
    const none = await f.alice.patch(`/jobs/${id}`, { formats: [] });
    expect(none.status).toBe(400);
    expect(none.body.details).toHaveProperty(['queries']);
  });

  it('turns rendering on when an update adds the screenshot format', async () => {
    const created = await f.alice.post(
      '/jobs',
      validJob({ render_config: { wait_strategy: 'networkidle0' } }),
    );
    const res = await f.alice.patch(`/jobs/${created.body.job_id}`, { formats: ['screenshot'] });
    expect(res.body.render_config).toMatchObject({
      enabled: true,
      screenshot: true,
      wait_strategy: 'networkidle0',
    });
  });
});
