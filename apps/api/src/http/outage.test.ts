import { createDatabase, type Database } from '@scrapejobs/db';
import request from 'supertest';
import { buildTestApi } from '../../../../test/support/api.ts';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
import { testPrefix } from '../../../../test/support/redis.ts';
import { startTcpProxy } from '../../../../test/support/tcp-proxy.ts';

let tdb: TestDatabase;
let pgProxy: Awaited<ReturnType<typeof startTcpProxy>>;
let redisProxy: Awaited<ReturnType<typeof startTcpProxy>>;
let db: Database;
let api: ReturnType<typeof buildTestApi>;
let token: string;
const prefix = testPrefix();

beforeAll(async () => {
  tdb = await createTestDatabase();
  pgProxy = await startTcpProxy(5432);
  redisProxy = await startTcpProxy(6379);
  const url = new URL(tdb.url);
  url.port = String(pgProxy.port);
  db = createDatabase({ url: url.toString(), max: 4, queryTimeoutMs: 1_500 });
  api = buildTestApi({ db, prefix: prefix.prefix, redisUrl: `redis://127.0.0.1:${redisProxy.port}` });
  token = (await api.keys.create({ email: 'o@example.com', mode: 'test', scopes: ['jobs:read'], name: 'o' }))
    .token;
});

afterAll(async () => {
  await api.close();
  await db.$disconnect();
  await db.pool.end().catch(() => {});
  await pgProxy.stop();
  await redisProxy.stop();
  await tdb.drop();
  await prefix.cleanup();
});

const list = () => request(api.app).get('/jobs/status').set('Authorization', `Bearer ${token}`);

async function timed(req: () => Promise<request.Response>) {
  const started = Date.now();
  const res = await req();
  return { res, ms: Date.now() - started };
}

async function eventually200() {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await list();
    if (res.status === 200 || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.each([
  ['PostgreSQL', () => pgProxy, 'postgres'],
  ['Redis', () => redisProxy, 'redis'],
] as const)('%s unreachable', (_name, proxy, check) => {
  it.each(['refuse', 'stall'] as const)(
    'answers 503 within 2 s when connections %s, then recovers',
    async (how) => {
      expect((await list()).status).toBe(200);
      await proxy()[how]();
      try {
        const { res, ms } = await timed(list);
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ error: 'service_unavailable', message: expect.any(String) });
        expect(ms).toBeLessThan(2_000);
        const ready = await timed(() => request(api.app).get('/ready'));
        expect(ready.res.status).toBe(503);
        expect(ready.res.body.checks[check]).toBe('unreachable');
        expect(ready.ms).toBeLessThan(2_000);
      } finally {
        await proxy().restore();
      }
      expect((await eventually200()).status).toBe(200);
    },
  );
});
