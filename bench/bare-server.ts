/**
 * The ceiling for bench/api.ts: a bare Express 5 app (the same express the API uses) with one
 * route, `GET /bare`, answering the JSON payload read from the file given as the first
 * argument. The payload is serialised on every request, as the API does, but there is no
 * auth, no rate limit, no database, no Redis and no logging.
 * Run: `node bench/bare-server.ts <payload.json> [port]`; prints `listening <port>` once ready.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Request, Response } from 'express';

// Express is a dependency of apps/api, not of the workspace root: load that very copy.
const requireFromApi = createRequire(new URL('../apps/api/package.json', import.meta.url));
const express = requireFromApi('express') as typeof import('express');

const [payloadFile, portArg] = process.argv.slice(2);
if (!payloadFile) {
  console.error('usage: node bench/bare-server.ts <payload.json> [port]');
  process.exit(2);
}
const payload: unknown = JSON.parse(readFileSync(payloadFile, 'utf8'));

const app = express();
app.disable('x-powered-by');
app.get('/bare', (_req: Request, res: Response) => {
  res.json(payload);
});

const server = app.listen(Number(portArg ?? 0), '127.0.0.1', () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`);
});
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => server.close(() => process.exit(0)));
