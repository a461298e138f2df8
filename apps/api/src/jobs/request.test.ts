import { openRequest, type StoredRequest } from '@scrapejobs/domain';
import { DEVELOPMENT_SECRET_KEY, SecretBox } from '@scrapejobs/outbound';
import { type ApiFixture, apiFixture } from '../../../../test/support/api.ts';
import { type Client, validJob } from '../../../../test/support/client.ts';

// The job field `request` and render_config's actions and screenshot (docs/api.md §14) through
// the API: stored sealed, answered masked, kept when the mask comes back, validated.

let f: ApiFixture;
let alice: Client;
const box = new SecretBox(DEVELOPMENT_SECRET_KEY);
const MASK = '********';

beforeAll(async () => {
  f = await apiFixture();
  alice = await f.keyClient('login@example.com');
});

afterAll(async () => {
  await f.close();
});

const REQUEST = {
  headers: { 'X-Api-Key': 'key-one-secret', 'Accept-Language': 'fr-CH' },
  cookies: [{ name: 'session', value: 'cookie-secret-1' }],
  basic_auth: { username: 'ada', password: 'pass-secret-1' },
  user_agent: 'ShopWatch/1.0',
  skip_tls_verification: true,
};

async function stored(jobId: string) {
  const row = await f.tdb.db.job.findUniqueOrThrow({ where: { id: jobId } });
  return row.request as StoredRequest;
}

describe('the request field', () => {
  it('is null by default, stored sealed, and answered with its secrets masked', async () => {
    expect((await alice.post('/jobs', validJob())).body.request).toBeNull();
    const res = await alice.post(
      '/jobs',
      validJob({ source: 'https://shop.example/[1-3]', request: REQUEST }),
    );
    expect(res.status).toBe(201);
    const masked = {
      headers: { 'X-Api-Key': MASK, 'Accept-Language': MASK },
      cookies: [{ name: 'session', value: MASK, domain: 'shop.example', path: '/' }],
      basic_auth: { username: 'ada', password: MASK },
      user_agent: 'ShopWatch/1.0',
      authorization: null,
      skip_tls_verification: true,
    };
    expect(res.body.request).toEqual(masked);
    expect((await alice.get(`/jobs/${res.body.job_id}`)).body.request).toEqual(masked);
    expect(JSON.stringify((await alice.get('/jobs/status')).body)).not.toMatch(/secret/);

    const row = await stored(res.body.job_id);
    expect(JSON.stringify(row)).not.toMatch(/secret/);
    expect(openRequest(box, res.body.job_id, row)).toEqual({
      headers: REQUEST.headers,
      cookies: [
        { name: 'session', value: 'cookie-secret-1', domain: 'shop.example', hostOnly: true, path: '/' },
      ],
      basic_auth: REQUEST.basic_auth,
      user_agent: 'ShopWatch/1.0',
      authorization: null,
      skip_tls_verification: true,
    });
    // A sealed value belongs to its job: copied to another, it does not open.
    expect(() => openRequest(box, 'job_01JD000000000000000000000A', row)).toThrow(/authenticate/);
  });

  it('takes an Authorization value of any scheme, sealed, masked, kept by a PUT that sends the mask back', async () => {
    const res = await alice.post(
      '/jobs',
      validJob({ request: { authorization: 'Bearer tok-secret-9', headers: { 'X-A': 'a' } } }),
    );
    expect(res.status).toBe(201);
    expect(res.body.request).toMatchObject({ authorization: MASK, basic_auth: null });
    const id = res.body.job_id as string;
    expect(JSON.stringify(await stored(id))).not.toMatch(/tok-secret/);
    expect(JSON.stringify((await alice.get(`/jobs/${id}`)).body)).not.toMatch(/tok-secret/);
    expect(openRequest(box, id, await stored(id)).authorization).toBe('Bearer tok-secret-9');
    await alice.put(`/jobs/${id}`, { request: { authorization: MASK, user_agent: 'ua/1' } });
    expect(openRequest(box, id, await stored(id)).authorization).toBe('Bearer tok-secret-9');
    await alice.put(`/jobs/${id}`, { request: { authorization: 'Token new-secret' } });
    expect(openRequest(box, id, await stored(id)).authorization).toBe('Token new-secret');
    const both = await alice.post(
      '/jobs',
      validJob({ request: { authorization: 'Bearer x', basic_auth: { username: 'u', password: 'p' } } }),
    );
    expect([both.status, both.body.details]).toEqual([
      400,
      {
        'request.authorization': 'give either basic_auth or authorization: both are the Authorization header',
      },
    ]);
    const header = await alice.post(
      '/jobs',
      validJob({ request: { headers: { Authorization: 'Bearer x' } } }),
    );
    expect(header.body.details).toEqual({
      'request.headers.Authorization': 'may not be set here: use basic_auth or authorization',
    });
  });

  it('keeps each stored secret whose mask comes back in a PUT, and takes new values', async () => {
    const created = await alice.post('/jobs', validJob({ request: REQUEST }));
    const id = created.body.job_id as string;
    const put = await alice.put(`/jobs/${id}`, {
      request: {
        // Another case of the same name keeps its value too.
        headers: { 'x-api-key': MASK, 'Accept-Language': 'de-CH', 'X-New': 'new-secret' },
        cookies: [
          { name: 'session', value: MASK, domain: 'example.com' },
          { name: 'theme', value: 'dark', domain: '.Example.com', path: '/shop' },
        ],
        basic_auth: { username: 'grace', password: MASK },
      },
    });
    expect(put.status).toBe(200);
    expect(put.body.request).toEqual({
      headers: { 'x-api-key': MASK, 'Accept-Language': MASK, 'X-New': MASK },
      cookies: [
        { name: 'session', value: MASK, domain: 'example.com', path: '/' },
        { name: 'theme', value: MASK, domain: 'example.com', path: '/shop' },
      ],
      basic_auth: { username: 'grace', password: MASK },
      user_agent: null,
      authorization: null,
      skip_tls_verification: false,
    });
    expect(openRequest(box, id, await stored(id))).toEqual({
      headers: { 'x-api-key': 'key-one-secret', 'Accept-Language': 'de-CH', 'X-New': 'new-secret' },
      cookies: [
        // Read back with its default domain and the mask, a host-only cookie stays host-only.
        { name: 'session', value: 'cookie-secret-1', domain: 'example.com', hostOnly: true, path: '/' },
        { name: 'theme', value: 'dark', domain: 'example.com', hostOnly: false, path: '/shop' },
      ],
      basic_auth: { username: 'grace', password: 'pass-secret-1' },
      user_agent: null,
      authorization: null,
      skip_tls_verification: false,
    });
    // A name updated without `request` keeps it; null clears it.
    expect((await alice.patch(`/jobs/${id}`, { name: 'Renamed' })).body.request).not.toBeNull();
    expect((await alice.patch(`/jobs/${id}`, { request: null })).body.request).toBeNull();
    expect(await stored(id)).toBeNull();
  });

  it('snapshots the sealed request into each run', async () => {
    const created = await alice.post('/jobs', validJob({ request: REQUEST }));
    const run = await alice.post(`/jobs/${created.body.job_id}/run`);
    const row = await f.tdb.db.run.findUniqueOrThrow({ where: { id: run.body.run_id } });
    const settings = row.settings as { request: StoredRequest };
    expect(JSON.stringify(settings)).not.toMatch(/secret/);
    expect(openRequest(box, created.body.job_id, settings.request).headers).toEqual(REQUEST.headers);
  });

  const long = 'x'.repeat(4097);
  it.each([
    ['Host', { headers: { Host: 'a' } }, 'request.headers.Host'],
    ['Cookie', { headers: { cookie: 'a=b' } }, 'request.headers.cookie'],
    ['Authorization', { headers: { Authorization: 'Bearer x' } }, 'request.headers.Authorization'],
    ['Proxy-*', { headers: { 'Proxy-Authorization': 'x' } }, 'request.headers.Proxy-Authorization'],
    ['Content-Length', { headers: { 'Content-Length': '1' } }, 'request.headers.Content-Length'],
    ['Transfer-Encoding', { headers: { 'Transfer-Encoding': 'x' } }, 'request.headers.Transfer-Encoding'],
    ['Connection', { headers: { Connection: 'close' } }, 'request.headers.Connection'],
    ['a name that is no token', { headers: { 'X Bad': 'a' } }, 'request.headers.X Bad'],
    ['CR LF in a value', { headers: { 'X-A': 'a\r\nX-Injected: 1' } }, 'request.headers.X-A'],
    ['a character HTTP cannot carry', { headers: { 'X-A': 'right\u202eleft' } }, 'request.headers.X-A'],
    ['a lone surrogate', { headers: { 'X-A': '\ud800' } }, 'request.headers.X-A'],
    ['an oversized value', { headers: { 'X-A': long } }, 'request.headers.X-A'],
    [
      '51 headers',
      { headers: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`X-${i}`, 'v'])) },
      'request.headers',
    ],
    [
      '101 cookies',
      { cookies: Array.from({ length: 101 }, (_, i) => ({ name: `c${i}`, value: 'v' })) },
      'request.cookies',
    ],
    ['a cookie value with ;', { cookies: [{ name: 'a', value: 'b; c=d' }] }, 'request.cookies[0].value'],
    [
      'a cookie path without /',
      { cookies: [{ name: 'a', value: 'b', path: 'shop' }] },
      'request.cookies[0].path',
    ],
    ['a user name with :', { basic_auth: { username: 'a:b', password: 'p' } }, 'request.basic_auth.username'],
    ['a long user agent', { user_agent: 'u'.repeat(513) }, 'request.user_agent'],
    ['a header named __proto__', { headers: JSON.parse('{"__proto__":"x"}') }, 'request.headers.__proto__'],
    ['an unknown field', { header: {} }, 'request.header'],
  ])('refuses %s with a 400 at its path', async (_, request, path) => {
    const res = await alice.post('/jobs', validJob({ request }));
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.details)).toEqual([path]);
  });
});

describe('render_config actions and screenshot', () => {
  const render = (over: Record<string, unknown>) => validJob({ render_config: { enabled: true, ...over } });

  it('are stored with their defaults', async () => {
    const actions = [
      { type: 'click', selector: 'button.more' },
      { type: 'type', selector: '#q', text: 'shoes' },
      { type: 'press', key: 'Enter' },
      { type: 'wait_for', selector: '.results' },
      { type: 'wait', ms: 500 },
      { type: 'scroll', to: 'bottom' },
    ];
    const res = await alice.post('/jobs', render({ actions, screenshot: true }));
    expect(res.status).toBe(201);
    expect(res.body.render_config).toEqual({
      enabled: true,
      wait_strategy: 'load',
      wait_timeout_ms: 30_000,
      actions: [
        ...actions.slice(0, 3),
        { type: 'wait_for', selector: '.results', timeout_ms: 10_000 },
        actions[4],
        { type: 'scroll', to: 'bottom', times: 1 },
      ],
      screenshot: true,
      screenshot_options: null,
      mode: 'always',
      block_resources: null,
    });
    expect((await alice.post('/jobs', render({}))).body.render_config).toEqual(
      expect.objectContaining({ actions: [], screenshot: false }),
    );
    const options = { viewport: { width: 1280, height: 720 }, quality: 80 };
    expect(
      (await alice.post('/jobs', render({ screenshot: true, screenshot_options: options }))).body
        .render_config.screenshot_options,
    ).toEqual({ ...options, full_page: true });
  });

  it.each([
    [
      '21 actions',
      { actions: Array.from({ length: 21 }, () => ({ type: 'wait', ms: 1 })) },
      'render_config.actions',
    ],
    ['an unknown type', { actions: [{ type: 'hover', selector: 'a' }] }, 'render_config.actions[0].type'],
    [
      'a missing selector',
      { actions: [{ type: 'wait', ms: 1 }, { type: 'click' }] },
      'render_config.actions[1].selector',
    ],
    ['a wait over 10 s', { actions: [{ type: 'wait', ms: 10_001 }] }, 'render_config.actions[0].ms'],
    [
      'a wait_for over 30 s',
      { actions: [{ type: 'wait_for', selector: 'a', timeout_ms: 30_001 }] },
      'render_config.actions[0].timeout_ms',
    ],
    [
      '51 scrolls',
      { actions: [{ type: 'scroll', to: 'bottom', times: 51 }] },
      'render_config.actions[0].times',
    ],
    ['a screenshot that is not a boolean', { screenshot: 'yes' }, 'render_config.screenshot'],
    [
      'a screenshot viewport too wide',
      { screenshot: true, screenshot_options: { viewport: { width: 3841, height: 600 } } },
      'render_config.screenshot_options.viewport.width',
    ],
    [
      'a screenshot quality over 100',
      { screenshot: true, screenshot_options: { quality: 101 } },
      'render_config.screenshot_options.quality',
    ],
  ])('refuses %s with a 400 at its path', async (_, over, path) => {
    const res = await alice.post('/jobs', render(over));
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.details)).toEqual([path]);
  });
});
