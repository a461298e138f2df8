import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo, type LookupFunction } from 'node:net';
import { BlockedTargetError, OutboundGuard, type Resolve, resolverFromLookup } from './index.ts';

// Loopback only: every server listens on 127.0.0.1, and names resolve through a test resolver
// that maps them to 127.0.0.1. Other addresses appear only as strings.
const zone: Record<string, string[]> = {
  'site.test': ['127.0.0.1'],
  'intranet.test': ['10.0.0.5'],
  'mixed.test': ['127.0.0.1', '169.254.169.254'],
  'empty.test': [],
};
const asked: string[] = [];
const resolve: Resolve = async (hostname) => {
  asked.push(hostname);
  const found = zone[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found.map((address): LookupAddress => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
};

beforeEach(() => {
  asked.length = 0;
});

async function failure(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  const outcome = await promise.then(
    () => new Error('it succeeded'),
    (e: unknown) => e as Error,
  );
  return outcome;
}

describe('BlockedTargetError', () => {
  it('says what is wrong with an IP literal: its class and range', () => {
    const cases: [string, string][] = [
      ['127.0.0.1', '127.0.0.1 is a private address (loopback)'],
      ['::1', '::1 is a private address (loopback)'],
      ['10.0.0.1', '10.0.0.1 is a private address'],
      ['100.64.0.1', '100.64.0.1 is a private address (CGNAT)'],
      ['169.254.169.254', '169.254.169.254 is a metadata address'],
    ];
    for (const [ip, message] of cases) expect(new BlockedTargetError(ip, ip).message).toBe(message);
    expect(new BlockedTargetError('169.254.1.1', '169.254.1.1', { linkLocalIsMetadata: true }).message).toBe(
      '169.254.1.1 is a metadata address (link-local)',
    );
  });

  it('names the class of what a name resolves to, never the address', () => {
    const error = new BlockedTargetError('intranet.test', '10.0.0.5');
    expect(error.message).toBe('intranet.test resolves to a private address');
    expect([error.code, error.name, error.kind, error.address]).toEqual([
      'BLOCKED_TARGET',
      'BlockedTargetError',
      'private',
      '10.0.0.5',
    ]);
  });

  it('says "not allowed" when only a caller rule refused a public address', () => {
    expect(new BlockedTargetError('8.8.8.8', '8.8.8.8').message).toBe('8.8.8.8 is not an allowed address');
    expect(new BlockedTargetError('site.test', '8.8.8.8').message).toBe(
      'site.test resolves to an address that is not allowed',
    );
  });
});

describe('OutboundGuard.allows with an isAllowedAddress hook', () => {
  it('lets the hook decide by address and port, but never for metadata or non-addresses', () => {
    const guard = new OutboundGuard({ allowPrivate: false, isAllowedAddress: (_ip, port) => port === 8080 });
    expect([guard.allows('127.0.0.1', 8080), guard.allows('127.0.0.1', 8081)]).toEqual([true, false]);
    expect(guard.allows('169.254.169.254', 8080)).toBe(false);
    expect(guard.allows('fd00:ec2::254', 8080)).toBe(false);
    expect(guard.allows('site.test', 8080)).toBe(false);
  });

  it('counts link-local as metadata under the stricter rules, whatever the hook says', () => {
    const guard = new OutboundGuard({
      allowPrivate: true,
      rules: { linkLocalIsMetadata: true },
      isAllowedAddress: () => true,
    });
    expect([guard.allows('169.254.1.1', 80), guard.allows('127.0.0.1', 80)]).toEqual([false, true]);
  });
});

describe('OutboundGuard.resolve', () => {
  const strict = new OutboundGuard({ allowPrivate: false, resolve });
  const open = new OutboundGuard({ allowPrivate: true, resolve });

  it('answers an allowed IP literal itself, without asking the resolver', async () => {
    expect(await open.resolve('[::1]', 80)).toEqual({ address: '::1', family: 6 });
    expect(await open.resolve('127.0.0.1', 80)).toEqual({ address: '127.0.0.1', family: 4 });
    expect(asked).toEqual([]);
  });

  it('answers the first address of a name when every address is allowed', async () => {
    expect(await open.resolve('site.test', 80)).toEqual({ address: '127.0.0.1', family: 4 });
  });

  it('refuses a name with any blocked address, naming the class only', async () => {
    const loopback = await failure(strict.resolve('site.test', 80));
    expect(loopback).toBeInstanceOf(BlockedTargetError);
    expect(loopback.message).toBe('site.test resolves to a private address');
    const metadata = await failure(open.resolve('mixed.test', 80));
    expect([metadata.code, (metadata as BlockedTargetError).kind]).toEqual(['BLOCKED_TARGET', 'metadata']);
  });

  it('refuses a blocked literal or localhost name before any resolver is asked', async () => {
    expect((await failure(strict.resolve('127.0.0.1', 80))).message).toBe(
      '127.0.0.1 is a private address (loopback)',
    );
    expect((await failure(strict.resolve('api.localhost', 80))).message).toBe(
      'api.localhost resolves to a private address',
    );
    expect(asked).toEqual([]);
  });

  it('fails a name without addresses with ENOTFOUND, and passes resolver errors on', async () => {
    expect((await failure(open.resolve('empty.test', 80))).code).toBe('ENOTFOUND');
    expect((await failure(open.resolve('nowhere.test', 80))).message).toBe(
      'getaddrinfo ENOTFOUND nowhere.test',
    );
  });

  it('tells onBlocked of each refusal with the error it throws', async () => {
    const seen: BlockedTargetError[] = [];
    const guard = new OutboundGuard({ allowPrivate: false, resolve, onBlocked: (e) => seen.push(e) });
    const error = await failure(guard.resolve('site.test', 80));
    expect(() => guard.checkHost('localhost', 80)).toThrow(BlockedTargetError);
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(error);
  });
});

describe('resolverFromLookup', () => {
  it('asks for every address and accepts a lookup that answers with one', async () => {
    const calls: unknown[] = [];
    const single: LookupFunction = (_host, options, callback) => {
      calls.push(options);
      callback(null, '::1', 6);
    };
    expect(await resolverFromLookup(single)('site.test', 0)).toEqual([{ address: '::1', family: 6 }]);
    expect(calls).toEqual([{ all: true, family: 0, order: 'verbatim' }]);
  });

  it('passes the lookup error on', async () => {
    const failing: LookupFunction = (_host, _options, callback) =>
      callback(Object.assign(new Error('no such name'), { code: 'ENOTFOUND' }), '');
    await expect(resolverFromLookup(failing)('nowhere.test', 0)).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('OutboundGuard.agents (loopback end to end)', () => {
  // One loopback server for every case; it counts connections and the bytes they carried.
  const requests: string[] = [];
  let connections = 0;
  let bytes = 0;
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    res.end('ok');
  });
  server.on('connection', (socket: net.Socket) => {
    connections++;
    socket.on('data', (data) => {
      bytes += data.length;
    });
  });
  let port = 0;

  beforeAll(() => listenOnLoopback(server).then((p) => (port = p)));
  afterAll(() => new Promise((done) => server.close(done)));
  beforeEach(() => {
    server.closeAllConnections();
    [connections, bytes, requests.length] = [0, 0, 0];
  });

  function get(url: string, agent: http.Agent): Promise<{ status?: number; error?: Error }> {
    return new Promise((done) => {
      http
        .get(url, { agent }, (res) => {
          res.resume();
          res.on('end', () => done({ status: res.statusCode ?? 0 }));
        })
        .on('error', (error) => done({ error }));
    });
  }

  it('refuses an IP literal, localhost and a name mapped to loopback without connecting', async () => {
    const blocked: string[] = [];
    const guard = new OutboundGuard({
      allowPrivate: false,
      resolve,
      onBlocked: (e) => blocked.push(e.message),
    });
    const { http: agent } = guard.agents();
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', 'localhost', 'site.test']) {
      const { error } = await get(`http://${host}:${port}/`, agent);
      expect(error).toBeInstanceOf(BlockedTargetError);
    }
    agent.destroy();
    expect(blocked).toEqual([
      '127.0.0.1 is a private address (loopback)',
      '::ffff:7f00:1 is a private address (loopback)',
      'localhost resolves to a private address',
      'site.test resolves to a private address',
    ]);
    expect(connections).toBe(0);
  });

  it('carries requests to allowed targets, by address or by name, on kept-alive sockets', async () => {
    const guard = new OutboundGuard({ allowPrivate: true, resolve });
    const { http: agent } = guard.agents({ keepAlive: true, maxSockets: 1 });
    expect(await get(`http://127.0.0.1:${port}/a`, agent)).toEqual({ status: 200 });
    expect(await get(`http://site.test:${port}/b`, agent)).toEqual({ status: 200 });
    expect(await get(`http://site.test:${port}/c`, agent)).toEqual({ status: 200 });
    agent.destroy();
    expect(requests).toEqual(['/a', '/b', '/c']);
    expect(connections).toBe(2);
  });

  it('passes the port to the hook, so one loopback port can be allowed and another not', async () => {
    const guard = new OutboundGuard({
      allowPrivate: false,
      resolve,
      isAllowedAddress: (_ip, p) => p === port,
    });
    const { http: agent } = guard.agents();
    expect(await get(`http://site.test:${port}/`, agent)).toEqual({ status: 200 });
    const { error } = await get(`http://site.test:${port + 1}/`, agent);
    agent.destroy();
    expect(error).toBeInstanceOf(BlockedTargetError);
  });

  // A hook that allows the first check and refuses the next stands for a path that skipped the
  // lookup: only the peer check on 'connect' is left to catch it.
  const onceAllowed = () => {
    let checks = 0;
    return () => ++checks === 1;
  };

  it('tears down a connection whose peer is refused before the request is sent', async () => {
    const guard = new OutboundGuard({ allowPrivate: false, resolve, isAllowedAddress: onceAllowed() });
    const { http: agent } = guard.agents();
    const { error } = await get(`http://site.test:${port}/secret`, agent);
    agent.destroy();
    await new Promise((done) => setTimeout(done, 50));
    expect(error).toBeInstanceOf(BlockedTargetError);
    expect(error?.message).toBe('site.test resolves to a private address');
    expect(connections).toBe(1);
    expect(requests).toEqual([]);
  });

  it('tears down a TLS connection whose peer is refused before the handshake sends a byte', async () => {
    const guard = new OutboundGuard({ allowPrivate: false, resolve, isAllowedAddress: onceAllowed() });
    const { https: agent } = guard.agents();
    const error = await new Promise<Error>((done) => {
      https
        .get(`https://site.test:${port}/`, { agent }, () => done(new Error('got a response')))
        .on('error', done);
    });
    agent.destroy();
    await new Promise((done) => setTimeout(done, 50));
    expect(error).toBeInstanceOf(BlockedTargetError);
    expect([connections, bytes]).toEqual([1, 0]);
  });
});

function listenOnLoopback(server: net.Server): Promise<number> {
  return new Promise((done) => {
    server.listen(0, '127.0.0.1', () => done((server.address() as AddressInfo).port));
  });
}
