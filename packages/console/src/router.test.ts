import { randomBytes } from 'node:crypto';
import { Accounts } from '@scrapejobs/domain';
import { createLogger } from '@scrapejobs/logging';
import express from 'express';
import { Redis } from 'ioredis';
import request from 'supertest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts';
import { REDIS_URL, testPrefix } from '../../../test/support/redis.ts';
import type { ConsoleDeps, ConsoleServices } from './deps.ts';
import { SessionStore } from './http/session.ts';
import { consoleRouter } from './router.ts';

const prefix = testPrefix();
const redis = new Redis(REDIS_URL);
// Every API process derives the same key, so each router built here stands for one of them.
const FORM_KEY = randomBytes(32);
let tdb: TestDatabase;
const calls: string[] = [];

// Services that only record calls (a refused request must never reach them), but real accounts.
const services = new Proxy(
  {},
  {
    get: (_t, service: string) =>
      service === 'accounts'
        ? new Accounts(tdb.db)
        : new Proxy(
            {},
            {
              get: (_u, method: string) => async () => {
                calls.push(`${service}.${method}`);
                throw new Error('not under test');
              },
            },
          ),
  },
) as ConsoleServices;

function build(over: Partial<ConsoleDeps> = {}) {
  const deps: ConsoleDeps = {
    redis,
    prefix: prefix.prefix,
    log: createLogger('console-test', 'silent'),
    services,
    parseJob: () => {
      throw new Error('not under test');
    },
    formKey: FORM_KEY,
    secureCookies: false,
    ...over,
  };
  const router = consoleRouter(deps);
  const app = express();
  app.set('trust proxy', 'loopback');
  app.use('/console', router);
  return { app, router };
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  await new Accounts(tdb.db).create('owner@example.com', 'a long enough password');
});
afterAll(async () => {
  redis.disconnect();
  await tdb.drop();
  await prefix.cleanup();
});

async function signedIn() {
  const account = (await new Accounts(tdb.db).authenticate('owner@example.com', 'a long enough password'))!;
  const session = await new SessionStore(redis, prefix.prefix).create({
    id: account.userId,
    email: account.email,
    passwordStamp: account.passwordStamp,
  });
  return { cookie: `sj_session=${session.id}`, csrf: session.data.csrf };
}

describe('console router', () => {
  it('refuses every POST route with 403 without the CSRF token or with a wrong one, before any service runs', async () => {
    const { app, router } = build();
    const { cookie, csrf } = await signedIn();
    const posts = router.stack
      .map((layer) => layer.route)
      .filter((route) => route && (route as unknown as { methods: Record<string, boolean> }).methods.post)
      .map((route) => String(route!.path).replace(/:(\w+)/g, (_m, name: string) => `${name}_0123`));
    expect(posts).toEqual(
      expect.arrayContaining([
        '/login',
        '/logout',
        '/mode',
        '/keys',
        '/keys/id_0123/regenerate',
        '/keys/id_0123/revoke',
        '/jobs',
        '/jobs/id_0123/run',
        '/jobs/id_0123/pause',
        '/jobs/id_0123/resume',
        '/webhooks',
        '/webhooks/id_0123/delete',
        '/webhooks/id_0123/test',
        '/webhooks/id_0123/deliveries/delivery_0123/resend',
      ]),
    );
    for (const path of posts) {
      for (const body of [{}, { _csrf: `${csrf.slice(1)}x` }]) {
        const res = await request(app).post(`/console${path}`).set('Cookie', cookie).type('form').send(body);
        expect([path, res.status]).toEqual([path, 403]);
        expect(res.text).toContain('security token');
      }
      // A JSON body cannot carry the token either.
      const json = await request(app).post(`/console${path}`).set('Cookie', cookie).send({ _csrf: csrf });
      expect([path, json.status]).toEqual([path, 403]);
    }
    expect(calls).toEqual([]);
    // The session still works afterwards.
    const ok = await request(app)
      .post('/console/mode')
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: csrf, mode: 'live' });
    expect(ok.status).toBe(303);
  });

  it('refuses a POST without any session as expired', async () => {
    const { app } = build();
    const res = await request(app).post('/console/login').type('form').send({ email: 'owner@example.com' });
    expect(res.status).toBe(403);
    expect(res.text).toContain('session has expired');
  });

  it('sends pages with a strict CSP, no caching and no framing', async () => {
    const { app } = build();
    const res = await request(app).get('/console/login');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it('marks the cookie Secure on https (behind a trusted proxy) or when configured, not on plain http', async () => {
    const plain = await request(build().app).get('/console/login');
    expect(plain.headers['set-cookie']![0]).toMatch(
      /^sj_session=[\w-]{43}; Path=\/console; HttpOnly; SameSite=Lax$/,
    );
    const https = await request(build().app).get('/console/login').set('X-Forwarded-Proto', 'https');
    expect(https.headers['set-cookie']![0]).toMatch(/; Secure$/);
    const production = await request(build({ secureCookies: true }).app).get('/console/login');
    expect(production.headers['set-cookie']![0]).toMatch(/; Secure$/);
  });

  it('signs in with a new session id (not the form session), and a password reset ends that session', async () => {
    const { app } = build();
    const form = await request(app).get('/console/login');
    const formCookie = form.headers['set-cookie']![0]!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.text)![1]!;
    const res = await request(app)
      .post('/console/login')
      .set('Cookie', formCookie)
      .type('form')
      .send({ _csrf: csrf, email: ' Owner@Example.com ', password: 'a long enough password' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/console/jobs');
    const cookie = res.headers['set-cookie']![0]!.split(';')[0]!;
    expect(cookie).not.toBe(formCookie);
    // The form's session is gone: its id cannot be used to ride the signed-in session.
    expect((await request(app).get('/console/keys').set('Cookie', formCookie)).headers.location).toBe(
      '/console/login',
    );

    const before = await request(app).get('/console/mode-does-not-exist').set('Cookie', cookie);
    expect(before.status).toBe(404);
    expect(before.text).toContain('owner@example.com');

    await new Accounts(tdb.db).setPassword('owner@example.com', 'another long password');
    const after = await request(app).get('/console/jobs').set('Cookie', cookie);
    expect(after.status).toBe(303);
    expect(after.headers.location).toBe('/console/login');
    await new Accounts(tdb.db).setPassword('owner@example.com', 'a long enough password');
  });

  it('serves its two assets and nothing else under /assets', async () => {
    const { app } = build();
    const css = await request(app).get('/console/assets/console.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await request(app).get('/console/assets/console.js')).status).toBe(200);
    expect((await request(app).get('/console/assets/..%2Frouter.ts')).status).toBe(404);
  });

  it('keeps nothing in Redis for anonymous visitors: many sign-in pages add no key under the prefix', async () => {
    const { app } = build();
    const keys = async () => {
      const found: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix.prefix}:*`, 'COUNT', 1000);
        cursor = next;
        found.push(...batch);
      } while (cursor !== '0');
      return found.sort();
    };
    const before = await keys();
    const first = await request(app).get('/console/login');
    const cookie = first.headers['set-cookie']![0]!.split(';')[0]!;
    for (let i = 0; i < 500; i++) {
      const res = await request(app)
        .get(i % 3 === 0 ? '/console/login?signed_out=1' : '/console/login')
        .set('Cookie', i % 2 ? cookie : `sj_session=${randomBytes(32).toString('base64url')}`);
      expect(res.status).toBe(200);
    }
    // Signed-in pages sent to visitors without a session only redirect.
    expect((await request(app).get('/console/jobs')).status).toBe(303);
    expect(await keys()).toEqual(before);
  });

  it('keeps the sign-in form nonce the cookie already holds, so two open forms both work', async () => {
    const { app } = build();
    const first = await request(app).get('/console/login');
    const cookie = first.headers['set-cookie']![0]!.split(';')[0]!;
    const again = await request(app).get('/console/login').set('Cookie', cookie);
    expect(again.headers['set-cookie']![0]!.split(';')[0]).toBe(cookie);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(first.text)![1]!;
    const res = await request(app)
      .post('/console/login')
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: csrf, email: 'owner@example.com', password: 'wrong password' });
    expect(res.status).toBe(401);
    expect(res.text).toContain('Incorrect email or password.');
  });

  it('gives a working sign-in form to a visitor whose session has just ended', async () => {
    const { app } = build();
    const { cookie } = await signedIn();
    await new Accounts(tdb.db).setPassword('owner@example.com', 'another long password');
    const form = await request(app).get('/console/login').set('Cookie', cookie);
    expect(form.status).toBe(200);
    // The old session's cookie is deleted, then set again as the form's nonce: the last one holds.
    const cookies = form.headers['set-cookie'] as unknown as string[];
    expect(cookies.map((c) => c.split(';')[0])).toEqual(['sj_session=', cookie]);
    expect(await redis.exists(`${prefix.prefix}:session:${cookie.slice('sj_session='.length)}`)).toBe(0);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.text)![1]!;
    const res = await request(app)
      .post('/console/login')
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: csrf, email: 'owner@example.com', password: 'another long password' });
    await new Accounts(tdb.db).setPassword('owner@example.com', 'a long enough password');
    expect([res.status, res.headers.location]).toEqual([303, '/console/jobs']);
  });

  it('accepts a sign-in form shown by another API process, but not one bound to another cookie or key', async () => {
    const form = await request(build().app).get('/console/login');
    const cookie = form.headers['set-cookie']![0]!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.text)![1]!;
    const signIn = (app: ReturnType<typeof build>['app'], cookieHeader: string) =>
      request(app)
        .post('/console/login')
        .set('Cookie', cookieHeader)
        .type('form')
        .send({ _csrf: csrf, email: 'owner@example.com', password: 'a long enough password' });

    const otherCookie = `sj_session=${randomBytes(32).toString('base64url')}`;
    const wrongCookie = await signIn(build().app, otherCookie);
    expect([wrongCookie.status, wrongCookie.text]).toEqual([403, expect.stringContaining('security token')]);
    const otherKey = await signIn(build({ formKey: randomBytes(32) }).app, cookie);
    expect([otherKey.status, otherKey.text]).toEqual([403, expect.stringContaining('security token')]);

    const other = await signIn(build().app, cookie);
    expect(other.status).toBe(303);
    expect(other.headers.location).toBe('/console/jobs');
    const session = other.headers['set-cookie']![0]!.split(';')[0]!;
    expect(session).toMatch(/^sj_session=[\w-]{43}$/);
    expect(session).not.toBe(cookie);
    expect(await redis.exists(`${prefix.prefix}:session:${session.slice('sj_session='.length)}`)).toBe(1);
    expect(await redis.exists(`${prefix.prefix}:session:${cookie.slice('sj_session='.length)}`)).toBe(0);
  });

  it('answers 400 for NUL in a form field or query parameter, before any service or database', async () => {
    const { app } = build();
    const form = await request(app).get('/console/login');
    const cookie = form.headers['set-cookie']![0]!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.text)![1]!;
    const login = await request(app)
      .post('/console/login')
      .set('Cookie', cookie)
      .type('form')
      .send(`_csrf=${encodeURIComponent(csrf)}&email=a%00b%40example.com&password=x`);
    expect(login.status).toBe(400);
    expect(login.text).toContain('email must not contain NUL characters');

    const session = await signedIn();
    for (const [path, body, field] of [
      ['/console/keys', `name=ci%00&scopes=jobs%3Aread`, 'name'],
      ['/console/jobs', `name=x&source=https%3A%2F%2Fexample.com%2F%00&q_rows=1`, 'source'],
      [
        '/console/webhooks',
        `url=https%3A%2F%2Fexample.com%2F&description=a%00&events=job.failed`,
        'description',
      ],
    ] as const) {
      const res = await request(app)
        .post(path)
        .set('Cookie', session.cookie)
        .type('form')
        .send(`_csrf=${session.csrf}&${body}`);
      expect([path, res.status, res.text]).toEqual([
        path,
        400,
        expect.stringContaining(`${field} must not contain NUL characters`),
      ]);
    }
    const list = await request(app).get('/console/jobs?cursor=%00').set('Cookie', session.cookie);
    expect([list.status, list.text]).toEqual([400, expect.stringContaining('cursor must not contain NUL')]);
    expect(calls).toEqual([]);
  });

  it('answers 400 for a form it cannot read: too many fields, too large, another charset, bad gzip', async () => {
    const { app } = build();
    const { cookie } = await signedIn();
    const post = () => request(app).post('/console/keys').set('Cookie', cookie);
    for (const res of [
      await post()
        .type('form')
        .send(Array.from({ length: 400 }, (_, i) => `f${i}=1`).join('&')),
      await post()
        .type('form')
        .send(`name=${'x'.repeat(70_000)}`),
      await post().set('Content-Type', 'application/x-www-form-urlencoded; charset=koi8-r').send('name=x'),
      await post()
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .set('Content-Encoding', 'gzip')
        .send(Buffer.from('not gzip')),
    ]) {
      expect([res.status, res.text]).toEqual([
        400,
        expect.stringContaining('The request could not be read.'),
      ]);
    }
    expect(calls).toEqual([]);
  });

  it('answers 404 for a malformed percent-encoded id on every page with one', async () => {
    const { app } = build();
    const { cookie, csrf } = await signedIn();
    expect((await request(app).get('/console/assets/%')).status).toBe(404);
    for (const path of [
      '/jobs/%',
      '/jobs/job_%ZZ',
      '/jobs/%C0/download',
      '/jobs/job_0123/runs/%E0%A4%A',
      '/webhooks/%E0%A4%A',
      '/webhooks/wh_%',
    ]) {
      const res = await request(app).get(`/console${path}`).set('Cookie', cookie);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).toContain('It does not exist');
    }
    for (const path of ['/jobs/%/run', '/keys/%/revoke', '/webhooks/%/deliveries/%ZZ/resend']) {
      const res = await request(app)
        .post(`/console${path}`)
        .set('Cookie', cookie)
        .type('form')
        .send({ _csrf: csrf });
      expect([path, res.status]).toEqual([path, 404]);
    }
    expect(calls).toEqual([]);
  });
});
