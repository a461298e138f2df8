import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { z } from 'zod';
import { ConfigError, commonEnv, parseConfig } from './index.ts';

const schema = z.object(commonEnv);

describe('parseConfig', () => {
  it('fills the documented defaults', () => {
    const config = parseConfig(schema, {});
    expect(config).toEqual(
      expect.objectContaining({
        REDIS_URL: 'redis://127.0.0.1:6379',
        ALLOW_PRIVATE_NETWORK_TARGETS: false,
        PROXY_URLS: [],
        LOG_LEVEL: 'info',
      }),
    );
  });

  it('parses PROXY_URLS with optional countries, upper-cased', () => {
    const { PROXY_URLS } = parseConfig(schema, {
      PROXY_URLS: 'http://p1:8080#country=de, http://user:pw@p2:3128 ,socks5://p3:1080#country=US',
    });
    expect(PROXY_URLS).toEqual([
      { url: 'http://p1:8080', country: 'DE' },
      { url: 'http://user:pw@p2:3128', country: null },
      { url: 'socks5://p3:1080', country: 'US' },
    ]);
  });

  it('names every bad variable in one error', () => {
    const attempt = () =>
      parseConfig(schema, {
        REDIS_URL: 'http://nope',
        ALLOW_PRIVATE_NETWORK_TARGETS: 'yes',
        PROXY_URLS: 'ftp://x#country=zzz',
        LOG_LEVEL: 'loud',
      });
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (err) {
      const text = (err as Error).message;
      for (const name of ['REDIS_URL', 'ALLOW_PRIVATE_NETWORK_TARGETS', 'PROXY_URLS', 'LOG_LEVEL'])
        expect(text).toContain(name);
    }
  });

  it('treats empty strings as unset', () => {
    expect(parseConfig(schema, { LOG_LEVEL: '' }).LOG_LEVEL).toBe('info');
  });
});

describe('API process start', () => {
  it('stops with a clear message and a non-zero exit on a bad setting', async () => {
    const main = new URL('../../../apps/api/src/main.ts', import.meta.url).pathname;
    const result = await promisify(execFile)(process.execPath, [main], {
      env: { ...process.env, PORT: 'eighty', API_RATE_LIMIT_PER_MINUTE: '0' },
    }).catch((err: { code: number; stderr: string }) => err);
    expect('code' in result && result.code).toBe(1);
    expect(result.stderr).toMatch(/Invalid configuration/);
    expect(result.stderr).toMatch(/PORT/);
    expect(result.stderr).toMatch(/API_RATE_LIMIT_PER_MINUTE/);
    expect(result.stderr).not.toMatch(/\bat /);
  });
});
