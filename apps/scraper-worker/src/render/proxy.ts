import { randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { isIPv6, type LookupFunction, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { BlockedTargetError, classifyAddress, type OutboundGuard } from '@scrapejobs/outbound';
import type { AddressPolicy } from '../fetch/address.ts';
import { scraperGuard } from '../fetch/guard.ts';
import { parseUpstream, type Upstream, upstreamRequest } from './upstream.ts';

/** Why the proxy did not carry a request: policy, the target, or the upstream proxy. */
export type ProxyEventKind = 'blocked' | 'unreachable' | 'upstream';

export interface ProxyEvent {
  kind: ProxyEventKind;
  /** Host as Chromium sent it (lower case, IPv6 without brackets) and port. */
  host: string;
  port: number;
  detail: string;
}

/** Header on the proxy's own answers; its value is `<mark> <kind>`. */
export const PROXY_MARK_HEADER = 'x-render-proxy';

// Headers that describe one connection, never forwarded (RFC 9110 7.6.1), plus the proxy's own.
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

class ConnectFailure extends Error {
  readonly kind: ProxyEventKind;

  constructor(kind: ProxyEventKind, message: string) {
    super(message);
    this.kind = kind;
  }
}

type Verdict = { ok: true; address: string } | { ok: false; kind: ProxyEventKind; detail: string };

interface Listener {
  server: http.Server;
  port: number;
  lease: ProxyLease | null;
  sockets: Set<Socket>;
}

/**
 * One listener of the safety proxy lent to one browser context for one render: it knows the
 * render's upstream proxy and records what it refused, so the render can tell a blocked main
 * document from a blocked image.
 */
export class ProxyLease {
  readonly server: string;
  readonly events: ProxyEvent[] = [];
  upstream: Upstream | null = null;
  /**
   * Keeps this lease's direct plain-HTTP connections open between requests (and between renders of
   * the context it serves), one pool per checked address and port: a page's next request to the
   * same address takes a connection that is already there. An idle connection is closed after
   * 4 s, before the 5 s after which common servers (Node's among them) close theirs, so a request
   * is not sent on a connection its server is closing.
   */
  readonly agent = new http.Agent({ keepAlive: true, maxSockets: 6, timeout: 4_000 });
  readonly #tracked = new Set<Duplex>();
  readonly #onRelease: () => void;

  constructor(port: number, onRelease: () => void) {
    this.server = `http://127.0.0.1:${port}`;
    this.#onRelease = onRelease;
  }

  /** Chains this render's traffic to `proxyUrl`, or connects directly when null. */
  useUpstream(proxyUrl: string | null | undefined): void {
    this.upstream = proxyUrl ? parseUpstream(proxyUrl) : null;
  }

  record(event: ProxyEvent): void {
    this.events.push(event);
  }

  track(socket: Duplex): void {
    this.#tracked.add(socket);
    socket.once('close', () => this.#tracked.delete(socket));
  }

  /** Cuts every connection of the render (the agent's, in use or idle, too) and returns the listener to the pool. */
  release(): void {
    this.agent.destroy();
    for (const socket of this.#tracked) socket.destroy();
    this.#tracked.clear();
    this.#onRelease();
  }
}

/**
 * An in-process forward proxy that Chromium must use for every request. It resolves each
 * target through the outbound guard, which checks every address, and connects to the checked
 * address, so redirects, subresources, CONNECT tunnels and DNS rebinding are all covered.
 */
export class SafetyProxy {
  /** Random per process, so a target cannot forge the proxy's own answers. */
  readonly mark = randomBytes(12).toString('hex');
  readonly #guard: OutboundGuard;
  readonly #listeners = new Set<Listener>();
  readonly #idle: Listener[] = [];
  readonly #ports = new Set<number>();
  #sink: Listener | null = null;

  private constructor(policy: AddressPolicy, lookup: LookupFunction | undefined) {
    const allowed = (ip: string, port: number) => policy(ip, port) && !this.#isOwnListener(ip, port);
    this.#guard = scraperGuard(allowed, lookup);
  }

  static async start(policy: AddressPolicy, lookup?: LookupFunction): Promise<SafetyProxy> {
    const proxy = new SafetyProxy(policy, lookup);
    proxy.#sink = await proxy.#listen();
    return proxy;
  }

  /** A listener that is never lent and refuses everything: the browser-wide fallback proxy. */
  get sinkServer(): string {
    return `http://127.0.0.1:${this.#sink?.port ?? 0}`;
  }

  async acquire(): Promise<ProxyLease> {
    const listener = this.#idle.pop() ?? (await this.#listen());
    const lease = new ProxyLease(listener.port, () => {
      if (listener.lease !== lease) return;
      for (const socket of listener.sockets) socket.destroy();
      listener.lease = null;
      if (this.#listeners.has(listener)) this.#idle.push(listener);
    });
    listener.lease = lease;
    return lease;
  }

  async close(): Promise<void> {
    const closing = [...this.#listeners].map(async (listener) => {
      for (const socket of listener.sockets) socket.destroy();
      await new Promise<void>((resolve) => listener.server.close(() => resolve()));
    });
    this.#listeners.clear();
    this.#idle.length = 0;
    await Promise.all(closing);
  }

  async #listen(): Promise<Listener> {
    const server = http.createServer({ requestTimeout: 0 });
    const listener: Listener = { server, port: 0, lease: null, sockets: new Set() };
    server.on('connection', (socket: Socket) => {
      if (!listener.lease) return void socket.destroy();
      listener.sockets.add(socket);
      socket.once('close', () => listener.sockets.delete(socket));
    });
    server.on('request', (req, res) => void this.#forward(listener, req, res));
    server.on('connect', (req, socket, head) => void this.#tunnel(listener, req, socket, head));
    server.on('clientError', (_err, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    listener.port = typeof address === 'object' && address ? address.port : 0;
    this.#ports.add(listener.port);
    this.#listeners.add(listener);
    return listener;
  }

  /** Every address the host resolves to must pass; the first one is then used. */
  async #check(host: string, port: number): Promise<Verdict> {
    try {
      const { address } = await this.#guard.resolve(host, port);
      return { ok: true, address };
    } catch (err) {
      if (err instanceof BlockedTargetError) return { ok: false, kind: 'blocked', detail: err.message };
      return { ok: false, kind: 'unreachable', detail: `cannot resolve ${host}: ${(err as Error).message}` };
    }
  }

  // With private targets allowed, a page could still ask the proxy to connect to itself.
  #isOwnListener(address: string, port: number): boolean {
    return this.#ports.has(port) && classifyAddress(address) !== 'public';
  }

  async #forward(listener: Listener, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const lease = listener.lease;
    const target = parseAbsoluteHttp(req.url);
    if (!lease || !target) return void this.#answer(res, 400, 'unreachable', 'absolute http URL expected');
    const { host, port } = target;
    const verdict = await this.#check(host, port);
    if (listener.lease !== lease) return void res.destroy();
    if (!verdict.ok) {
      lease.record({ kind: verdict.kind, host, port, detail: verdict.detail });
      return void this.#answer(res, verdict.kind === 'blocked' ? 403 : 502, verdict.kind, verdict.detail);
    }
    // RFC 9112 3.2.2: with an absolute-form target the Host header is replaced by its authority.
    const request = {
      method: req.method,
      path: `${target.url.pathname}${target.url.search}`,
      headers: ['Host', target.url.host, ...endToEnd(req.rawHeaders, ['host'])],
    };
    let out: http.ClientRequest;
    if (lease.upstream) {
      let remote: Socket;
      try {
        remote = await this.#connect(lease, verdict.address, port);
      } catch (err) {
        const { kind, message } = err as ConnectFailure;
        lease.record({ kind, host, port, detail: message });
        return void this.#answer(res, 502, kind, message);
      }
      if (res.destroyed) return void remote.destroy();
      out = http.request({ ...request, createConnection: () => remote });
    } else {
      // Direct: to the checked address, on a connection of the lease's pool for that address.
      out = http.request({ ...request, agent: lease.agent, host: verdict.address, port, setHost: false });
    }
    out.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.rawHeaders));
      answer.pipe(res);
    });
    out.on('error', (err) => {
      lease.record({ kind: 'unreachable', host, port, detail: err.message });
      if (res.headersSent) res.destroy();
      else this.#answer(res, 502, 'unreachable', err.message);
    });
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  }

  async #tunnel(listener: Listener, req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const lease = listener.lease;
    const target = parseAuthority(req.url);
    if (!lease || !target) return void client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    const { host, port } = target;
    const refuse = (kind: ProxyEventKind, detail: string) => {
      lease.record({ kind, host, port, detail });
      client.end(kind === 'blocked' ? 'HTTP/1.1 403 Forbidden\r\n\r\n' : 'HTTP/1.1 502 Bad Gateway\r\n\r\n');
    };
    const verdict = await this.#check(host, port);
    if (listener.lease !== lease) return void client.destroy();
    if (!verdict.ok) return refuse(verdict.kind, verdict.detail);
    let remote: Socket;
    try {
      remote = await this.#connect(lease, verdict.address, port);
    } catch (err) {
      return refuse((err as ConnectFailure).kind, (err as ConnectFailure).message);
    }
    if (client.destroyed) return void remote.destroy();
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) remote.write(head);
    remote.on('error', () => client.destroy());
    remote.once('close', () => client.destroy());
    client.once('close', () => remote.destroy());
    remote.pipe(client).pipe(remote);
  }

  /**
   * A socket to the checked address: direct, or a tunnel through the lease's upstream proxy
   * that names the address, not the host, so the upstream cannot resolve it elsewhere (the
   * same pinning as the fetch path).
   */
  #connect(lease: ProxyLease, address: string, port: number): Promise<Socket> {
    const up = lease.upstream;
    return new Promise((resolve, reject) => {
      if (!up) {
        const socket = net.connect({ host: address, port, noDelay: true });
        lease.track(socket);
        socket.once('error', (err) => reject(new ConnectFailure('unreachable', err.message)));
        socket.once('connect', () => resolve(socket));
        return;
      }
      const authority = isIPv6(address) ? `[${address}]:${port}` : `${address}:${port}`;
      const request = upstreamRequest(up, 'CONNECT', authority, ['Host', authority]);
      request.on('socket', (socket) => lease.track(socket));
      request.once('error', (err) => reject(new ConnectFailure('upstream', err.message)));
      request.once('connect', (answer, socket, rest) => {
        if (answer.statusCode !== 200) {
          socket.destroy();
          return reject(
            new ConnectFailure('upstream', `the upstream proxy answered ${answer.statusCode} to CONNECT`),
          );
        }
        if (rest.length > 0) socket.unshift(rest);
        resolve(socket as Socket);
      });
      request.end();
    });
  }

  #answer(res: ServerResponse, status: number, kind: ProxyEventKind, detail: string): void {
    if (res.headersSent) return void res.destroy();
    res.writeHead(status, {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
      [PROXY_MARK_HEADER]: `${this.mark} ${kind}`,
    });
    res.end(detail);
  }
}

function endToEnd(raw: string[], drop: readonly string[] = []): string[] {
  const out: string[] = [];
  const named = new Set<string>(drop);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() === 'connection') {
      for (const token of (raw[i + 1] ?? '').split(',')) named.add(token.trim().toLowerCase());
    }
  }
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    out.push(name, raw[i + 1] ?? '');
  }
  return out;
}

function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

function parseAbsoluteHttp(raw: string | undefined): { url: URL; host: string; port: number } | null {
  if (!raw || !/^http:\/\//i.test(raw)) return null;
  try {
    const url = new URL(raw);
    return { url, host: bareHost(url.hostname), port: Number(url.port) || 80 };
  } catch {
    return null;
  }
}

/** `host:port` or `[v6]:port`, as in a CONNECT request line. */
export function parseAuthority(raw: string | undefined): { host: string; port: number } | null {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/@\s]+):(\d{1,5})$/.exec(raw ?? '');
  if (!match?.[1] || !match[2]) return null;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return null;
  return { host: bareHost(match[1]), port };
}
