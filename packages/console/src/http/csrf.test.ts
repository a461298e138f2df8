import { randomBytes } from 'node:crypto';
import { csrfMatches, FORM_TOKEN_SECONDS, FormTokens } from './csrf.ts';
import { newSecret } from './session.ts';

describe('CSRF synchronizer token', () => {
  const token = newSecret();

  it('accepts exactly the session token', () => {
    expect(csrfMatches(token, token)).toBe(true);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['another token', newSecret()],
    ['a prefix', token.slice(0, 20)],
    ['a longer string', `${token}x`],
    ['an array', [token, token]],
  ])('refuses %s', (_name, submitted) => {
    expect(csrfMatches(token, submitted)).toBe(false);
  });
});

describe('signed sign-in form token', () => {
  const key = randomBytes(32);
  const nonce = newSecret();
  let now = Date.UTC(2026, 10, 21, 10, 0, 0);
  const tokens = new FormTokens(key, () => now);

  it('is accepted for its nonce by any holder of the key, for an hour', () => {
    const token = tokens.issue(nonce);
    expect(token).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/);
    expect(tokens.check(nonce, token)).toBe('ok');
    const otherProcess = new FormTokens(Buffer.from(key), () => now + FORM_TOKEN_SECONDS * 1000);
    expect(otherProcess.check(nonce, token)).toBe('ok');
  });

  it('has expired after an hour, and is refused from too far in the future', () => {
    const token = tokens.issue(nonce);
    now += FORM_TOKEN_SECONDS * 1000 + 1000;
    expect(tokens.check(nonce, token)).toBe('expired');
    now -= 2 * (FORM_TOKEN_SECONDS * 1000 + 1000);
    expect(tokens.check(nonce, token)).toBe('expired');
  });

  it.each([
    ['another nonce', newSecret(), (t: string) => t],
    ['no nonce', undefined, (t: string) => t],
    ['a changed time', nonce, (t: string) => t.replace(/^\d/, (d) => String((Number(d) + 1) % 10))],
    ['a changed signature', nonce, (t: string) => t.replace(/\.(.)/, (_m, c) => `.${c === 'A' ? 'B' : 'A'}`)],
    ['another key', nonce, () => new FormTokens(randomBytes(32)).issue(nonce)],
    ['garbage', nonce, () => 'x.y'],
    ['an array', nonce, (t: string) => [t] as unknown as string],
  ])('is refused with %s', (_name, checkedNonce, alter) => {
    expect(tokens.check(checkedNonce, alter(tokens.issue(nonce)))).toBe('invalid');
  });

  it('needs a key of at least 32 bytes', () => {
    expect(() => new FormTokens(randomBytes(16))).toThrow(/32 bytes/);
  });
});
