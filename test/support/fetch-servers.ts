// Local servers for the fetch tests (apps/scraper-worker/src/fetch). Everything here listens on and
// connects to loopback only.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo, type LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';

export interface TestServer {
  /** Base URL, e.g. http://127.0.0.1:4321 */
  url: string;
  port: number;
  /** Request paths in arrival order. */
  requests: string[];
  /** Host headers in arrival order. */
  hosts: string[];
  /** TCP connections accepted so far, and those still open. */
  connections: { accepted: number; open: number };
  close(): Promise<void>;
}

export async function startServer(handler: http.RequestListener, host = '127.0.0.1'): Promise<TestServer> {
  const requests: string[] = [];
  const hosts: string[] = [];
  const connections = { accepted: 0, open: 0 };
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    hosts.push(req.headers.host ?? '');
    handler(req, res);
  });
  server.on('connection', (socket) => {
    connections.accepted++;
    connections.open++;
    socket.on('close', () => connections.open--);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    requests,
    hosts,
    connections,
    close: () => closeServer(server),
  };
}

export type ProxyMode = 'ok' | 'auth_required' | 'bad_gateway';

export interface TestProxy {
  url: string;
  /** CONNECT targets (host:port) in arrival order. */
  connects: string[];
  close(): Promise<void>;
}

/** A forward proxy that tunnels CONNECT to loopback targets only (hpagent tunnels http targets too). */
export async function startProxy(mode: ProxyMode = 'ok'): Promise<TestProxy> {
  const connects: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_req, res) => {
    res.writeHead(405).end();
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = req.url ?? '';
    connects.push(target);
    sockets.add(client);
    client.on('error', () => {});
    client.on('close', () => sockets.delete(client));
    if (mode === 'auth_required') {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n');
      return;
    }
    const { hostname, port } = new URL(`http://${target}`);
    const host = hostname.replace(/^\[(.*)\]$/, '$1');
    if (mode === 'bad_gateway' || !isLoopback(host)) {
      client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      return;
    }
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connects,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await closeServer(server);
    },
  };
}

export interface TestTlsServer {
  port: number;
  /** SNI names presented by clients, in arrival order. */
  servernames: string[];
  close(): Promise<void>;
}

/** A TLS server with a fresh self-signed certificate (so clients refuse it after the hello). */
export async function startTlsServer(): Promise<TestTlsServer> {
  const dir = mkdtempSync(join(tmpdir(), 'fetch-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=shop.test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const servernames: string[] = [];
    const server = tls.createServer({
      key: readFileSync(join(dir, 'key.pem')),
      cert: readFileSync(join(dir, 'cert.pem')),
      SNICallback: (name, callback) => {
        servernames.push(name);
        callback(null);
      },
    });
    server.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { port, servernames, close: () => closeServer(server) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A loopback URL on which nothing listens (connections are refused). */
export async function refusingUrl(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** A resolver that knows only the names given (each to one or more loopback addresses in turn). */
export function mapLookup(names: Record<string, string | string[]>, calls: string[] = []): LookupFunction {
  const served = new Map<string, number>();
  return (hostname, options, callback) => {
    calls.push(hostname);
    const entry = names[hostname];
    const list = entry === undefined ? [] : Array.isArray(entry) ? entry : [entry];
    const n = served.get(hostname) ?? 0;
    served.set(hostname, n + 1);
    const address = list[Math.min(n, list.length - 1)];
    if (address === undefined || !isLoopback(address)) {
      callback(
        Object.assign(new Error(`test resolver: unknown name ${hostname}`), { code: 'ENOTFOUND' }),
        '',
      );
      return;
    }
    const family = net.isIPv6(address) ? 6 : 4;
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function closeServer(server: http.Server | net.Server): Promise<void> {
  if (server instanceof http.Server) server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
