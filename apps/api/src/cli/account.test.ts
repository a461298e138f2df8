import { execFile } from 'node:child_process';
import { verifyPassword } from '@scrapejobs/domain';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts';

const CLI = new URL('./account.ts', import.meta.url).pathname;

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

function account(args: string[], stdin: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, DATABASE_URL: tdb.url } },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}

describe('account command-line tool', () => {
  it('creates the first account from a password on stdin, stored only as a scrypt hash', async () => {
    const res = await account(
      ['create', '--email', 'First@Example.com', '--password-stdin'],
      'first password 1\n',
    );
    expect(res).toEqual(expect.objectContaining({ code: 0 }));
    expect(res.stdout).toContain('created console account first@example.com');
    const user = await tdb.db.user.findUniqueOrThrow({ where: { email: 'first@example.com' } });
    expect(user.passwordHash).toMatch(/^scrypt\$/);
    expect(user.passwordHash).not.toContain('first password');
    expect(await verifyPassword('first password 1', user.passwordHash!)).toBe(true);
  });

  it('gives a password to a user that so far had only API keys', async () => {
    await tdb.db.user.create({ data: { id: 'usr_01KEYSONLY0000000000000000', email: 'keys@example.com' } });
    const res = await account(
      ['create', '--email', 'keys@example.com', '--password-stdin'],
      'keys password 12',
    );
    expect(res.code).toBe(0);
    const user = await tdb.db.user.findUniqueOrThrow({ where: { email: 'keys@example.com' } });
    expect(user.id).toBe('usr_01KEYSONLY0000000000000000');
    expect(await verifyPassword('keys password 12', user.passwordHash!)).toBe(true);
  });

  it('set-password replaces the password', async () => {
    await account(['create', '--email', 'reset@example.com', '--password-stdin'], 'old password 123');
    const res = await account(
      ['set-password', '--email', 'reset@example.com', '--password-stdin'],
      'new password 456\n',
    );
    expect(res.code).toBe(0);
    const user = await tdb.db.user.findUniqueOrThrow({ where: { email: 'reset@example.com' } });
    expect(await verifyPassword('new password 456', user.passwordHash!)).toBe(true);
    expect(await verifyPassword('old password 123', user.passwordHash!)).toBe(false);
  });

  it.each([
    [
      ['create', '--email', 'first@example.com', '--password-stdin'],
      'another password',
      1,
      /already has a password/,
    ],
    [['create', '--email', 'weak@example.com', '--password-stdin'], 'short', 1, /at least 12/],
    [['create', '--email', 'not-an-email', '--password-stdin'], 'long enough password', 1, /email/],
    [
      ['set-password', '--email', 'nobody@example.com', '--password-stdin'],
      'long enough password',
      1,
      /no account/,
    ],
    [['create', '--email', 'x@example.com'], '', 2, /usage/],
    [
      ['create', '--email', 'x@example.com', '--password', 'on-the-command-line'],
      '',
      2,
      /usage|Unknown option/,
    ],
  ])('fails clearly for %j', async (args, stdin, code, message) => {
    const res = await account(args, stdin);
    expect(res.code).toBe(code);
    expect(res.stderr).toMatch(message);
  });
});
