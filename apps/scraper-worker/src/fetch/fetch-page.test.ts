import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LookupFunction } from 'node:net';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { afterEach, describe, expect, test } from '@jest/globals';
import {
  mapLookup,
  refusingUrl,
  startServer,
  startTlsServer,
  type TestServer,
} from '../../../../test/support/fetch-servers.ts';
import { addressPolicy } from './address.ts';
import { ConnectionPool } from './connections.ts';
import { FetchError } from './errors.ts';
import { fetchPage, fetchPageWithPolicy } from './fetch-page.ts';

const MiB = 1024 * 1024;
const servers: TestServer[] = [];
const pools: ConnectionPool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) pool.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, host?: string) {
  const server = await startServer(handler, host);
  servers.push(server);
  return server;
}

function pool(): ConnectionPool {
  const made = new ConnectionPool();
  pools.push(made);
  return made;
}

const until = async (done: () => boolean) => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
};

/** Answers each request with the next status in `statuses`, then 200. */
function statusSequence(statuses: number[], headers: Record<string, string> = {}) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    const status = statuses.shift() ?? 200;
    res
      .writeHead(status, status === 200 ? { 'content-type': 'text/plain' } : headers)
      .end(`status ${status}`);
  };
}

async function failure(promise: Promise<unknown>): Promise<FetchError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof FetchError)) throw new Error(`expected a FetchError, got ${String(error)}`);
  return error;
}

// Lets the redirect-hop checks run without any non-loopback address: 127.0.0.2 plays a public
// site, everything else follows the production policy with private targets not allowed.
const PLAYS_PUBLIC = '127.0.0.2';
const testPolicy = (ip: string) => ip === PLAYS_PUBLIC || addressPolicy(false)(ip);

const open = { allowPrivate: true } as const;

describe('fetchPage', () => {
  test('returns status, headers, content type, final URL and body of a page', async () => {
    const site = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'x-test': 'yes' }).end('<p>hello</p>');
    });
    const page = await fetchPage(`${site.url}/page?q=1`, open);
    expect(page.status).toBe(200);
    expect(page.url).toBe(`${site.url}/page?q=1`);
    expect(page.contentType).toBe('text/html; charset=utf-8');
    expect(page.headers['x-test']).toBe('yes');
    expect(page.body.toString('utf8')).toBe('<p>hello</p>');
  });

  test('sends the given user agent', async () => {
    let agent: string | undefined;
    const site = await serve((req, res) => {
      agent = req.headers['user-agent'];
      res.end('ok');
    });
    await fetchPage(site.url, { ...open, userAgent: 'TestBot/2.0' });
    expect(agent).toBe('TestBot/2.0');
  });

  test('returns a non-UTF-8 body as the exact bytes received', async () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0xff, 0x00, 0x80]);
    const site = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' }).end(latin1);
    });
    const page = await fetchPage(site.url, open);
    expect(page.body.equals(latin1)).toBe(true);
  });

  test('decodes a gzip-encoded body', async () => {
    const site = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('compressed page'));
    });
    const page = await fetchPage(site.url, open);
    expect(page.body.toString()).toBe('compressed page');
  });

  test('decodes deflate (with and without its zlib header), br, zstd and codings applied in turn', async () => {
    const text = 'encoded page';
    const cases: [string, Buffer][] = [
      ['deflate', deflateSync(text)],
      ['deflate', deflateRawSync(text)],
      ['br', brotliCompressSync(text)],
      ['zstd', zstdCompressSync(text)],
      ['x-gzip', gzipSync(text)],
      ['gzip, br', brotliCompressSync(gzipSync(text))],
      ['identity', Buffer.from(text)],
    ];
    for (const [encoding, body] of cases) {
      const site = await serve((_req, res) => res.writeHead(200, { 'content-encoding': encoding }).end(body));
      expect([encoding, (await fetchPage(site.url, open)).body.toString()]).toEqual([encoding, text]);
    }
  });

  test('keeps a body in a coding it does not know as sent, and an empty encoded body empty', async () => {
    const sent = Buffer.from([1, 2, 3]);
    const odd = await serve((_req, res) => res.writeHead(200, { 'content-encoding': 'compress' }).end(sent));
    expect((await fetchPage(odd.url, open)).body.equals(sent)).toBe(true);
    const empty = await serve((_req, res) => res.writeHead(200, { 'content-encoding': 'gzip' }).end());
    expect((await fetchPage(empty.url, open)).body.length).toBe(0);
  });

  test('fails a 404 at once with a non-retryable HTTP_ERROR', async () => {
    const site = await serve(statusSequence([404, 404, 404]));
    const error = await failure(fetchPage(`${site.url}/missing`, open));
    expect([error.code, error.status, error.retryable, error.url]).toEqual([
      'HTTP_ERROR',
      404,
      false,
      `${site.url}/missing`,
    ]);
    expect(site.requests).toHaveLength(1);
  });

  test('retries a 500 twice and returns the page that follows', async () => {
    const site = await serve(statusSequence([500, 503]));
    const page = await fetchPage(site.url, open);
    expect(page.status).toBe(200);
    expect(page.body.toString()).toBe('status 200');
    expect(site.requests).toHaveLength(3);
  });

  test('gives up on a lasting 5xx after the retries with a retryable HTTP_ERROR', async () => {
    const site = await serve(statusSequence([502, 502, 502, 502]));
    const error = await failure(fetchPage(site.url, { ...open, retries: 2 }));
    expect([error.code, error.status, error.retryable]).toEqual(['HTTP_ERROR', 502, true]);
    expect(site.requests).toHaveLength(3);
  });

  test('waits for the Retry-After seconds of a 429 before retrying', async () => {
    const arrivals: number[] = [];
    const site = await serve((req, res) => {
      arrivals.push(Date.now());
      statusSequenceOnce(req, res, arrivals.length === 1 ? 429 : 200);
    });
    const page = await fetchPage(site.url, open);
    expect(page.status).toBe(200);
    const waited = (arrivals[1] ?? 0) - (arrivals[0] ?? 0);
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(waited).toBeLessThan(2000);
  });

  test('calls beforeAttempt before every request, retries and redirect hops included', async () => {
    let calls = 0;
    const requestsSeenAtCall: number[] = [];
    const site = await serve((req, res) => {
      if (req.url === '/start') res.writeHead(302, { location: '/flaky' }).end();
      else if (site.requests.filter((p) => p === '/flaky').length === 1) res.writeHead(500).end();
      else res.end('done');
    });
    await fetchPage(`${site.url}/start`, {
      ...open,
      beforeAttempt: async () => {
        calls++;
        requestsSeenAtCall.push(site.requests.length);
        return undefined;
      },
    });
    expect(calls).toBe(3);
    expect(requestsSeenAtCall).toEqual([0, 1, 2]);
  });

  test("tells beforeAttempt's caller each request's target and answer: status, Retry-After, or none", async () => {
    const site = await serve((req, res) => {
      if (req.url === '/start') res.writeHead(302, { location: '/busy' }).end();
      else if (site.requests.filter((p) => p === '/busy').length === 1)
        res.writeHead(429, { 'retry-after': '3' }).end();
      else res.end('done');
    });
    const seen: unknown[] = [];
    const page = await fetchPage(`${site.url}/start`, {
      ...open,
      throttleRetries: 5,
      beforeAttempt: async (target) => (answer) => seen.push([target.pathname, answer]),
    });
    expect(page.body.toString()).toBe('done');
    expect(seen).toEqual([
      ['/start', { status: 302 }],
      ['/busy', { status: 429, retryAfter: '3' }],
      ['/busy', { status: 200 }],
    ]);
    const refused = await refusingUrl();
    const failed: unknown[] = [];
    await failure(
      fetchPage(refused, { ...open, retries: 0, beforeAttempt: async () => (a) => failed.push(a) }),
    );
    expect(failed).toEqual([{ status: null }]);
  });

  test("with throttleRetries, retries a 429 or 503 at once (the pause is the caller's) that many times, then HTTP_ERROR", async () => {
    const site = await serve(statusSequence([429, 503, 429, 503], { 'retry-after': '30' }));
    const started = Date.now();
    const error = await failure(fetchPage(site.url, { ...open, throttleRetries: 3 }));
    expect([error.code, error.status]).toEqual(['HTTP_ERROR', 503]);
    expect(site.requests).toHaveLength(4);
    // Retry-After is the host's pause, waited for before the next attempt, not slept here.
    expect(Date.now() - started).toBeLessThan(30_000);
    const again = await serve(statusSequence([503, 429]));
    expect((await fetchPage(again.url, { ...open, throttleRetries: 2 })).status).toBe(200);
    // Other 5xx are retried as before.
    const flaky = await serve(statusSequence([500, 502, 500]));
    expect([(await failure(fetchPage(flaky.url, { ...open, throttleRetries: 5 }))).status]).toEqual([500]);
  });

  test('gives back what beforeAttempt resolves after the fetch was aborted: no place stays taken', async () => {
    const site = await serve((_req, res) => res.end('ok'));
    const controller = new AbortController();
    const told: unknown[] = [];
    const slow = () =>
      new Promise<(answer: unknown) => void>((resolve) =>
        setTimeout(() => resolve((answer) => told.push(answer)), 200),
      );
    setTimeout(() => controller.abort(new Error('stopped')), 20);
    await expect(
      fetchPage(site.url, { ...open, signal: controller.signal, beforeAttempt: slow }),
    ).rejects.toThrow('stopped');
    await until(() => told.length > 0);
    expect(told).toEqual([{ status: null }]);
    expect(site.requests).toHaveLength(0);
  });

  test('fails with TIMEOUT when no answer comes in time, without retrying', async () => {
    const site = await serve(() => {
      // never answers
    });
    const started = Date.now();
    const error = await failure(fetchPage(site.url, { ...open, timeoutMs: 300 }));
    expect(error.code).toBe('TIMEOUT');
    expect(Date.now() - started).toBeLessThan(1500);
    expect(site.requests).toHaveLength(1);
  });

  test('counts the body in the timeout: a body that stalls fails with TIMEOUT', async () => {
    const site = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part, then silence');
    });
    const error = await failure(fetchPage(site.url, { ...open, timeoutMs: 300 }));
    expect(error.code).toBe('TIMEOUT');
  });

  test('stops reading a streamed body over maxBytes and fails with HTTP_ERROR', async () => {
    const site = await serve((_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < 10; i++) res.write(Buffer.alloc(100, 'a'));
      res.end();
    });
    const error = await failure(fetchPage(site.url, { ...open, maxBytes: 500 }));
    expect([error.code, error.retryable, error.message]).toEqual([
      'HTTP_ERROR',
      false,
      'response body exceeds 500 bytes',
    ]);
  });

  test('refuses a body whose Content-Length is over the cap before reading it', async () => {
    let bytesWritten = 0;
    const site = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': String(20 * MiB) });
      bytesWritten += 1024;
      res.write(Buffer.alloc(1024));
    });
    const started = Date.now();
    const error = await failure(fetchPage(site.url, open));
    expect(error.code).toBe('HTTP_ERROR');
    expect(error.message).toBe(`response body exceeds ${10 * MiB} bytes`);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(bytesWritten).toBe(1024);
  });

  test('accepts a body of exactly 10 MiB and refuses one byte more, streamed without length', async () => {
    const site = await serve((req, res) => {
      const total = 10 * MiB + (req.url === '/over' ? 1 : 0);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      const pump = () => {
        while (sent < total) {
          const piece = chunk.subarray(0, Math.min(chunk.length, total - sent));
          sent += piece.length;
          if (!res.write(piece)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const page = await fetchPage(`${site.url}/exact`, open);
    expect(page.body.length).toBe(10 * MiB);
    const error = await failure(fetchPage(`${site.url}/over`, open));
    expect([error.code, error.message]).toEqual(['HTTP_ERROR', `response body exceeds ${10 * MiB} bytes`]);
  });

  test('caps the decoded size, so a small gzip bomb is refused', async () => {
    const bomb = gzipSync(Buffer.alloc(2 * MiB));
    const site = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(bomb.length) }).end(bomb);
    });
    expect(bomb.length).toBeLessThan(MiB);
    const error = await failure(fetchPage(site.url, { ...open, maxBytes: MiB }));
    expect([error.code, error.message]).toEqual(['HTTP_ERROR', `response body exceeds ${MiB} bytes`]);
    const brotliBomb = brotliCompressSync(Buffer.alloc(2 * MiB));
    const brotliSite = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'br' }).end(brotliBomb);
    });
    expect((await failure(fetchPage(brotliSite.url, { ...open, maxBytes: MiB }))).code).toBe('HTTP_ERROR');
  });

  test('follows a chain of 5 redirects and reports the final URL', async () => {
    const site = await serve(redirectChain(5));
    const page = await fetchPage(`${site.url}/hop/0`, open);
    expect(page.url).toBe(`${site.url}/final`);
    expect(page.body.toString()).toBe('arrived');
    expect(site.requests).toEqual(['/hop/0', '/hop/1', '/hop/2', '/hop/3', '/hop/4', '/final']);
  });

  test('fails a 6th redirect with a non-retryable HTTP_ERROR', async () => {
    const site = await serve(redirectChain(6));
    const error = await failure(fetchPage(`${site.url}/hop/0`, open));
    expect([error.code, error.retryable, error.message]).toEqual([
      'HTTP_ERROR',
      false,
      'more than 5 redirects',
    ]);
    expect(site.requests).toHaveLength(6);
  });

  test('resolves a relative Location against the current URL', async () => {
    const site = await serve((req, res) => {
      if (req.url === '/a/b') res.writeHead(301, { location: '../c?x=1' }).end();
      else res.end(req.url);
    });
    const page = await fetchPage(`${site.url}/a/b`, open);
    expect(page.url).toBe(`${site.url}/c?x=1`);
  });

  test('abort during a slow response rejects within a second with the abort reason', async () => {
    const site = await serve((_req, res) => {
      res.writeHead(200);
      res.write('slow');
    });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 200);
    const outcome = await fetchPage(site.url, { ...open, signal: controller.signal }).catch(
      (e: unknown) => e,
    );
    expect(outcome).toBeInstanceOf(DOMException);
    expect((outcome as DOMException).name).toBe('AbortError');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  test('abort during a Retry-After wait rejects at once', async () => {
    const site = await serve(statusSequence([503], { 'retry-after': '30' }));
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error('job paused')), 200);
    await expect(fetchPage(site.url, { ...open, signal: controller.signal })).rejects.toThrow('job paused');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(site.requests).toHaveLength(1);
  });

  test('abort while beforeAttempt waits rejects without sending anything', async () => {
    const site = await serve((_req, res) => res.end('ok'));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('deleted')), 100);
    const rateLimiter = () => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 1000));
    await expect(
      fetchPage(site.url, { ...open, signal: controller.signal, beforeAttempt: rateLimiter }),
    ).rejects.toThrow('deleted');
    expect(site.requests).toHaveLength(0);
  });

  test('retries a connection reset and returns the page that follows', async () => {
    let first = true;
    const site = await serve((req, res) => {
      if (first) {
        first = false;
        req.socket.destroy();
        return;
      }
      res.end('recovered');
    });
    const page = await fetchPage(site.url, open);
    expect(page.body.toString()).toBe('recovered');
    expect(site.requests).toHaveLength(2);
  });

  test('fails a refused connection with a retryable NETWORK_ERROR after the retries', async () => {
    const url = await refusingUrl();
    let attempts = 0;
    const error = await failure(
      fetchPage(url, {
        ...open,
        retries: 1,
        beforeAttempt: async () => {
          attempts++;
          return undefined;
        },
      }),
    );
    expect([error.code, error.retryable]).toEqual(['NETWORK_ERROR', true]);
    expect(attempts).toBe(2);
  });

  test('fails an unknown host name at once with a non-retryable NETWORK_ERROR', async () => {
    let attempts = 0;
    const error = await failure(
      fetchPage('http://nowhere.test/', {
        ...open,
        lookup: mapLookup({}),
        beforeAttempt: async () => {
          attempts++;
          return undefined;
        },
      }),
    );
    expect([error.code, error.retryable, attempts]).toEqual(['NETWORK_ERROR', false, 1]);
  });
  test('fails an untrusted https certificate at once with a non-retryable NETWORK_ERROR', async () => {
    const target = await startTlsServer();
    try {
      const lookup = mapLookup({ 'shop.test': '127.0.0.1' });
      const error = await failure(fetchPage(`https://shop.test:${target.port}/`, { ...open, lookup }));
      expect([error.code, error.retryable]).toEqual(['NETWORK_ERROR', false]);
      expect(target.servernames).toEqual(['shop.test']);
    } finally {
      await target.close();
    }
  });
});

describe('fetchPage outbound safety (private targets not allowed)', () => {
  const closed = { allowPrivate: false } as const;

  test('refuses 127.0.0.1 without connecting', async () => {
    const site = await serve((_req, res) => res.end('secret'));
    const error = await failure(fetchPage(site.url, closed));
    expect([error.code, error.retryable]).toEqual(['BLOCKED_TARGET', false]);
    expect(site.requests).toHaveLength(0);
  });

  test('refuses localhost', async () => {
    const site = await serve((_req, res) => res.end('secret'));
    const error = await failure(fetchPage(`http://localhost:${site.port}/`, closed));
    expect(error.code).toBe('BLOCKED_TARGET');
    expect(site.requests).toHaveLength(0);
  });

  test('refuses a public-looking name that resolves to loopback', async () => {
    const site = await serve((_req, res) => res.end('secret'));
    const error = await failure(
      fetchPage(`http://public.test:${site.port}/`, {
        ...closed,
        lookup: mapLookup({ 'public.test': '127.0.0.1' }),
      }),
    );
    expect(error.code).toBe('BLOCKED_TARGET');
    expect(error.message).not.toContain('127.0.0.1');
    expect(site.requests).toHaveLength(0);
  });

  test('refuses a name when any of its addresses is refused', async () => {
    const site = await serve((_req, res) => res.end('ok'), PLAYS_PUBLIC);
    const lookup: LookupFunction = (_host, _options, callback) =>
      callback(null, [
        { address: PLAYS_PUBLIC, family: 4 },
        { address: '127.0.0.1', family: 4 },
      ]);
    const error = await failure(
      fetchPageWithPolicy(`http://mixed.test:${site.port}/`, { ...closed, lookup }, testPolicy),
    );
    expect(error.code).toBe('BLOCKED_TARGET');
    expect(site.requests).toHaveLength(0);
  });

  test('checks every redirect hop: an allowed site redirecting to loopback is refused', async () => {
    const inside = await serve((_req, res) => res.end('secret'));
    const outside = await serve((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${inside.port}/admin` }).end();
    }, PLAYS_PUBLIC);
    const error = await failure(fetchPageWithPolicy(`${outside.url}/`, closed, testPolicy));
    expect([error.code, error.url]).toEqual(['BLOCKED_TARGET', `http://127.0.0.1:${inside.port}/admin`]);
    expect(outside.requests).toEqual(['/']);
    expect(inside.requests).toHaveLength(0);
  });

  test('re-resolves on every hop, so a name rebinding to loopback is refused', async () => {
    const site = await serve((req, res) => {
      if (req.url === '/') res.writeHead(302, { location: '/again' }).end();
      else res.end('secret');
    }, PLAYS_PUBLIC);
    const calls: string[] = [];
    const lookup = mapLookup({ 'rebind.test': [PLAYS_PUBLIC, '127.0.0.1'] }, calls);
    const error = await failure(
      fetchPageWithPolicy(`http://rebind.test:${site.port}/`, { ...closed, lookup }, testPolicy),
    );
    expect(error.code).toBe('BLOCKED_TARGET');
    expect(calls).toEqual(['rebind.test', 'rebind.test']);
    expect(site.requests).toEqual(['/']);
  });

  test('the test policy lets the stand-in public address through', async () => {
    const site = await serve((_req, res) => res.end('public page'), PLAYS_PUBLIC);
    const page = await fetchPageWithPolicy(`${site.url}/`, closed, testPolicy);
    expect(page.body.toString()).toBe('public page');
  });

  test('refuses a non-http scheme, also as a redirect target', async () => {
    expect((await failure(fetchPage('file:///etc/passwd', open))).code).toBe('BLOCKED_TARGET');
    const site = await serve((_req, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end());
    expect((await failure(fetchPage(site.url, open))).code).toBe('BLOCKED_TARGET');
  });
});

describe('a run’s kept-alive connections', () => {
  test('pages fetched one after another share one connection; without a pool each opens its own', async () => {
    const site = await serve((req, res) => res.end(`page ${req.url}`));
    const connections = pool();
    for (let i = 1; i <= 5; i++) {
      const page = await fetchPage(`${site.url}/${i}`, { ...open, connections });
      expect(page.body.toString()).toBe(`page /${i}`);
    }
    expect(site.connections.accepted).toBe(1);
    for (let i = 1; i <= 3; i++) await fetchPage(`${site.url}/${i}`, open);
    expect(site.connections.accepted).toBe(4);
  });

  test('a 304 and short error pages keep the connection; a long error page is cut', async () => {
    const site = await serve((req, res) => {
      if (req.url === '/same') res.writeHead(304).end();
      else if (req.url === '/gone') res.writeHead(404, { 'content-type': 'text/html' }).end('not here');
      else if (req.url === '/huge') res.writeHead(500).end('x'.repeat(200_000));
      else res.end('page');
    });
    const connections = pool();
    const conditional = { etag: '"v1"', lastModified: null };
    expect((await fetchPage(`${site.url}/same`, { ...open, connections, conditional })).status).toBe(304);
    await failure(fetchPage(`${site.url}/gone`, { ...open, connections }));
    expect((await fetchPage(`${site.url}/same`, { ...open, connections, conditional })).status).toBe(304);
    expect(site.connections.accepted).toBe(1);
    await failure(fetchPage(`${site.url}/huge`, { ...open, connections, retries: 0 }));
    await fetchPage(`${site.url}/page`, { ...open, connections });
    expect(site.connections.accepted).toBe(2);
  });

  test('a kept connection the site dropped is replaced at once, without spending a retry', async () => {
    const served = new WeakSet<object>();
    const site = await serve((req, res) => {
      // The second request on a connection finds it gone, as when a site closes an idle one.
      if (served.has(req.socket)) return void req.socket.destroy();
      served.add(req.socket);
      res.end('fresh');
    });
    const connections = pool();
    await fetchPage(site.url, { ...open, connections, retries: 0 });
    const page = await fetchPage(site.url, { ...open, connections, retries: 0 });
    expect(page.body.toString()).toBe('fresh');
    expect(site.connections.accepted).toBe(2);
  });

  test('a dropped connection that was new is a failure like any other', async () => {
    const site = await serve((req) => req.socket.destroy());
    const error = await failure(fetchPage(site.url, { ...open, connections: pool(), retries: 0 }));
    expect([error.code, error.retryable]).toEqual(['NETWORK_ERROR', true]);
    expect(site.connections.accepted).toBe(1);
  });

  test('close() ends the idle connections', async () => {
    const site = await serve((_req, res) => res.end('ok'));
    const connections = pool();
    await fetchPage(site.url, { ...open, connections });
    expect(site.connections.open).toBe(1);
    connections.close();
    await until(() => site.connections.open === 0);
    expect(site.connections.open).toBe(0);
  });
});

describe('a run’s kept-alive connections: outbound safety (private targets not allowed)', () => {
  const closed = { allowPrivate: false } as const;

  test('every new connection is checked: loopback, localhost and a name resolving to it are refused', async () => {
    const site = await serve((_req, res) => res.end('secret'));
    const connections = pool();
    const lookup = mapLookup({ 'public.test': '127.0.0.1' });
    const messages: string[] = [];
    for (const url of [site.url, `http://localhost:${site.port}/`, `http://public.test:${site.port}/`]) {
      const error = await failure(fetchPage(url, { ...closed, lookup, connections }));
      expect([error.code, error.retryable]).toEqual(['BLOCKED_TARGET', false]);
      messages.push(error.message);
    }
    expect(messages[2]).toMatch(/^public\.test /);
    expect(messages[2]).not.toContain('127.0.0.1');
    expect(site.connections.accepted).toBe(0);
  });

  test('a kept connection stays on the address it was checked on; a new one to a rebound name is refused', async () => {
    const site = await serve((_req, res) => res.end('public page'), PLAYS_PUBLIC);
    const calls: string[] = [];
    const lookup = mapLookup({ 'rebind.test': [PLAYS_PUBLIC, '127.0.0.1'] }, calls);
    const connections = pool();
    const url = `http://rebind.test:${site.port}/`;
    const options = { ...closed, lookup, connections };
    expect((await fetchPageWithPolicy(url, options, testPolicy)).body.toString()).toBe('public page');
    expect((await fetchPageWithPolicy(url, options, testPolicy)).body.toString()).toBe('public page');
    expect(calls).toEqual(['rebind.test']);
    connections.close();
    const error = await failure(fetchPageWithPolicy(url, options, testPolicy));
    expect(error.code).toBe('BLOCKED_TARGET');
    expect(calls).toEqual(['rebind.test', 'rebind.test']);
    expect(site.requests).toEqual(['/', '/']);
  });
});

function statusSequenceOnce(_req: IncomingMessage, res: ServerResponse, status: number): void {
  if (status === 429) res.writeHead(429, { 'retry-after': '1' }).end('slow down');
  else res.writeHead(status).end('ok');
}

function redirectChain(hops: number) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const match = /^\/hop\/(\d+)$/.exec(req.url ?? '');
    if (!match) {
      res.end('arrived');
      return;
    }
    const next = Number(match[1]) + 1;
    res.writeHead(302, { location: next < hops ? `/hop/${next}` : '/final' }).end();
  };
}
