// The safety proxy driven by raw HTTP clients (no browser); every target is on loopback.

import http, { type IncomingHttpHeaders } from 'node:http';
import net, { type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import {
  type ForwardProxy,
  type LocalServer,
  startForwardProxy,
  startServer,
} from '../../../../test/support/render-servers.ts';
import { addressPolicy as targetPolicy } from '../fetch/address.ts';
import { type ProxyLease, parseAuthority, SafetyProxy } from './proxy.ts';

describe('targetPolicy (pure)', () => {
  test.each(['169.254.169.254', 'fd00:ec2::254', '::ffff:169.254.169.254', '100.100.100.200'])(
    'metadata address %s is refused even with private targets allowed and a permissive hook',
    (ip) => {
      expect(targetPolicy(true)(ip, 80)).toBe(false);
      expect(targetPolicy(true, () => true)(ip, 80)).toBe(false);
    },
  );

  test.each(['127.0.0.1', '::1', '10.1.2.3', '192.168.0.10', '100.64.0.1', '0.0.0.0', '::ffff:127.0.0.1'])(
    'private address %s is refused by default and allowed with allowPrivate',
    (ip) => {
      expect(targetPolicy(false)(ip, 80)).toBe(false);
      expect(targetPolicy(true)(ip, 80)).toBe(true);
    },
  );

  test('public addresses are allowed; strings that are not addresses are refused', () => {
    expect(targetPolicy(false)('93.184.215.14', 443)).toBe(true);
    expect(targetPolicy(false)('2606:4700::1111', 443)).toBe(true);
    expect(targetPolicy(true)('not-an-ip', 80)).toBe(false);
  });

  test('the test hook sees the port', () => {
    const policy = targetPolicy(false, (_ip, port) => port === 8080);
    expect([policy('127.0.0.1', 8080), policy('127.0.0.1', 8081)]).toEqual([true, false]);
  });
});

test('parseAuthority reads CONNECT targets and rejects malformed ones', () => {
  expect(parseAuthority('Example.COM:443')).toEqual({ host: 'example.com', port: 443 });
  expect(parseAuthority('[::1]:8443')).toEqual({ host: '::1', port: 8443 });
  expect(parseAuthority('example.com')).toBeNull();
  expect(parseAuthority('a@b:80')).toBeNull();
  expect(parseAuthority('example.com:70000')).toBeNull();
});

describe('SafetyProxy', () => {
  let target: LocalServer;
  let echo: net.Server;
  let echoPort: number;
  let upstream: ForwardProxy;
  let seenHeaders: IncomingHttpHeaders[];
  const echoSockets = new Set<Socket>();
  let proxy: SafetyProxy;
  let lease: ProxyLease | null = null;

  beforeAll(async () => {
    seenHeaders = [];
    target = await startServer((req, res) => {
      seenHeaders.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/plain', connection: 'keep-alive', 'x-hop': 'drop me' });
      res.end(`hello ${req.url}`);
    });
    echo = net.createServer((socket) => {
      echoSockets.add(socket);
      socket.pipe(socket);
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', () => resolve()));
    echoPort = (echo.address() as net.AddressInfo).port;
    upstream = await startForwardProxy();
    // Loopback is allowed except for `target`'s port, which plays the forbidden network.
    proxy = await SafetyProxy.start(targetPolicy(true, (_ip, port) => port !== target.port));
  });

  afterEach(() => {
    lease?.release();
    lease = null;
  });

  afterAll(async () => {
    await proxy?.close();
    for (const s of echoSockets) s.destroy();
    await new Promise<void>((resolve) => echo.close(() => resolve()));
    await upstream?.close();
    await target?.close();
  });

  const proxyPort = (l: ProxyLease) => Number(new URL(l.server).port);

  /** Sends CONNECT to the lease's port; resolves with the status and the tunnel socket. */
  function connect(l: ProxyLease, authority: string): Promise<{ status: number; socket: Socket }> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: proxyPort(l), method: 'CONNECT', path: authority });
      req.once('connect', (res, socket) => resolve({ status: res.statusCode ?? 0, socket }));
      req.once('error', reject);
      req.end();
    });
  }

  function get(
    l: ProxyLease,
    url: string,
  ): Promise<{ status: number; body: string; headers: IncomingHttpHeaders }> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: proxyPort(l),
          path: url,
          agent: false,
          headers: { host: 'wrong.example', 'proxy-connection': 'keep-alive', 'x-keep': 'yes' },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
        },
      );
      req.once('error', reject);
      req.end();
    });
  }

  test('a CONNECT to an allowed address becomes a working tunnel', async () => {
    lease = await proxy.acquire();
    const { status, socket } = await connect(lease, `127.0.0.1:${echoPort}`);
    expect(status).toBe(200);
    socket.write('ping');
    const reply = await new Promise<string>((resolve) =>
      socket.once('data', (d: Buffer) => resolve(d.toString())),
    );
    expect(reply).toBe('ping');
    socket.destroy();
  });

  test('a CONNECT to a forbidden address is answered 403, recorded, and never connected', async () => {
    lease = await proxy.acquire();
    const before = target.connections;
    const { status, socket } = await connect(lease, `127.0.0.1:${target.port}`);
    socket.destroy();
    expect(status).toBe(403);
    expect(lease.events).toEqual([
      expect.objectContaining({ kind: 'blocked', host: '127.0.0.1', port: target.port }),
    ]);
    expect(target.connections).toBe(before);
  });

  test('a plain request is forwarded without hop-by-hop headers in either direction', async () => {
    lease = await proxy.acquire();
    const echoed = await startServer((req, res) => {
      seenHeaders.push(req.headers);
      res.writeHead(200, { connection: 'x-hop', 'x-hop': 'drop me', 'x-kept': 'yes' });
      res.end(`hello ${req.url}`);
    });
    try {
      const answer = await get(lease, `${echoed.origin}/page?q=1`);
      expect(answer.body).toBe('hello /page?q=1');
      expect(answer.headers['x-hop']).toBeUndefined();
      expect(answer.headers['x-kept']).toBe('yes');
      const sent = seenHeaders.at(-1);
      expect(sent?.host).toBe(`127.0.0.1:${echoed.port}`);
      expect(sent?.['x-keep']).toBe('yes');
      expect(sent?.['proxy-connection']).toBeUndefined();
    } finally {
      await echoed.close();
    }
  });

  test("a lease's plain requests to one address share a kept connection, cut when the lease is released", async () => {
    lease = await proxy.acquire();
    const sockets = new Set<Socket>();
    const site = await startServer((req, res) => {
      sockets.add(req.socket);
      res.end(`hello ${req.url}`);
    });
    try {
      const answers = [];
      for (const path of ['/a', '/b', '/c']) answers.push((await get(lease, `${site.origin}${path}`)).body);
      expect(answers).toEqual(['hello /a', 'hello /b', 'hello /c']);
      expect([site.connections, sockets.size]).toEqual([1, 1]);
      const [kept] = [...sockets];
      const closed = new Promise<void>((resolve) => kept!.once('close', () => resolve()));
      lease.release();
      lease = null;
      await closed;
    } finally {
      await site.close();
    }
  });

  test("a plain request to a forbidden address gets the proxy's marked 403", async () => {
    lease = await proxy.acquire();
    const before = target.requests.length;
    const answer = await get(lease, `${target.origin}/secret`);
    expect(answer.status).toBe(403);
    expect(answer.headers['x-render-proxy']).toBe(`${proxy.mark} blocked`);
    expect(target.requests.length).toBe(before);
  });

  test('the proxy refuses to connect to its own listeners, even with loopback allowed', async () => {
    lease = await proxy.acquire();
    const { status, socket } = await connect(lease, `127.0.0.1:${proxyPort(lease)}`);
    socket.destroy();
    expect(status).toBe(403);
  });

  test("a CONNECT is chained through the lease's upstream proxy with its credentials", async () => {
    lease = await proxy.acquire();
    lease.useUpstream(`http://u:secret@127.0.0.1:${upstream.port}`);
    const { status, socket } = await connect(lease, `127.0.0.1:${echoPort}`);
    expect(status).toBe(200);
    socket.write('via upstream');
    const reply = await new Promise<string>((resolve) =>
      socket.once('data', (d: Buffer) => resolve(d.toString())),
    );
    socket.destroy();
    expect(reply).toBe('via upstream');
    expect(upstream.requests.at(-1)).toBe(`CONNECT 127.0.0.1:${echoPort}`);
    expect(upstream.authorizations.at(-1)).toBe(`Basic ${Buffer.from('u:secret').toString('base64')}`);
  });

  test('through an upstream, names are resolved here and the upstream is asked for the address', async () => {
    const named = await SafetyProxy.start(targetPolicy(true), (_host, _options, callback) =>
      callback(null, [{ address: '127.0.0.1', family: 4 }]),
    );
    const echoed = await startServer((req, res) => {
      seenHeaders.push(req.headers);
      res.end(`hello ${req.url}`);
    });
    const l = await named.acquire();
    try {
      l.useUpstream(upstream.origin);
      const tunnel = await connect(l, `echo.test:${echoPort}`);
      tunnel.socket.destroy();
      expect(tunnel.status).toBe(200);
      expect(upstream.requests.at(-1)).toBe(`CONNECT 127.0.0.1:${echoPort}`);
      const answer = await get(l, `http://site.test:${echoed.port}/named`);
      expect(answer.body).toBe('hello /named');
      expect(upstream.requests.at(-1)).toBe(`CONNECT 127.0.0.1:${echoed.port}`);
      expect(seenHeaders.at(-1)?.host).toBe(`site.test:${echoed.port}`);
    } finally {
      l.release();
      await named.close();
      await echoed.close();
    }
  });

  test('an upstream that refuses the credentials (407) is recorded as an upstream failure', async () => {
    const refusing = http.createServer();
    refusing.on('connect', (_req, socket: Socket) =>
      socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n'),
    );
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', () => resolve()));
    lease = await proxy.acquire();
    lease.useUpstream(`http://wrong:creds@127.0.0.1:${(refusing.address() as net.AddressInfo).port}`);
    try {
      const { status, socket } = await connect(lease, `127.0.0.1:${echoPort}`);
      socket.destroy();
      expect(status).toBe(502);
      expect(lease.events).toEqual([
        expect.objectContaining({ kind: 'upstream', detail: 'the upstream proxy answered 407 to CONNECT' }),
      ]);
    } finally {
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
    }
  });

  test('with an upstream, a forbidden target is still refused before the upstream sees it', async () => {
    lease = await proxy.acquire();
    lease.useUpstream(upstream.origin);
    const before = upstream.requests.length;
    const { status, socket } = await connect(lease, `127.0.0.1:${target.port}`);
    socket.destroy();
    expect(status).toBe(403);
    expect(upstream.requests.length).toBe(before);
  });

  test('a released listener cuts its tunnels and refuses new connections', async () => {
    const first = await proxy.acquire();
    const { socket } = await connect(first, `127.0.0.1:${echoPort}`);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    first.release();
    await closed;
    const refused = await new Promise<boolean>((resolve) => {
      const probe = net.connect(proxyPort(first), '127.0.0.1');
      probe.once('close', () => resolve(true));
      probe.once('data', () => resolve(false));
      probe.write('GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    });
    expect(refused).toBe(true);
  });
});
