import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { TOKEN_FORMAT } from '@scrapejobs/domain';
import { buildTestApi } from '../../../../test/support/api.ts';
import { client } from '../../../../test/support/client.ts';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
import { until } from '../../../../test/support/processes.ts';
import { REDIS_URL, testPrefix } from '../../../../test/support/redis.ts';

const run = promisify(execFile);
const CLI = new URL('../cli/keys.ts', import.meta.url).pathname;

let tdb: TestDatabase;
const prefix = testPrefix();
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
  await prefix.cleanup();
});

async function keys(...args: string[]) {
  return keysWith({}, ...args);
}

async function keysWith(env: Record<string, string>, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      env: { ...process.env, DATABASE_URL: tdb.url, REDIS_URL, QUEUE_PREFIX: prefix.prefix, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const lastLine = (s: string) => s.trim().split('\n').at(-1)!;

describe('keys command-line tool', () => {
  it('create prints the token as the last line, stores only its hash, and list/revoke/regenerate work', async () => {
    const created = await keys(
      'create',
      '--user',
      'Cli@Example.com',
      '--mode',
      'live',
      '--scopes',
      'jobs:read,webhooks:read',
      '--name',
      'ci',
    );
    expect(created.code).toBe(0);
    const token = lastLine(created.stdout);
    expect(token).toMatch(TOKEN_FORMAT);
    expect(token.startsWith('sk_live_')).toBe(true);

    const stored = await tdb.db.apiKey.findFirstOrThrow({ where: { user: { email: 'cli@example.com' } } });
    expect(stored).toEqual(
      expect.objectContaining({
        mode: 'live',
        scopes: ['jobs:read', 'webhooks:read'],
        name: 'ci',
        revokedAt: null,
      }),
    );
    expect(JSON.stringify(stored)).not.toContain(token);

    const listed = await keys('list', '--user', 'cli@example.com');
    expect(listed.stdout).toContain(stored.id);
    expect(listed.stdout).toContain('active');
    expect(listed.stdout).not.toContain(token);

    const regenerated = await keys('regenerate', stored.id);
    expect(regenerated.code).toBe(0);
    const fresh = lastLine(regenerated.stdout);
    expect(fresh).toMatch(/^sk_live_/);
    expect(fresh).not.toBe(token);
    const all = await tdb.db.apiKey.findMany({ where: { userId: stored.userId }, orderBy: { id: 'asc' } });
    expect(all.map((k) => [k.name, k.revokedAt === null])).toEqual([
      ['ci', false],
      ['ci', true],
    ]);

    const revoked = await keys('revoke', all[1]!.id);
    expect(revoked.code).toBe(0);
    expect((await tdb.db.apiKey.findUniqueOrThrow({ where: { id: all[1]!.id } })).revokedAt).not.toBeNull();
  });

  it('stops a revoked or regenerated token at once in a running API that had cached it', async () => {
    const api = buildTestApi({ db: tdb.db, prefix: prefix.prefix });
    try {
      await until(async () => api.keyCache.subscribed);
      const created = await keys('create', '--user', 'cached@example.com', '--name', 'c');
      const first = lastLine(created.stdout);
      const keyId = (
        await tdb.db.apiKey.findFirstOrThrow({ where: { user: { email: 'cached@example.com' } } })
      ).id;
      const use = (token: string) => client(api.app, token).get('/jobs/status');
      expect((await use(first)).status).toBe(200);
      // The API now answers from its cache: a revocation that bypasses the tool goes unseen.
      await tdb.db.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
      expect((await use(first)).status).toBe(200);
      await tdb.db.apiKey.update({ where: { id: keyId }, data: { revokedAt: null } });

      const regenerated = await keys('regenerate', keyId);
      expect(regenerated.code).toBe(0);
      expect((await use(first)).status).toBe(401);
      const second = lastLine(regenerated.stdout);
      expect((await use(second)).status).toBe(200);
      expect((await use(second)).status).toBe(200);
      const secondId = (await tdb.db.apiKey.findFirstOrThrow({ where: { prefix: second.slice(0, 12) } })).id;
      expect((await keys('revoke', secondId)).code).toBe(0);
      expect((await use(second)).status).toBe(401);
    } finally {
      await api.close();
    }
  });

  it('revokes even when Redis is unreachable, and says the API may accept the key for 10 s more', async () => {
    const created = await keys('create', '--user', 'offline@example.com');
    const keyId = (
      await tdb.db.apiKey.findFirstOrThrow({ where: { user: { email: 'offline@example.com' } } })
    ).id;
    const res = await keysWith({ REDIS_URL: 'redis://127.0.0.1:1' }, 'revoke', keyId);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`revoked ${keyId}`);
    expect(res.stderr).toMatch(/warning: .* could not be told .* at most 10 s more/);
    expect((await tdb.db.apiKey.findUniqueOrThrow({ where: { id: keyId } })).revokedAt).not.toBeNull();
    expect(lastLine(created.stdout)).toMatch(TOKEN_FORMAT);
  });

  it('defaults to a test key with all four scopes', async () => {
    const created = await keys('create', '--user', 'default@example.com');
    expect(lastLine(created.stdout)).toMatch(/^sk_test_/);
    const stored = await tdb.db.apiKey.findFirstOrThrow({
      where: { user: { email: 'default@example.com' } },
    });
    expect(stored.scopes).toEqual(['jobs:read', 'jobs:write', 'webhooks:read', 'webhooks:write']);
  });

  it.each([
    [['create', '--user', 'x@example.com', '--scopes', 'jobs:admin'], 1, /scopes/],
    [['create', '--user', 'x@example.com', '--mode', 'prod'], 1, /mode/],
    [['create', '--user', 'not-an-email'], 1, /user/],
    [['revoke', 'key_01ZZZZZZZZZZZZZZZZZZZZZZZZ'], 1, /not found/],
    [['frobnicate'], 2, /usage/],
  ])('fails clearly for %j', async (args, code, message) => {
    const res = await keys(...args);
    expect(res.code).toBe(code);
    expect(res.stderr).toMatch(message);
  });
});
