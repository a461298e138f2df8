import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Resolve } from '@scrapejobs/outbound';
import { WebhookPoster } from './http-post.ts';

// Only loopback servers of this test; names resolve through a test resolver, never real DNS.
// Metadata and other non-loopback targets are tested as address strings only (packages/outbound),
// so that a bug could never send traffic off the machine.
const hits: string[] = [];
let port: number;
const server = createServer((req, res) => {
  hits.push(req.url ?? '');
  req.resume();
  req.on('end', () => {
    if (req.url === '/slow') setTimeout(() => res.end('late'), 400);
    else if (req.url === '/redirect') res.writeHead(307, { Location: '/ok' }).end();
    else res.writeHead(204).end();
  });
});
const resolve: Resolve = async (hostname) => {
  if (hostname === 'receiver.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};
const poster = (allowPrivate: boolean, timeoutMs = 1_000) =>
  new WebhookPoster({ allowPrivate, timeoutMs, maxSockets: 4, resolve });

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  hits.length = 0;
});

describe('WebhookPoster', () => {
  it('posts to an allowed target, by address or by a name resolved to it', async () => {
    const p = poster(true);
    expect(await p.post(`http://127.0.0.1:${port}/ok`, '{}', {})).toEqual(
      expect.objectContaining({ statusCode: 204, error: null }),
    );
    expect((await p.post(`http://receiver.test:${port}/ok`, '{}', {})).statusCode).toBe(204);
    expect(hits).toEqual(['/ok', '/ok']);
    p.close();
  });

  it('refuses loopback unless private targets are allowed, before connecting, however it is named', async () => {
    const p = poster(false);
    for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]', 'receiver.test']) {
      const result = await p.post(`http://${host}:${port}/ok`, '{}', {});
      expect(result).toEqual(
        expect.objectContaining({
          statusCode: null,
          error: expect.stringMatching(/^blocked target: .*private/),
        }),
      );
    }
    expect(hits).toEqual([]);
    p.close();
  });

  it('does not follow redirects, and gives up on an answer later than the timeout', async () => {
    const p = poster(true, 150);
    expect(await p.post(`http://127.0.0.1:${port}/redirect`, '{}', {})).toEqual(
      expect.objectContaining({ statusCode: 307, error: 'redirect not followed' }),
    );
    const late = await p.post(`http://127.0.0.1:${port}/slow`, '{}', {});
    expect(late).toEqual(expect.objectContaining({ statusCode: null, error: 'no answer within 150 ms' }));
    expect(late.durationMs).toBeGreaterThanOrEqual(145);
    expect(hits).toEqual(['/redirect', '/slow']);
    p.close();
  });
});
