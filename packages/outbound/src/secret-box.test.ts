import { randomBytes } from 'node:crypto';
import { DEVELOPMENT_SECRET_KEY, SecretBox, SecretBoxError, secretKeyEnv } from './index.ts';
import { parseSecretKey } from './internal/secret-box.ts';

describe('SecretBox', () => {
  const key = randomBytes(32);

  it('seals so that the stored value does not contain the secret, and opens it again', () => {
    const box = new SecretBox(key);
    const sealed = box.seal('a-very-secret-value', 'wh_1');
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('secret');
    expect(box.seal('a-very-secret-value', 'wh_1')).not.toBe(sealed);
    expect(box.open(sealed, 'wh_1')).toBe('a-very-secret-value');
  });

  it('refuses a value moved to another row, tampered with, or sealed under another key', () => {
    const box = new SecretBox(key);
    const sealed = box.seal('a-very-secret-value', 'wh_1');
    expect(() => box.open(sealed, 'wh_2')).toThrow(SecretBoxError);
    const parts = sealed.split('.');
    parts[4] = Buffer.from('tampered-tampered').toString('base64url');
    expect(() => box.open(parts.join('.'), 'wh_1')).toThrow(SecretBoxError);
    const shortTag = sealed.split('.');
    shortTag[3] = shortTag[3]!.slice(0, 6);
    expect(() => box.open(shortTag.join('.'), 'wh_1')).toThrow(SecretBoxError);
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'wh_1')).toThrow(/not configured/);
  });

  it('opens values sealed with a previous key after rotation', () => {
    const sealed = new SecretBox(key).seal('rotated-secret-value', 'wh_1');
    const rotated = new SecretBox(randomBytes(32), [key]);
    expect(rotated.open(sealed, 'wh_1')).toBe('rotated-secret-value');
    expect(rotated.seal('x'.repeat(16), 'wh_1').split('.')[1]).not.toBe(sealed.split('.')[1]);
  });

  it('knows when it runs on the public development key', () => {
    expect(new SecretBox(DEVELOPMENT_SECRET_KEY).isDevelopmentKey).toBe(true);
    expect(new SecretBox(key).isDevelopmentKey).toBe(false);
  });
});

describe('parseSecretKey', () => {
  it('reads 32 bytes written as hex, base64 or base64url', () => {
    const key = randomBytes(32);
    expect(parseSecretKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretKey(key.toString('base64'))).toEqual(key);
    expect(parseSecretKey(key.toString('base64url'))).toEqual(key);
  });

  it('refuses other lengths and encodings', () => {
    expect(parseSecretKey(randomBytes(16).toString('hex'))).toBeNull();
    expect(parseSecretKey(randomBytes(31).toString('base64'))).toBeNull();
    expect(parseSecretKey('not a key at all')).toBeNull();
    const parsed = secretKeyEnv.safeParse('short');
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(/32 bytes/);
  });
});
