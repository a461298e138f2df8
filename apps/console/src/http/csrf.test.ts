import { csrfMatches } from './csrf.ts';
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
