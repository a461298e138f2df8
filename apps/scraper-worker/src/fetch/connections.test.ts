import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, test } from '@jest/globals';
import { mapLookup, startServer, type TestServer } from '../../../../test/support/fetch-servers.ts';
import { addressPolicy } from './address.ts';
import { ConnectionPool } from './connections.ts';
import { FetchError } from './errors.ts';
import { fetchPage, fetchPageWithPolicy } from './fetch-page.ts';

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

async function failure(promise: Promise<unknown>): Promise<FetchError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof FetchError)) throw new Error(`expected a FetchError, got ${String(error)}`);
  return error;
}

const until = async (done: () => boolean) => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
};

const open = { allowPrivate: true } as const;
const PLAYS_PUBLIC = '127.0.0.2';
const testPolicy = (ip: string) => ip === PLAYS_PUBLIC || addressPolicy(false)(ip);

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
