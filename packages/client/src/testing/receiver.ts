import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { until } from '../../../../test/support/processes.ts';

export interface Hit {
  headers: IncomingHttpHeaders;
  /** The body exactly as received. */
  raw: Buffer;
}

/** A local webhook endpoint that records every request and answers `status()` (200 unless changed). */
export async function startReceiver() {
  const hits: Hit[] = [];
  let status = 200;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ headers: req.headers, raw: Buffer.concat(chunks) });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits,
    answer(code: number) {
      status = code;
    },
    waitFor: (n: number) => until(async () => hits.length >= n, 15_000, 20),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
