import type { LookupAddress } from 'node:dns';
import { BlockedTargetError, checkUrlTarget, OutboundGuard, type Resolve } from './index.ts';

// A test resolver: no name is ever sent to a real DNS server.
const zone: Record<string, LookupAddress[]> = {
  'public.test': [{ address: '93.184.215.14', family: 4 }],
  'loopback.test': [{ address: '127.0.0.1', family: 4 }],
  'mixed.test': [
    { address: '93.184.215.14', family: 4 },
    { address: '10.0.0.5', family: 4 },
  ],
  'imds.test': [{ address: 'fd00:ec2::254', family: 6 }],
};
const resolve: Resolve = async (hostname) => {
  const found = zone[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found;
};

function lookup(allowPrivate: boolean, hostname: string, all: boolean) {
  return new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((done) =>
    new OutboundGuard({ allowPrivate, resolve }).lookup(443)(hostname, { all }, (err, address, family) =>
      done({ err, address, family }),
    ),
  );
}

describe('OutboundGuard.lookup', () => {
  it('answers like dns.lookup for allowed addresses, single or all', async () => {
    expect(await lookup(false, 'public.test', false)).toEqual({
      err: null,
      address: '93.184.215.14',
      family: 4,
    });
    expect((await lookup(false, 'public.test', true)).address).toEqual(zone['public.test']);
  });

  it('refuses a name with any blocked address, with code BLOCKED_TARGET', async () => {
    for (const name of ['loopback.test', 'mixed.test', 'imds.test']) {
      const { err } = await lookup(false, name, true);
      expect(err).toBeInstanceOf(BlockedTargetError);
      expect(err?.code).toBe('BLOCKED_TARGET');
    }
  });

  it('lets private addresses through when allowed, but never metadata', async () => {
    expect((await lookup(true, 'loopback.test', false)).address).toBe('127.0.0.1');
    const { err } = await lookup(true, 'imds.test', false);
    expect((err as BlockedTargetError).kind).toBe('metadata');
  });

  it('passes resolver errors on', async () => {
    expect((await lookup(false, 'nowhere.test', false)).err?.code).toBe('ENOTFOUND');
  });
});

describe('OutboundGuard.checkHost', () => {
  const assertAllowedHost = (host: string, allowPrivate: boolean) =>
    new OutboundGuard({ allowPrivate }).checkHost(host, 80);

  it('checks IP literals and localhost names, which never reach a lookup function', () => {
    expect(() => assertAllowedHost('[::1]', false)).toThrow(BlockedTargetError);
    expect(() => assertAllowedHost('127.0.0.1', false)).toThrow(BlockedTargetError);
    expect(() => assertAllowedHost('api.localhost', false)).toThrow(BlockedTargetError);
    expect(() => assertAllowedHost('169.254.169.254', true)).toThrow(/metadata/);
    expect(() => assertAllowedHost('127.0.0.1', true)).not.toThrow();
    expect(() => assertAllowedHost('public.test', false)).not.toThrow();
  });
});

describe('checkUrlTarget', () => {
  it('accepts public targets', async () => {
    expect(await checkUrlTarget('https://public.test/hook', false, resolve)).toEqual({ ok: true });
    expect(await checkUrlTarget('https://93.184.215.14/hook', false, resolve)).toEqual({ ok: true });
  });

  it('refuses private, loopback and metadata IP literals (and localhost) by their class', async () => {
    for (const url of [
      'http://127.0.0.1:8080/',
      'http://[::1]/',
      'http://localhost/',
      'http://0x7f.1/', // the URL parser normalises this to 127.0.0.1
      'http://[::ffff:7f00:1]/',
      'http://10.0.0.5/',
    ]) {
      const check = await checkUrlTarget(url, false, resolve);
      expect([url, check]).toEqual([url, { ok: false, reason: 'must not target a private address' }]);
    }
    expect(await checkUrlTarget('http://169.254.169.254/latest', true, resolve)).toEqual({
      ok: false,
      reason: 'must not target a metadata address',
    });
  });

  it('refuses a name that resolves to a blocked address without saying what it resolves to', async () => {
    for (const [url, allowPrivate] of [
      ['https://loopback.test/', false],
      ['https://mixed.test/', false],
      ['https://imds.test/', true],
    ] as const) {
      const check = await checkUrlTarget(url, allowPrivate, resolve);
      expect([url, check]).toEqual([url, { ok: false, reason: 'must be a publicly reachable host' }]);
    }
  });

  it('allows loopback when private targets are allowed', async () => {
    expect(await checkUrlTarget('http://127.0.0.1:1/', true, resolve)).toEqual({ ok: true });
    expect(await checkUrlTarget('https://loopback.test/', true, resolve)).toEqual({ ok: true });
  });

  it('refuses a host that does not resolve, resolves to nothing or too slowly, with the same text', async () => {
    const refused = { ok: false, reason: 'must be a publicly reachable host' };
    expect(await checkUrlTarget('https://nowhere.test/', false, resolve)).toEqual(refused);
    expect(await checkUrlTarget('https://empty.test/', false, async () => [])).toEqual(refused);
    const never: Resolve = () => new Promise(() => {});
    expect(await checkUrlTarget('https://slow.test/', false, never, 20)).toEqual(refused);
  });
});
