import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createLogger } from '@scrapejobs/logging';
import { type InteractAnswer, type InteractCommand, InteractSessionStore } from '@scrapejobs/queues';
import { Redis } from 'ioredis';
import { REDIS_URL, testPrefix } from '../../../../test/support/redis.ts';
import { deadPort, html, type LocalServer, startServer } from '../../../../test/support/render-servers.ts';
import { DEFAULT_CHROMIUM_PATH } from '../config.ts';
import { Renderer } from '../render/index.ts';
import { type SessionDeps, type SessionLimits, serveSession } from './session.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;
const LIMITS: SessionLimits = { idleMs: 60_000, maxLifeMs: 600_000, maxOutput: 1_000, maxResult: 1_000 };

const prefix = testPrefix();
let redis: Redis;
let store: InteractSessionStore;
let renderer: Renderer;
let server: LocalServer;

beforeAll(async () => {
  redis = new Redis(REDIS_URL);
  store = new InteractSessionStore(redis, prefix.prefix);
  server = await startServer((_req, res) => html(res, '<p id="n">0</p>'));
  renderer = await Renderer.start({ concurrency: 1, executablePath: CHROMIUM, allowPrivate: true });
});

afterAll(async () => {
  await renderer?.close();
  await server?.close();
  redis.disconnect();
  await prefix.cleanup();
});

/** A session claimed as the API claims one, served here; `url` is the page it opens. */
async function serve(opts: { url?: string; limits?: Partial<SessionLimits> } = {}) {
  const ticket = { sessionId: randomUUID(), scrapeId: `run_${randomUUID()}`, userId: `usr_${randomUUID()}` };
  const claim = await store.claim(ticket.scrapeId, ticket.userId, ticket.sessionId, 1, 60_000);
  expect(claim.kind).toBe('new');
  const deps: SessionDeps = {
    store,
    blocking: () => redis.duplicate(),
    renderer: async () => renderer,
    pageRequest: async () => ({
      url: opts.url ?? `${server.origin}/`,
      waitStrategy: 'load',
      waitTimeoutMs: 5_000,
    }),
    limits: { ...LIMITS, ...opts.limits },
    worker: 'test',
    log: createLogger('interact-test', 'silent'),
  };
  const shutdown = new AbortController();
  const served = serveSession(deps, ticket, shutdown.signal);
  const blocking = redis.duplicate();
  const ask = async (command: InteractCommand, first = false): Promise<InteractAnswer | null> => {
    await store.send(ticket.sessionId, command, first);
    return store.answer(blocking, command.id, 10_000);
  };
  const run = (code: string) => ask({ type: 'run', id: randomUUID(), code, timeoutMs: 5_000 });
  return { ticket, served, shutdown, ask, run, done: () => blocking.disconnect() };
}

describe('an interact session on a worker', () => {
  test('runs its commands in order on one page until stopped, then forgets the session', async () => {
    const s = await serve();
    try {
      expect(await s.run(`document.getElementById('n').textContent = '5';`)).toMatchObject({
        kind: 'ran',
        exitCode: 0,
      });
      expect(await s.run(`return page.innerText('#n');`)).toMatchObject({ kind: 'ran', result: '5' });
      expect(await store.look(s.ticket.scrapeId)).toMatchObject({ state: 'open', alive: true });
      expect(await s.ask({ type: 'stop', id: randomUUID() })).toEqual({
        kind: 'stopped',
        sessionMs: expect.any(Number),
      });
      await s.served;
      expect(await store.look(s.ticket.scrapeId)).toBeNull();
      // Its place among the user's sessions is free again.
      expect((await store.claim(`run_${randomUUID()}`, s.ticket.userId, randomUUID(), 1, 1_000)).kind).toBe(
        'new',
      );
    } finally {
      s.done();
    }
  });

  test('ends after its idle time and keeps why for the next call; its place is free', async () => {
    const s = await serve({ limits: { idleMs: 300 } });
    try {
      expect(await s.run('return 1;')).toMatchObject({ kind: 'ran', result: '1' });
      await s.served;
      expect(await store.look(s.ticket.scrapeId)).toMatchObject({
        state: 'ended',
        alive: false,
        reason: 'it had no command for 0.3 s',
      });
      expect((await store.claim(`run_${randomUUID()}`, s.ticket.userId, randomUUID(), 1, 1_000)).kind).toBe(
        'new',
      );
    } finally {
      s.done();
    }
  });

  test('a page that cannot be opened answers the waiting command so, and the session is forgotten', async () => {
    const s = await serve({ url: `http://127.0.0.1:${await deadPort()}/` });
    try {
      expect(await s.run('return 1;')).toEqual({
        kind: 'failed',
        reason: expect.stringMatching(/could not be opened/),
      });
      await s.served;
      expect(await store.look(s.ticket.scrapeId)).toBeNull();
    } finally {
      s.done();
    }
  });

  test("the worker's shutdown ends the session, and a command queued meanwhile is answered that it ended", async () => {
    const s = await serve();
    try {
      expect(await s.run('return 1;')).toMatchObject({ kind: 'ran' });
      // A long command, then one queued behind it; the shutdown comes while the first runs.
      const long = s.run('await page.waitForTimeout(500); return 2;');
      const queued = { type: 'run' as const, id: randomUUID(), code: 'return 3;', timeoutMs: 5_000 };
      await new Promise((resolve) => setTimeout(resolve, 100));
      await store.send(s.ticket.sessionId, queued);
      s.shutdown.abort();
      expect(await long).toMatchObject({ kind: 'ran', result: '2' });
      const blocking = redis.duplicate();
      expect(await store.answer(blocking, queued.id, 5_000)).toEqual({
        kind: 'ended',
        reason: 'the worker serving it shut down',
      });
      blocking.disconnect();
      await s.served;
      expect(await store.look(s.ticket.scrapeId)).toMatchObject({ state: 'ended', alive: false });
    } finally {
      s.done();
    }
  });
});
