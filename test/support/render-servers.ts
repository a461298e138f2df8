// Local servers for the render tests (apps/scraper-worker/src/render): every one listens on 127.0.0.1 only.
import { readdirSync, readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { expect } from '@jest/globals';

export interface LocalServer {
  port: number;
  origin: string;
  /** Request lines seen (`GET /path`), in order. */
  requests: string[];
  /** TCP connections accepted, whatever was sent on them. */
  connections: number;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** An HTTP server on 127.0.0.1 that records requests and drops held ones on close. */
export async function startServer(handler: Handler): Promise<LocalServer> {
  const sockets = new Set<Socket>();
  const server = http.createServer(handler);
  const state = { requests: [] as string[], connections: 0 };
  server.on('request', (req: IncomingMessage) => state.requests.push(`${req.method} ${req.url}`));
  server.on('connection', (socket: Socket) => {
    state.connections += 1;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // A CONNECT sent straight to the server counts as a connection, then goes nowhere.
  server.on('connect', (_req, socket: Socket) => socket.destroy());
  const port = await listen(server);
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    get connections() {
      return state.connections;
    },
    close: () => closeServer(server, sockets),
  };
}

export interface ForwardProxy extends LocalServer {
  /** Proxy-Authorization headers received, one per request or CONNECT. */
  authorizations: (string | undefined)[];
}

/** A minimal forward proxy (absolute-form HTTP and CONNECT) that counts what it carries. */
export async function startForwardProxy(): Promise<ForwardProxy> {
  const authorizations: (string | undefined)[] = [];
  const sockets = new Set<Socket>();
  const state = { requests: [] as string[], connections: 0 };
  const server = http.createServer((req, res) => {
    state.requests.push(`${req.method} ${req.url}`);
    authorizations.push(req.headers['proxy-authorization']);
    const target = new URL(req.url ?? '');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const out = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: target.pathname + target.search,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  server.on('connection', (socket: Socket) => {
    state.connections += 1;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    state.requests.push(`CONNECT ${req.url}`);
    authorizations.push(req.headers['proxy-authorization']);
    const [host = '', port = '0'] = (req.url ?? '').split(':');
    const remote = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      remote.write(head);
      remote.pipe(client).pipe(remote);
    });
    remote.on('error', () => client.destroy());
    client.on('error', () => remote.destroy());
  });
  const port = await listen(server);
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    authorizations,
    get requests() {
      return state.requests;
    },
    get connections() {
      return state.connections;
    },
    close: () => closeServer(server, sockets),
  };
}

/** A loopback port with nothing listening on it. */
export async function deadPort(): Promise<number> {
  const server = net.createServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Process ids of the Chromium browser processes started by this (test) process. */
export function chromiumChildren(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command name: state, ppid, …
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (ppid === process.pid && cmdline.includes('--proxy-server=')) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

export function html(res: ServerResponse, body: string, status = 200): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!doctype html><html><head><meta charset="utf-8"></head><body>${body}</body></html>`);
}

export function listItems(source: string): string[] {
  return [...source.matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1] ?? '');
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

async function closeServer(server: net.Server, sockets: Set<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** What a render rejects with, checked to be an `Expected` (RenderError); fails the test when it succeeds. */
export async function renderFailure<E>(
  promise: Promise<unknown>,
  Expected: abstract new (...args: never[]) => E,
): Promise<E> {
  const outcome = await promise.then(
    () => new Error('the render succeeded'),
    (e: unknown) => e,
  );
  expect(outcome).toBeInstanceOf(Expected);
  return outcome as E;
}
