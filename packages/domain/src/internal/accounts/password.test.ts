import { hashPassword, passwordProblem, verifyPassword } from './password.ts';

describe('password hashing', () => {
  it('stores scrypt with its cost, a random salt and the key, never the password', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    expect(hash).not.toContain('correct');
    expect(await hashPassword('correct horse battery staple')).not.toBe(hash);
  });

  it('verifies the right password and refuses a wrong one, a case change and a trailing space', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(await verifyPassword('correct horse battery staple', hash)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', hash)).toBe(false);
    expect(await verifyPassword('Correct horse battery staple', hash)).toBe(false);
    expect(await verifyPassword('correct horse battery staple ', hash)).toBe(false);
  });

  it('treats composed and decomposed accents as the same password (NFC)', async () => {
    const hash = await hashPassword('caf\u00e9-au-lait-42');
    expect(await verifyPassword('cafe\u0301-au-lait-42', hash)).toBe(true);
  });

  it('never matches a malformed or empty stored hash', async () => {
    expect(await verifyPassword('anything at all', '')).toBe(false);
    expect(await verifyPassword('anything at all', 'plain-text-password')).toBe(false);
    expect(await verifyPassword('anything at all', 'scrypt$32768$8$1$bad$')).toBe(false);
  });

  it('asks for at least 12 characters', () => {
    expect(passwordProblem('short')).toMatch(/at least 12/);
    expect(passwordProblem('x'.repeat(2000))).toMatch(/at most/);
    expect(passwordProblem('twelve chars')).toBeNull();
  });
});
