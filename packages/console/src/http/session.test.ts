import { Redis } from 'ioredis';
import { REDIS_URL, testPrefix } from '../../../../test/support/redis.ts';
import {
  ANONYMOUS_SECONDS,
  readCookie,
  SESSION_IDLE_SECONDS,
  SESSION_MAX_SECONDS,
  SessionStore,
  sessionCookie,
} from './session.ts';

const prefix = testPrefix();
const redis = new Redis(REDIS_URL);
afterAll(async () => {
  redis.disconnect();
  await prefix.cleanup();
});

const user = { id: 'usr_1', email: 'a@example.com', passwordStamp: 'stamp' };

describe('sessions in Redis', () => {
  it('creates a session under <prefix>:session:<32 random bytes> with a CSRF token and a 12 h idle TTL', async () => {
    const store = new SessionStore(redis, prefix.prefix);
    const s = await store.create(user);
    expect(s.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.data.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.data.csrf).not.toBe(s.id);
    expect(await redis.ttl(`${prefix.prefix}:session:${s.id}`)).toBe(SESSION_IDLE_SECONDS);
    const loaded = await store.load(s.id);
    expect(loaded?.data).toEqual({ ...s.data });
  });

  it('renews the idle time on every load (sliding expiry)', async () => {
    const store = new SessionStore(redis, prefix.prefix);
    const s = await store.create(user);
    await redis.expire(`${prefix.prefix}:session:${s.id}`, 60);
    await store.load(s.id);
    expect(await redis.ttl(`${prefix.prefix}:session:${s.id}`)).toBe(SESSION_IDLE_SECONDS);
  });

  it('keeps anonymous (sign-in form) sessions for an hour only', async () => {
    const s = await new SessionStore(redis, prefix.prefix).create(null);
    expect(await redis.ttl(`${prefix.prefix}:session:${s.id}`)).toBe(ANONYMOUS_SECONDS);
  });

  it('ends a session a week after sign-in however active it is', async () => {
    let now = Date.now();
    const store = new SessionStore(redis, prefix.prefix, () => now);
    const s = await store.create(user);
    now += SESSION_MAX_SECONDS * 1000 + 1;
    expect(await store.load(s.id)).toBeNull();
    expect(await redis.exists(`${prefix.prefix}:session:${s.id}`)).toBe(0);
  });

  it('finds nothing for unknown, malformed or destroyed ids', async () => {
    const store = new SessionStore(redis, prefix.prefix);
    const s = await store.create(user);
    expect(await store.load(undefined)).toBeNull();
    expect(await store.load('x')).toBeNull();
    expect(await store.load(`${s.id.slice(0, 42)}*`)).toBeNull();
    await store.destroy(s.id);
    expect(await store.load(s.id)).toBeNull();
  });
});

describe('session cookie', () => {
  it('is HttpOnly, SameSite=Lax, scoped to /console, and Secure only when asked', () => {
    expect(sessionCookie('abc', false)).toBe('sj_session=abc; Path=/console; HttpOnly; SameSite=Lax');
    expect(sessionCookie('abc', true)).toBe('sj_session=abc; Path=/console; HttpOnly; SameSite=Lax; Secure');
    expect(sessionCookie(null, true)).toBe(
      'sj_session=; Path=/console; HttpOnly; SameSite=Lax; Max-Age=0; Secure',
    );
  });

  it('is read from a Cookie header among others', () => {
    expect(readCookie('a=1; sj_session=xyz; b=2', 'sj_session')).toBe('xyz');
    expect(readCookie('sj_session_old=1', 'sj_session')).toBeUndefined();
    expect(readCookie(undefined, 'sj_session')).toBeUndefined();
  });
});
