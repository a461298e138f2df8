import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';
import { TOKEN_FORMAT } from '../http/auth.ts';

const run = promisify(execFile);
const CLI = new URL('../cli/keys.ts', import.meta.url).pathname;

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

async function keys(...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      env: { ...process.env, DATABASE_URL: tdb.url },
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
