import type { IncomingMessage, ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, describe, expect, test } from '@jest/globals';
import { mapLookup, startProxy, startServer } from '../../../../test/support/fetch-servers.ts';
import type { OutgoingCookie, OutgoingRequest } from '../request/outgoing.ts';
import { FetchError } from './errors.ts';
import { fetchPage } from './fetch-page.ts';
import { createProxyPicker } from './proxy-picker.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** One request as the target received it: raw header names and values, in order. */
interface Received {
  host: string;
  path: string;
  raw: [string, string][];
}

/** The values of header `name` (any case) exactly as they arrived, one per line received. */
function values(request: Received | undefined, name: string): string[] {
  if (!request) throw new Error('request missing');
  return request.raw.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
}

/** A site reached as http://a.test:<port> and http://b.test:<port> (two origins, one server). */
async function site(
  handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('ok'),
) {
  const received: Received[] = [];
  const server = await startServer((req, res) => {
    const raw: [string, string][] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2)
      raw.push([req.rawHeaders[i] ?? '', req.rawHeaders[i + 1] ?? '']);
    received.push({ host: req.headers.host ?? '', path: req.url ?? '', raw });
    handler(req, res);
  });
  closers.push(server.close);
  const a = `http://a.test:${server.port}`;
  const b = `http://b.test:${server.port}`;
  return { a, b, received };
}

const lookup = mapLookup({ 'a.test': '127.0.0.1', 'b.test': '127.0.0.1' });
const open = { allowPrivate: true, lookup, userAgent: 'ServiceBot/1.0' } as const;

const SECRETS = ['key-s3cret', 'tenant-s3cret', 'cookie-s3cret', 'wide-s3cret', 'pass-s3cret'];
const BASIC = `Basic ${Buffer.from('user:pass-s3cret').toString('base64')}`;

function jobRequest(authOrigin: string, over: Partial<OutgoingRequest> = {}): OutgoingRequest {
  const cookie = (c: Partial<OutgoingCookie>): OutgoingCookie => ({
    name: 'sid',
    value: 'cookie-s3cret',
    domain: 'a.test',
    hostOnly: true,
    path: '/',
    ...c,
  });
  return {
    headers: { 'X-Api-Key': 'key-s3cret', 'x-tenant': 'tenant-s3cret' },
    // `wide` matches b.test too by its domain: only the origin rule keeps it from there.
    cookies: [cookie({}), cookie({ name: 'wide', value: 'wide-s3cret', domain: 'test', hostOnly: false })],
    basicAuth: { username: 'user', password: 'pass-s3cret' },
    authOrigins: [authOrigin],
    userAgent: null,
    ...over,
  };
}

/** Checks that `request` carries every header, both cookies and the credential, once each. */
function expectAllSent(request: Received | undefined) {
  expect(values(request, 'x-api-key')).toEqual(['key-s3cret']);
  expect(values(request, 'x-tenant')).toEqual(['tenant-s3cret']);
  expect(values(request, 'cookie')).toEqual(['sid=cookie-s3cret; wide=wide-s3cret']);
  expect(values(request, 'authorization')).toEqual([BASIC]);
}

function expectNoneSent(request: Received | undefined) {
  for (const name of ['x-api-key', 'x-tenant', 'cookie', 'authorization'])
    expect(values(request, name)).toEqual([]);
  const raw = JSON.stringify(request?.raw);
  for (const secret of SECRETS) expect(raw).not.toContain(secret);
  expect(raw).not.toContain(BASIC.slice('Basic '.length));
}

describe('fetchPage with a job request', () => {
  test('sends each header, the matching cookies and basic auth to the page asked for', async () => {
    const { a, received } = await site();
    const page = await fetchPage(`${a}/page`, { ...open, request: jobRequest(a) });
    expect(page.body.toString()).toBe('ok');
    expect(received).toHaveLength(1);
    expectAllSent(received[0]);
  });

  test('sends them again after a redirect to the same origin', async () => {
    const { a, received } = await site((req, res) => {
      if (req.url === '/start') res.writeHead(302, { location: '/next' }).end();
      else res.end('arrived');
    });
    const page = await fetchPage(`${a}/start`, { ...open, request: jobRequest(a) });
    expect(page.url).toBe(`${a}/next`);
    expect(received.map((r) => r.path)).toEqual(['/start', '/next']);
    expectAllSent(received[0]);
    expectAllSent(received[1]);
  });

  test('sends none of them after a redirect to another origin, but keeps the job user agent', async () => {
    const { a, b, received } = await site((req, res) => {
      if (req.headers.host?.startsWith('a.test')) res.writeHead(302, { location: `${b}/landing` }).end();
      else res.end('elsewhere');
    });
    const request = jobRequest(a, { authOrigins: [a, b], userAgent: 'JobBot/2.0' });
    const page = await fetchPage(`${a}/start`, { ...open, request });
    expect(page.url).toBe(`${b}/landing`);
    expect(received.map((r) => r.host)).toEqual([a.slice(7), b.slice(7)]);
    expectAllSent(received[0]);
    expectNoneSent(received[1]);
    expect(values(received[1], 'user-agent')).toEqual(['JobBot/2.0']);
  });

  test('sends none of them to the original origin again once a redirect left it', async () => {
    const { a, b, received } = await site((req, res) => {
      if (req.url === '/start') res.writeHead(302, { location: `${b}/bounce` }).end();
      else if (req.url === '/bounce') res.writeHead(302, { location: `${a}/back` }).end();
      else res.end('back');
    });
    await fetchPage(`${a}/start`, { ...open, request: jobRequest(a) });
    expect(received.map((r) => r.path)).toEqual(['/start', '/bounce', '/back']);
    expectNoneSent(received[1]);
    expectNoneSent(received[2]);
  });

  test('does not send basic auth to an origin that is not one of the source origins', async () => {
    const { a, b, received } = await site();
    await fetchPage(`${b}/page`, { ...open, request: jobRequest(a) });
    expect(values(received[0], 'x-api-key')).toEqual(['key-s3cret']);
    expect(values(received[0], 'cookie')).toEqual(['wide=wide-s3cret']);
    expect(values(received[0], 'authorization')).toEqual([]);
  });

  test('the job user agent replaces the service one; without it the service one is sent', async () => {
    const { a, received } = await site();
    await fetchPage(a, { ...open, request: jobRequest(a, { userAgent: 'JobBot/2.0' }) });
    await fetchPage(a, { ...open, request: jobRequest(a) });
    expect(values(received[0], 'user-agent')).toEqual(['JobBot/2.0']);
    expect(values(received[1], 'user-agent')).toEqual(['ServiceBot/1.0']);
  });

  test('job headers replace the service defaults of the same name in any case, never framing headers', async () => {
    const { a, received } = await site();
    const headers = {
      'USER-AGENT': 'HeaderBot/3.0',
      Accept: 'application/json',
      'accept-ENCODING': 'identity',
      Host: 'evil.test',
      'Content-Length': '5',
      CONNECTION: 'upgrade',
      'transfer-encoding': 'chunked',
    };
    const page = await fetchPage(`${a}/`, { ...open, request: jobRequest(a, { headers }) });
    expect(page.body.toString()).toBe('ok');
    const [request] = received;
    expect(values(request, 'user-agent')).toEqual(['HeaderBot/3.0']);
    expect(values(request, 'accept')).toEqual(['application/json']);
    expect(values(request, 'accept-encoding')).toEqual(['identity']);
    expect(values(request, 'host')).toEqual([a.slice(7)]);
    expect(values(request, 'content-length')).toEqual([]);
    expect(values(request, 'transfer-encoding')).toEqual([]);
    expect(values(request, 'connection')).not.toContain('upgrade');
  });

  test('a retry after a 503 sends them again', async () => {
    let first = true;
    const { a, received } = await site((_req, res) => {
      if (first) res.writeHead(503).end();
      else res.end('recovered');
      first = false;
    });
    const page = await fetchPage(a, { ...open, request: jobRequest(a) });
    expect(page.body.toString()).toBe('recovered');
    expect(received).toHaveLength(2);
    expectAllSent(received[0]);
    expectAllSent(received[1]);
  });

  test('a failure carries no header value, cookie or credential in its error', async () => {
    const { a } = await site((req) => req.socket.destroy());
    const error = await fetchPage(a, { ...open, retries: 0, request: jobRequest(a) }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FetchError);
    expect((error as FetchError).code).toBe('NETWORK_ERROR');
    const shown = inspect(error, { depth: 20, showHidden: true });
    for (const secret of SECRETS) expect(shown).not.toContain(secret);
    expect(shown).not.toContain(BASIC.slice('Basic '.length));
  });

  test('through a proxy they reach the target and never the CONNECT request', async () => {
    const { a, received } = await site();
    const proxy = await startProxy('ok');
    closers.push(proxy.close);
    const tap = await connectTap(proxy.url);
    closers.push(tap.close);
    const picker = createProxyPicker([{ url: tap.url, country: null }], 'sticky', null, 'job_request_proxy');
    const page = await fetchPage(`${a}/page`, { ...open, proxy: picker, request: jobRequest(a) });
    expect(page.body.toString()).toBe('ok');
    expect(proxy.connects).toHaveLength(1);
    expectAllSent(received[0]);
    expect(tap.connectRequests).toHaveLength(1);
    const connect = tap.connectRequests[0] ?? '';
    expect(connect).toMatch(/^CONNECT 127\.0\.0\.1:\d+ HTTP\/1\.1\r\n/);
    for (const secret of [...SECRETS, BASIC.slice('Basic '.length), 'ServiceBot'])
      expect(connect).not.toContain(secret);
    expect(connect.toLowerCase()).not.toMatch(/x-api-key|x-tenant|cookie|^authorization/m);
  });
});

/**
 * A TCP relay in front of a proxy that records what each client sends before the tunnel opens
 * (its CONNECT request head); what then travels inside the tunnel is not recorded.
 */
async function connectTap(proxyUrl: string) {
  const { port } = new URL(proxyUrl);
  const connectRequests: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    let head = '';
    const record = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      connectRequests.push(head.slice(0, end + 4));
      client.off('data', record);
    };
    client.on('data', record);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connectRequests,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
