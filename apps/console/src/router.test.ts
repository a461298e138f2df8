import { createLogger } from '@scrapejobs/logging';
import express from 'express';
import { Redis } from 'ioredis';
import request from 'supertest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts';
import { REDIS_URL, testPrefix } from '../../../test/support/redis.ts';
import { Accounts } from './auth/accounts.ts';
import type { ConsoleDeps, ConsoleServices } from './deps.ts';
import { SessionStore } from './http/session.ts';
import { consoleRouter } from './router.ts';

const prefix = testPrefix();
const redis = new Redis(REDIS_URL);
let tdb: TestDatabase;
const calls: string[] = [];

// Services that only record calls: a refused request must never reach them.
const services = new Proxy(
  {},
  {
    get: (_t, service: string) =>
      new Proxy(
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
    db: tdb.db,
    redis,
    prefix: prefix.prefix,
    log: createLogger('console-test', 'silent'),
    services,
    parseJob: () => {
      throw new Error('not under test');
    },
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
});
